// Holds docs/contract.md §3 OAuth 2.0 and §2: wrong secrets throttled.

package test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestWrongSecretsSlowDownOnlyTheirSource: an attacker who knows the company
// UUID and a client id sends wrong secrets without pause; the practice's
// device and its integrator, at other addresses behind the same ingress,
// keep uploading and getting tokens. The attacker is slowed down.
func TestWrongSecretsSlowDownOnlyTheirSource(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, "PRAXIS_AUTH_MAX_FAILURES=3", "PRAXIS_AUTH_LOCKOUT=1m", "PRAXIS_TRUSTED_PROXIES=127.0.0.1/32, ::1")
		c := s.newCompany(t, 1<<20)
		customer := s.newCustomer(t, c)
		cl := s.newClient(t, c, "company:read")
		const attacker, device, integrator = "203.0.113.9", "198.51.100.7", "198.51.100.8"
		upload := func(from, secret string) uploadReply {
			h := gdtHeaders(c, customer)
			h["x-gdt-secret"], h["X-Forwarded-For"] = secret, "10.9.8.7, "+from // the left entry is whatever a client claims
			return s.upload(t, "/api/gdt/upload", h, filePart("befund.pdf", pdfOfSize(100)))
		}
		token := func(from, secret string) reply {
			cred := cl
			cred.Secret = secret
			return s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cred),
				"X-Forwarded-For: "+from)
		}
		for round := range 12 {
			wantUpload, wantToken := 400, 401
			if round >= 3 {
				wantUpload, wantToken = 429, 429
			}
			if r := upload(attacker, "wrong"); r.status != wantUpload {
				t.Fatalf("round %d: the attacker's upload %d %q, want %d", round, r.status, r.Message, wantUpload)
			}
			if r := token(attacker, "wrong"); r.status != wantToken {
				t.Fatalf("round %d: the attacker's token request %d, want %d", round, r.status, wantToken)
			}
			if r := upload(device, c.Secret); r.status != 200 {
				t.Fatalf("round %d: the practice's device was refused: %d %q", round, r.status, r.Message)
			}
			if r := token(integrator, cl.Secret); r.status != 200 {
				t.Fatalf("round %d: the practice's integrator was refused: %d %s", round, r.status, r.body)
			}
		}
		// The locked source is refused even with the right secret: guessing stays slow.
		if r := upload(attacker, c.Secret); r.status != 429 {
			t.Errorf("the locked source with the right secret: %d", r.status)
		}
	})
}

// TestForwardedForIsIgnoredFromUntrustedPeers: without trusted proxies a
// client cannot dodge the count by claiming other addresses.
func TestForwardedForIsIgnoredFromUntrustedPeers(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0], "PRAXIS_AUTH_MAX_FAILURES=3", "PRAXIS_AUTH_LOCKOUT=1m")
	c := s.newCompany(t, 1<<20)
	customer := s.newCustomer(t, c)
	for i := range 5 {
		h := gdtHeaders(c, customer)
		h["x-gdt-secret"], h["X-Forwarded-For"] = "wrong", fmt.Sprintf("203.0.113.%d", i)
		r := s.upload(t, "/api/gdt/upload", h, filePart("befund.pdf", pdfOfSize(100)))
		if want := map[bool]int{true: 400, false: 429}[i < 3]; r.status != want {
			t.Errorf("attempt %d claiming another address: %d, want %d", i, r.status, want)
		}
	}
}

// TestUploadsWorkWithoutRedis: throttling fails open when Redis cannot be
// reached — uploads need no token — and the gap is counted in /metrics.
func TestUploadsWorkWithoutRedis(t *testing.T) {
	t.Parallel()
	redis, s, c, customer := serverWithOwnRedis(t)
	redis.kill()
	if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), filePart("befund.pdf", pdfOfSize(100))); r.status != 200 {
		t.Fatalf("upload without Redis: %d %q", r.status, r.Message)
	}
	h := gdtHeaders(c, customer)
	h["x-gdt-secret"] = "wrong"
	if r := s.upload(t, "/api/gdt/upload", h, filePart("befund.pdf", pdfOfSize(100))); r.status != 400 || r.Message != "Secret not valid." {
		t.Errorf("a wrong secret without Redis: %d %q", r.status, r.Message)
	}
	if metrics := s.requestUndocumented(t, http.MethodGet, "/metrics", "", ""); !strings.Contains(string(metrics.body), "praxis_throttle_unavailable_total") {
		t.Error("/metrics does not count the throttling gap")
	}
	if !strings.Contains(s.log.String(), "throttling unavailable, failing open") {
		t.Error("no log line tells of the throttling gap")
	}
}
