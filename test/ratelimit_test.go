// Holds docs/contract.md §4 The resource API: rate limits.

package test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
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

// TestCompanyShare: a practice has at most its share of a replica running at
// once — by default half the database pool, at least 2 (here 2): of many requests of
// one practice at once some are refused 429 company-busy with Retry-After
// 1, while another practice's requests all pass; a bridge's long polls
// hold no slot while they wait.
func TestCompanyShare(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, "PRAXIS_DATABASE_MAX_CONNS=2", "PRAXIS_COMPANY_CONCURRENCY=0", unlimitedRates)
		busy := newPractice(t, s)
		quiet := s.newCompany(t, 1<<20)
		quietToken := s.tokenFor(t, s.newClient(t, quiet, ""))

		// Three long polls of the busy practice's device wait while it works.
		cred := s.request(t, http.MethodPost, resource+"devices/"+busy.device+"/credential", "", "", busy.auth)
		if cred.status != http.StatusOK {
			t.Fatalf("credential: %d %s", cred.status, cred.body)
		}
		bridge := s.tokenFor(t, oauthClient{ID: cred.decode(t)["client_id"].(string), Secret: cred.decode(t)["client_secret"].(string)})
		var polls sync.WaitGroup
		for range 3 {
			polls.Go(func() {
				if r := s.request(t, http.MethodGet, resource+"device-outbox?wait=2", "", "", "Authorization: Bearer "+bridge); r.status != http.StatusOK {
					t.Errorf("long poll: %d %s", r.status, r.body)
				}
			})
		}
		time.Sleep(300 * time.Millisecond) // the polls are waiting
		if r := busy.get(t, "company"); r.status != http.StatusOK {
			t.Errorf("a request beside three long polls of a share of 2: %d %s", r.status, r.body)
		}

		refused, quietAnswers := 0, 0
		for round := 0; round < 20 && refused == 0; round++ {
			start := make(chan struct{})
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range 40 {
				wg.Go(func() {
					<-start
					r := busy.get(t, "customers?limit=100")
					if r.status == http.StatusOK {
						return
					}
					mu.Lock()
					defer mu.Unlock()
					refused++
					if r.status != http.StatusTooManyRequests || r.decode(t)["type"] != "company-busy" || r.header.Get("Retry-After") != "1" {
						t.Errorf("beyond the share: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
					}
				})
			}
			wg.Go(func() {
				<-start
				for range 5 {
					r := s.getCompany(t, quietToken)
					if r.status != http.StatusOK {
						t.Errorf("the quiet practice beside a busy one: %d %s", r.status, r.body)
					}
					mu.Lock()
					quietAnswers++
					mu.Unlock()
				}
			})
			close(start)
			wg.Wait()
		}
		polls.Wait()
		if refused == 0 {
			t.Error("20 rounds of 40 requests at once, none refused: the share does not hold")
		}
		t.Logf("refused %d of the busy practice's requests; the quiet practice's %d all answered", refused, quietAnswers)
	})
}
