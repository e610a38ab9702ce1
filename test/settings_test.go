// Holds docs/contract.md §13 The settings pages.

package test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/test/testenv"
)

// pageClient is a browser without a browser: it keeps the settings' cookies
// (Go's cookie jar refuses Secure cookies over http://localhost) and the
// page's CSRF token.
type pageClient struct {
	t       *testing.T
	site    string
	cookies map[string]string
	csrf    string
	from    string // X-Forwarded-For, behind a trusted proxy
}

// settingsAddr is a free loopback address for a server and the public URL
// its settings pages are reached at: localhost on that port (passkeys
// refuse an IP address as their relying party).
func settingsAddr(t *testing.T) (addr, site string) {
	addr = testenv.FreeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	return addr, "http://localhost:" + port
}

// invite has the operator invite email to c's settings pages as an admin
// and answers the one-time link's path under site.
func (s *server) invite(t *testing.T, c company, site, email string) string {
	t.Helper()
	var inv struct {
		Link string `json:"link"`
	}
	s.praxis(t, &inv, "admin", "staff", "invite", "--company", c.ID, "--email", email, "--role", "admin", "--json")
	path, ok := strings.CutPrefix(inv.Link, site)
	if !ok || !strings.HasPrefix(path, "/settings/join/"+c.ID+"/") {
		t.Fatalf("invitation link %q", inv.Link)
	}
	return path
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

func (p *pageClient) do(method, path, contentType, body string) (int, http.Header, string) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.site+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if p.from != "" {
		req.Header.Set("X-Forwarded-For", p.from)
	}
	if p.csrf != "" {
		req.Header.Set("X-CSRF-Token", p.csrf)
	}
	var jar []string
	for k, v := range p.cookies {
		jar = append(jar, k+"="+v)
	}
	req.Header.Set("Cookie", strings.Join(jar, "; "))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, c := range resp.Cookies() {
		p.cookies[c.Name] = c.Value
	}
	if m := csrfMeta.FindSubmatch(b); m != nil {
		p.csrf = string(m[1])
	}
	return resp.StatusCode, resp.Header, string(b)
}

// TestSettingsSignInIsThrottled: failed passkey sign-ins from one address
// lock it out for a while (429 with Retry-After), on every replica's store.
func TestSettingsSignInIsThrottled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be backend) {
		addr, site := settingsAddr(t)
		startServerAt(t, be, addr, "PRAXIS_PUBLIC_URL="+site, "PRAXIS_AUTH_MAX_FAILURES=3")
		p := &pageClient{t: t, site: site, cookies: map[string]string{}}
		if code, _, _ := p.do(http.MethodGet, "/settings/signin", "", ""); code != http.StatusOK || p.csrf == "" {
			t.Fatalf("sign-in page: %d, token %q", code, p.csrf)
		}
		forged := `{"credential":{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AAAA","signature":"AAAA","userHandle":"AAAA"}}}`
		for i := range 3 {
			if code, _, body := p.do(http.MethodPost, "/settings/signin/begin", "application/json", "{}"); code != http.StatusOK || !strings.Contains(body, "challenge") {
				t.Fatalf("attempt %d: begin %d %s", i, code, body)
			}
			if code, _, body := p.do(http.MethodPost, "/settings/signin/finish", "application/json", forged); code != http.StatusUnauthorized {
				t.Fatalf("attempt %d: a forged assertion: %d %s, want 401", i, code, body)
			}
		}
		code, header, _ := p.do(http.MethodPost, "/settings/signin/begin", "application/json", "{}")
		if code != http.StatusTooManyRequests || header.Get("Retry-After") == "" {
			t.Errorf("after 3 failures: %d, Retry-After %q; want 429 with Retry-After", code, header.Get("Retry-After"))
		}
		// Without the CSRF token even the ceremony's start is refused.
		p.csrf = ""
		if code, _, _ := p.do(http.MethodPost, "/settings/signin/begin", "application/json", "{}"); code != http.StatusForbidden {
			t.Errorf("begin without a CSRF token: %d, want 403", code)
		}
	})
}

// TestSettingsAccountIsThrottled: failed sign-ins naming one account, each
// from another address, lock that account (429) while the addresses, and
// a sign-in naming no account, are still answered.
func TestSettingsAccountIsThrottled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be backend) {
		addr, site := settingsAddr(t)
		s := startServerAt(t, be, addr, "PRAXIS_PUBLIC_URL="+site, "PRAXIS_AUTH_MAX_FAILURES=3", "PRAXIS_TRUSTED_PROXIES=127.0.0.1/32")
		c := s.newCompany(t, 1<<20)
		path := s.invite(t, c, site, "locked@praxis.example")
		join := &pageClient{t: t, site: site, cookies: map[string]string{}}
		join.do(http.MethodGet, path, "", "")
		if code, _, _ := join.do(http.MethodPost, path+"/begin", "application/json", "{}"); code != http.StatusOK {
			t.Fatalf("join: %d", code) // the account exists from here on
		}
		var member string
		if err := s.openDB(t).NewRaw("SELECT id FROM staff_members WHERE email = ?", "locked@praxis.example").Scan(context.Background(), &member); err != nil {
			t.Fatal(err)
		}
		companyID, memberID := uuid.MustParse(c.ID), uuid.MustParse(member)
		handle := base64.RawURLEncoding.EncodeToString(append(companyID[:], memberID[:]...))
		forged := func(userHandle string) string {
			return `{"credential":{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{"clientDataJSON":"e30",` +
				`"authenticatorData":"AAAA","signature":"AAAA","userHandle":"` + userHandle + `"}}}`
		}
		try := func(from, userHandle string) int {
			p := &pageClient{t: t, site: site, cookies: map[string]string{}, from: from}
			p.do(http.MethodGet, "/settings/signin", "", "")
			if code, _, _ := p.do(http.MethodPost, "/settings/signin/begin", "application/json", "{}"); code != http.StatusOK {
				return code
			}
			code, _, _ := p.do(http.MethodPost, "/settings/signin/finish", "application/json", forged(userHandle))
			return code
		}
		for i := range 3 {
			if code := try(fmt.Sprintf("203.0.113.%d", i+1), handle); code != http.StatusUnauthorized {
				t.Fatalf("attempt %d naming the account: %d, want 401", i, code)
			}
		}
		if code := try("203.0.113.9", handle); code != http.StatusTooManyRequests {
			t.Errorf("a fourth address naming the locked account: %d, want 429", code)
		}
		if code := try("203.0.113.10", "AAAA"); code != http.StatusUnauthorized {
			t.Errorf("an address naming no account: %d, want 401 (only the account is locked)", code)
		}
	})
}
