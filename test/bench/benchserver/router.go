package benchserver

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// Router picks replicas as an ingress does: the next one, round robin,
// whose /readyz answered 200 when last asked (every 20 ms while Watch runs).
type Router struct {
	mu    sync.Mutex
	urls  []string
	ready []bool
	next  int
}

// NewRouter routes to the replicas at urls, none ready until Watch has asked.
func NewRouter(urls ...string) *Router {
	return &Router{urls: urls, ready: make([]bool, len(urls))}
}

// Watch asks every replica's /readyz until ctx ends.
func (r *Router) Watch(ctx context.Context) {
	for ctx.Err() == nil {
		for i := range r.ready {
			r.mu.Lock()
			u := r.urls[i]
			r.mu.Unlock()
			ok := false
			if resp, err := http.Get(u + "/readyz"); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				ok = resp.StatusCode == http.StatusOK
			}
			r.mu.Lock()
			r.ready[i] = ok
			r.mu.Unlock()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Pick answers the next ready replica's URL; false when none is ready.
func (r *Router) Pick() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for range r.urls {
		i := r.next % len(r.urls)
		r.next++
		if r.ready[i] {
			return r.urls[i], true
		}
	}
	return "", false
}

// Replace puts a replica started again (on the same or another address) in place i.
func (r *Router) Replace(i int, url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.urls[i] = url
}
