// Holds docs/contract.md §5 Operations: rolling restarts and a kill -9.

package test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
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

// frontOf serves a balancer in front of replicas and answers it and its URL.
func frontOf(t *testing.T, replicas ...*server) (*balancer, string) {
	t.Helper()
	urls := make([]string, len(replicas))
	for i, r := range replicas {
		urls[i] = r.url
	}
	lb := &balancer{benchserver.NewRouter(urls...)}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go lb.Watch(ctx)
	front := &http.Server{Handler: lb, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = front.Serve(ln) }()
	t.Cleanup(func() { _ = front.Close() })
	return lb, "http://" + ln.Addr().String()
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
	lb, base := frontOf(t, replicas...)

	load := startMixedLoad(t, first, base, 2*time.Second, 4)

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
	err := <-victim.exited
	victim.exited <- err
	time.Sleep(500 * time.Millisecond)
	again := &server{blobDir: victim.blobDir, dbURL: victim.dbURL, env: victim.env, log: victim.log}
	again.launch(t, strings.TrimPrefix(victim.url, "http://"))
	lb.Replace(1, again.url)
	replicas[1] = again
	time.Sleep(500 * time.Millisecond)
	load.halt()
	t.Logf("3 rolling restarts and a kill -9: %s", load)
	load.verify(t, first)
}
