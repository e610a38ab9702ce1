// Helpers: the mixed load of the drills.

package test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mixedLoad is a steady load on base (a replica, or a balancer in front of
// several): reads, creates and uploads each with an Idempotency-Key, and
// tokens, from workers that retry what the API marks retryable (503, 429,
// 502 from a balancer, a broken connection) with the same key, as a
// well-behaved client does, for at most patience. It remembers every create
// and upload answered 2xx and when, and every status a request got.
type mixedLoad struct {
	t        *testing.T
	base     string
	patience time.Duration
	start    time.Time

	// What it writes to: a practice (creates), a practice with room for
	// uploads, and a client for the tokens.
	p             practice
	roomy         company
	roomyCustomer int64
	roomyAuth     string

	ops, failures, retries atomic.Int64
	mu                     sync.Mutex
	created, uploaded      []string
	writes                 []time.Duration // when each create or upload was answered 2xx, since start
	statuses               map[int]int     // every answer, retried ones included (0: no answer)

	stop func()
	wg   sync.WaitGroup
	once sync.Once
}

// startMixedLoad makes its practices on s and runs workers against base
// until halted.
func startMixedLoad(t *testing.T, s *server, base string, patience time.Duration, workers int) *mixedLoad {
	t.Helper()
	l := &mixedLoad{t: t, base: base, patience: patience, statuses: map[int]int{}}
	l.p = newPractice(t, s)
	cl := s.newClient(t, l.p.company, "company:read")
	l.roomy = s.newCompany(t, 1<<30)
	l.roomyCustomer = s.newCustomer(t, l.roomy)
	l.roomyAuth = "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, l.roomy, ""))
	p, roomy, roomyCustomer := l.p, l.roomy, l.roomyCustomer
	l.start = time.Now()
	pdf, pdfType := multipartBody(t, filePart("befund.pdf", pdfOfSize(20_000)))
	ctx, stop := context.WithCancel(context.Background())
	l.stop = stop
	t.Cleanup(l.halt) // a test that failed halfway stops its load too
	for w := range workers {
		l.wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				l.ops.Add(1)
				var status int
				var body string
				switch i % 4 {
				case 0:
					status, body = l.call(http.MethodGet, resource+"customers?limit=20", "", p.auth)
				case 1:
					key := fmt.Sprintf("load-%d-%d", w, i)
					status, body = l.call(http.MethodPost, resource+"customers", `{"first_name":"Steady","last_name":"Load","birth_date":"1980-01-01"}`,
						p.auth, "Content-Type: application/json", "Idempotency-Key: "+key)
					if status == http.StatusCreated {
						if _, rest, ok := strings.Cut(body, `"id":`); ok {
							id, _, _ := strings.Cut(rest, ",")
							l.wrote(&l.created, id)
						}
					}
				case 2:
					status, body = l.call(http.MethodPost, "/api/oauth/v2/token", form("grant_type", "client_credentials"), basic(cl),
						"Content-Type: "+formType)
				case 3:
					// A device's upload, retried as the bridge does: with its key.
					key := fmt.Sprintf("load-upload-%d-%d", w, i)
					status, body = l.call(http.MethodPost, "/api/gdt/upload", string(pdf), "Content-Type: "+pdfType,
						"x-gdt-company: "+roomy.ID, fmt.Sprintf("x-gdt-customer: %d", roomyCustomer), "x-gdt-secret: "+roomy.Secret,
						"Idempotency-Key: "+key)
					if status == http.StatusOK {
						if _, rest, ok := strings.Cut(body, `"id":"`); ok {
							id, _, _ := strings.Cut(rest, `"`)
							l.wrote(&l.uploaded, id)
						}
					}
				}
				if status < 200 || status > 299 {
					l.failures.Add(1)
					t.Errorf("op %d of worker %d: %d %s", i, w, status, body)
				}
			}
		})
	}
	return l
}

func (l *mixedLoad) wrote(list *[]string, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*list = append(*list, id)
	l.writes = append(l.writes, time.Since(l.start))
}

// call sends one request, again while the answer says to retry, within patience.
func (l *mixedLoad) call(method, path, body string, headers ...string) (int, string) {
	client := &http.Client{Timeout: 30 * time.Second}
	t0 := time.Now()
	for {
		req, _ := http.NewRequest(method, l.base+path, strings.NewReader(body))
		for _, h := range headers {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		status, answer := 0, ""
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			status, answer = resp.StatusCode, string(b)
		}
		l.mu.Lock()
		l.statuses[status]++
		l.mu.Unlock()
		retryable := err != nil || status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests || status == http.StatusBadGateway
		if !retryable || time.Since(t0) > l.patience {
			return status, answer
		}
		l.retries.Add(1)
		time.Sleep(100 * time.Millisecond)
	}
}

// halt stops the workers and waits for them.
func (l *mixedLoad) halt() {
	l.once.Do(func() {
		l.stop()
		l.wg.Wait()
	})
}

// firstWriteAfter is how long after at (since start) the first create or
// upload was answered 2xx; -1 when none was.
func (l *mixedLoad) firstWriteAfter(at time.Duration) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.writes {
		if w >= at {
			return w - at
		}
	}
	return -1
}

// writeGap is the longest time between two answered writes after from.
func (l *mixedLoad) writeGap(from time.Duration) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	gap, last := time.Duration(0), from
	for _, w := range l.writes {
		if w < from {
			continue
		}
		gap, last = max(gap, w-last), w
	}
	return gap
}

// verify checks that every create and upload answered 2xx is stored, and
// nothing twice: the store holds as many as were answered (the practice's
// customers: and its first patient).
func (l *mixedLoad) verify(t *testing.T, s *server) {
	t.Helper()
	p, roomy, roomyAuth, seeded := l.p, l.roomy, l.roomyAuth, 1
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.created) < 10 || len(l.uploaded) < 10 {
		t.Fatalf("only %d creates and %d uploads answered: the load did not run", len(l.created), len(l.uploaded))
	}
	for _, id := range l.uploaded {
		if r := s.request(t, http.MethodGet, resource+"files/"+id, "", "", roomyAuth); r.status != http.StatusOK {
			t.Errorf("file %s, answered 200, is lost: %d", id, r.status)
		}
	}
	for _, id := range l.created {
		if r := p.get(t, "customers/"+id); r.status != http.StatusOK {
			t.Errorf("customer %s, answered 201, is lost: %d", id, r.status)
		}
	}
	db := s.openDB(t)
	defer func() { _ = db.Close() }()
	var n int
	if err := db.NewRaw("SELECT count(*) FROM customers WHERE company_id = ?", p.company.ID).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	if n != len(l.created)+seeded {
		t.Errorf("%d customers stored, %d creates answered (+%d seeded): a retried key made a second, or a write was lost", n, len(l.created), seeded)
	}
	if err := db.NewRaw("SELECT count(*) FROM files WHERE company_id = ?", roomy.ID).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	if n != len(l.uploaded) {
		t.Errorf("%d files stored, %d uploads answered: a retried upload stored a second, or one was lost", n, len(l.uploaded))
	}
}

func (l *mixedLoad) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%d operations, %d retries, %d failures, %d creates, %d uploads; answers %v",
		l.ops.Load(), l.retries.Load(), l.failures.Load(), len(l.created), len(l.uploaded), l.statuses)
}
