// Holds docs/contract.md §4 The resource API: rate limits.

package test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRateLimits: every answer after the bearer check carries the IETF
// RateLimit fields; past the plan's limit the client gets 429 with
// Retry-After; replicas share one budget; another client has its own.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, "PRAXIS_RATE_LIMITS=basic=4/m,pro=6/m,enterprise=8/m")
		servers := []*server{s, s}
		if b.name == "postgres" {
			servers[1] = s.replica(t)
		}
		c := s.newCompany(t, 1<<20) // the basic plan
		token, other := s.tokenFor(t, s.newClient(t, c, "")), s.tokenFor(t, s.newClient(t, c, ""))
		// The limiter's windows are fixed, aligned to the Unix clock: all
		// the requests below must fall into one, so start well inside one.
		if left := time.Minute - time.Duration(time.Now().UnixNano())%time.Minute; left < 15*time.Second {
			time.Sleep(left + 100*time.Millisecond)
		}
		paths := []string{"/api/oauth/v2/resource/company", "/api/oauth/v2/resource/notes", "/api/oauth/v2/resource/notes/019cd6cf-68f8-70c6-a6a3-a4506513270e"}
		for i := range 4 {
			r := servers[i%2].request(t, http.MethodGet, paths[i%3], "", "", "Authorization: Bearer "+token)
			if r.status == http.StatusTooManyRequests {
				t.Fatalf("request %d refused", i+1)
			}
			if policy := r.header.Get("RateLimit-Policy"); policy != `"default";q=4;w=60` {
				t.Errorf("request %d: RateLimit-Policy %q", i+1, policy)
			}
			if rl := r.header.Get("RateLimit"); !strings.HasPrefix(rl, `"default";r=`+strconv.Itoa(3-i)+";t=") {
				t.Errorf("request %d: RateLimit %q, want r=%d", i+1, rl, 3-i)
			}
		}
		for _, srv := range servers {
			r := srv.request(t, http.MethodGet, paths[0], "", "", "Authorization: Bearer "+token)
			if r.status != http.StatusTooManyRequests || r.header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("past the limit: %d %s", r.status, r.body)
			}
			if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 || n > 60 {
				t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
			}
		}
		if r := s.getCompany(t, other); r.status != 200 || !strings.HasPrefix(r.header.Get("RateLimit"), `"default";r=3;t=`) {
			t.Errorf("another client: %d %q", r.status, r.header.Get("RateLimit"))
		}
	})
}
