package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	webhookout "github.com/praxis-health/praxis/adapters/webhook"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// hosts answers names from a table, counting lookups: a stand-in for DNS.
type hosts struct {
	table   map[string][]netip.Addr
	lookups atomic.Int32
}

func (h *hosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	h.lookups.Add(1)
	if a, ok := h.table[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func delivery(url string) ports.Delivery {
	h, _ := webhook.Sign("msg_1", time.Now(), []byte(`{}`), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	return ports.Delivery{URL: url, Headers: h, Body: []byte(`{}`)}
}

// TestDeliveryStaysOutOfThisNetwork: with the allowance off, loopback is
// refused by address, by name and by what a name resolves to; the
// refusal happens before any connection. Only loopback addresses are
// used: no test sends traffic to a private or a public address.
func TestDeliveryStaysOutOfThisNetwork(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	dns := &hosts{table: map[string][]netip.Addr{
		"receiver.test":  {netip.MustParseAddr("127.0.0.1")},
		"mixed.test":     {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		"mapped.test":    {netip.MustParseAddr("::ffff:127.0.0.1")},
		"loopback6.test": {netip.MustParseAddr("::1")},
	}}
	strict := webhookout.New(dns, false, "test")
	for _, url := range []string{"https://127.0.0.1" + port + "/", "https://[::1]" + port + "/", "https://localhost" + port + "/",
		"https://receiver.test" + port + "/", "https://mixed.test" + port + "/", "https://mapped.test" + port + "/",
		"https://loopback6.test" + port + "/", srv.URL} {
		res := strict.Deliver(context.Background(), delivery(url))
		if res.Err == nil || res.Status != 0 {
			t.Errorf("%s with the allowance off: status %d, error %v", url, res.Status, res.Err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests reached the loopback receiver", hits.Load())
	}

	// With the allowance, the name is resolved once and the connection goes
	// to the address it was checked as.
	allowed := webhookout.New(dns, true, "test")
	before := dns.lookups.Load()
	res := allowed.Deliver(context.Background(), delivery("http://receiver.test"+port+"/hook"))
	if res.Err != nil || res.Status != http.StatusNoContent || hits.Load() != 1 || dns.lookups.Load()-before != 1 {
		t.Fatalf("allowed: %+v, %d hits, %d lookups", res, hits.Load(), dns.lookups.Load()-before)
	}
}

// TestDeliveryWireAndAnswers: exactly the event's headers go out, a
// redirect is an answer (never followed), Retry-After is read, and an
// error names no URL.
func TestDeliveryWireAndAnswers(t *testing.T) {
	var got http.Header
	var redirected atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { redirected.Add(1) })
	mux.HandleFunc("/busy", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	d := webhookout.New(&hosts{}, true, "test")

	d2 := delivery(srv.URL + "/hook")
	if res := d.Deliver(context.Background(), d2); res.Status != http.StatusOK {
		t.Fatalf("deliver: %+v", res)
	}
	want := map[string]string{"Content-Type": "application/json", "User-Agent": "praxis-webhooks/test", "Webhook-Id": d2.Headers.ID,
		"Webhook-Timestamp": d2.Headers.Timestamp, "Webhook-Signature": d2.Headers.Signature}
	for name, value := range want {
		if got.Get(name) != value {
			t.Errorf("%s: %q, want %q", name, got.Get(name), value)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok && name != "Content-Length" && name != "Accept-Encoding" {
			t.Errorf("a header beyond the event's: %s", name)
		}
	}
	if res := d.Deliver(context.Background(), delivery(srv.URL+"/moved")); res.Status != http.StatusTemporaryRedirect || redirected.Load() != 0 {
		t.Errorf("a redirect: %+v, followed %d times", res, redirected.Load())
	}
	if res := d.Deliver(context.Background(), delivery(srv.URL+"/busy")); res.Status != http.StatusTooManyRequests || res.RetryAfter != 2*time.Minute {
		t.Errorf("Retry-After: %+v", res)
	}
	srv.Close()
	res := d.Deliver(context.Background(), delivery(srv.URL+"/hook?token=secret-of-the-receiver"))
	if res.Err == nil || strings.Contains(res.Err.Error(), "secret-of-the-receiver") {
		t.Errorf("a closed receiver: %v", res.Err)
	}
}
