package test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/praxis-health/praxis/test/bench/benchserver"
)

// balancer is what an ingress does in front of the replicas: it sends a
// request to the next replica whose /readyz answers 200, and tries another
// when a connection cannot be made (nothing reached a server then).
type balancer struct{ *benchserver.Router }

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for range 3 {
		target, ok := b.Pick()
		if !ok {
			break
		}
		u, _ := url.Parse(target)
		refused := false
		proxy := httputil.NewSingleHostReverseProxy(u)
		proxy.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
			if strings.Contains(err.Error(), "connection refused") {
				refused = true // never reached a server: the next replica may take it
				return
			}
			w.WriteHeader(http.StatusBadGateway)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
		if !refused {
			return
		}
	}
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
}

// TestRollingRestartLosesNothing: three replicas on PostgreSQL and Redis
// behind a balancer that follows /readyz, under a steady load of reads,
// creates (each with an Idempotency-Key) and tokens, are restarted one at
// a time with SIGTERM. A client that retries what the API marks retryable
// (503, 429, 502 from the balancer, a broken connection — with the same key)
// sees no failure, and every create that was answered 2xx is there after.
// Then one replica is killed (-9) under the load: nothing answered is lost,
// and nothing retried is made twice.
func TestRollingRestartLosesNothing(t *testing.T) {
	t.Parallel()
	first := startServer(t, backends[1], "PRAXIS_SHUTDOWN_DELAY=1s", "PRAXIS_SHUTDOWN_GRACE=10s",
		unlimitedRates)
	replicas := []*server{first, first.replica(t), first.replica(t)}
	lb := &balancer{benchserver.NewRouter(replicas[0].url, replicas[1].url, replicas[2].url)}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go lb.Watch(ctx)
	front := &http.Server{Handler: lb, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = front.Serve(ln) }()
	t.Cleanup(func() { _ = front.Close() })
	base := "http://" + ln.Addr().String()

	p := newPractice(t, first)
	cl := first.newClient(t, p.company, "company:read")
	var ops, failures, retries atomic.Int64
	var mu sync.Mutex
	var created, uploaded []string
	pdf, pdfType := multipartBody(t, filePart("befund.pdf", pdfOfSize(20_000)))
	// The uploads go to a practice with room for them.
	roomy := first.newCompany(t, 1<<30)
	roomyCustomer := first.newCustomer(t, roomy)
	roomyAuth := "Authorization: Bearer " + first.tokenFor(t, first.newClient(t, roomy, ""))
	call := func(method, path, body string, headers ...string) (int, string) {
		for attempt := 0; ; attempt++ {
			req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
			for _, h := range headers {
				k, v, _ := strings.Cut(h, ": ")
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			status, answer := 0, ""
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				status, answer = resp.StatusCode, string(b)
			}
			retryable := err != nil || status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests || status == http.StatusBadGateway
			if !retryable || attempt == 20 {
				return status, answer
			}
			retries.Add(1)
			time.Sleep(100 * time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	loadCtx, stopLoad := context.WithCancel(ctx)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; loadCtx.Err() == nil; i++ {
				ops.Add(1)
				var status int
				var body string
				switch i % 4 {
				case 0:
					status, body = call(http.MethodGet, resource+"customers?limit=20", "", p.auth)
				case 1:
					key := fmt.Sprintf("roll-%d-%d", w, i)
					status, body = call(http.MethodPost, resource+"customers", `{"first_name":"Rolling","last_name":"Restart","birth_date":"1980-01-01"}`,
						p.auth, "Content-Type: application/json", "Idempotency-Key: "+key)
					if status == http.StatusCreated {
						if _, rest, ok := strings.Cut(body, `"id":`); ok {
							id, _, _ := strings.Cut(rest, ",")
							mu.Lock()
							created = append(created, id)
							mu.Unlock()
						}
					}
				case 3:
					// A device's upload, retried as the bridge does: with its key.
					key := fmt.Sprintf("roll-upload-%d-%d", w, i)
					status, body = call(http.MethodPost, "/api/gdt/upload", string(pdf), "Content-Type: "+pdfType,
						"x-gdt-company: "+roomy.ID, fmt.Sprintf("x-gdt-customer: %d", roomyCustomer), "x-gdt-secret: "+roomy.Secret,
						"Idempotency-Key: "+key)
					if status == http.StatusOK {
						if _, rest, ok := strings.Cut(body, `"id":"`); ok {
							id, _, _ := strings.Cut(rest, `"`)
							mu.Lock()
							uploaded = append(uploaded, id)
							mu.Unlock()
						}
					}
				case 2:
					status, body = call(http.MethodPost, "/api/oauth/v2/token", form("grant_type", "client_credentials"), basic(cl),
						"Content-Type: "+formType)
				}
				if status < 200 || status > 299 {
					failures.Add(1)
					t.Errorf("op %d of worker %d: %d %s", i, w, status, body)
				}
			}
		})
	}

	time.Sleep(time.Second)
	for i, r := range replicas {
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-r.exited:
			r.exited <- err // the cleanup reads it again
			if err != nil {
				t.Errorf("replica %d on SIGTERM: %v", i, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("replica %d did not stop", i)
		}
		again := &server{blobDir: r.blobDir, dbURL: r.dbURL, env: r.env, log: r.log}
		again.launch(t, strings.TrimPrefix(r.url, "http://"))
		lb.Replace(i, again.url)
		replicas[i] = again
		time.Sleep(500 * time.Millisecond)
	}
	// kill -9 of one replica under the same load: what it answered 2xx is
	// kept; what it did not answer, the client sends again with its key.
	victim := replicas[1]
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err = <-victim.exited
	victim.exited <- err
	time.Sleep(500 * time.Millisecond)
	again := &server{blobDir: victim.blobDir, dbURL: victim.dbURL, env: victim.env, log: victim.log}
	again.launch(t, strings.TrimPrefix(victim.url, "http://"))
	lb.Replace(1, again.url)
	replicas[1] = again
	time.Sleep(500 * time.Millisecond)
	stopLoad()
	wg.Wait()

	t.Logf("%d operations during 3 rolling restarts and a kill -9, %d retries, %d failures, %d creates, %d uploads",
		ops.Load(), retries.Load(), failures.Load(), len(created), len(uploaded))
	if len(created) < 10 || len(uploaded) < 10 {
		t.Fatalf("only %d creates and %d uploads answered: the load did not run", len(created), len(uploaded))
	}
	for _, id := range uploaded {
		if r := first.request(t, http.MethodGet, resource+"files/"+id, "", "", roomyAuth); r.status != http.StatusOK {
			t.Errorf("file %s, answered 200, is lost: %d", id, r.status)
		}
	}
	for _, id := range created {
		if r := p.get(t, "customers/"+id); r.status != http.StatusOK {
			t.Errorf("customer %s, answered 201, is lost: %d", id, r.status)
		}
	}
	// Nor was anything made twice: a key retried after the kill replayed.
	var n int
	if err := first.openDB(t).NewRaw("SELECT count(*) FROM customers WHERE company_id = ?", p.company.ID).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	if n != len(created)+1 { // and the practice's first patient
		t.Errorf("%d customers stored, %d creates answered (+1 seeded): a retried key made a second", n, len(created))
	}
	if err := first.openDB(t).NewRaw("SELECT count(*) FROM files WHERE company_id = ?", roomy.ID).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	if n != len(uploaded) {
		t.Errorf("%d files stored, %d uploads answered: a retried upload stored a second", n, len(uploaded))
	}
}
