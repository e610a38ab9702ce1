// Command webhooks measures webhook delivery on PostgreSQL and Redis, with
// the dispatcher's production settings (it looks for changes every 250 ms):
//   - commit-to-delivery latency, p50 and p99, of customers created at
//     -rate per second for -duration, each timed from its 201 to its event's
//     arrival at a receiver on loopback (target: p99 < 2 s);
//   - how many events per second one endpoint takes in order: -backlog
//     changes replayed to it.
//
// Run it with `make bench`; it exits non-zero when a target is missed.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/test/bench/benchserver"
	"github.com/praxis-health/praxis/test/testenv"
)

func main() {
	target := benchserver.TargetFlags()
	rate := flag.Int("rate", 200, "changes per second for the latency figure")
	duration := flag.Duration("duration", 10*time.Second, "how long the changes come")
	backlog := flag.Int("backlog", 20_000, "changes replayed for the throughput figure")
	maxP99 := flag.Duration("max-p99", 2*time.Second, "target: p99 from commit to delivery")
	flag.Parse()
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *rate, *duration, *backlog, *maxP99); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// receiver notes when each object's event arrived.
type receiver struct {
	mu      sync.Mutex
	arrived map[string]time.Time
	count   int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var ev struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	body, _ := io.ReadAll(req.Body)
	_ = json.Unmarshal(body, &ev)
	now := time.Now()
	r.mu.Lock()
	if _, ok := r.arrived[ev.Data.ID]; !ok {
		r.arrived[ev.Data.ID] = now
	}
	r.count++
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.arrived)
}

func (r *receiver) seen() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

func run(bin, pgURL, redisURL string, rate int, duration time.Duration, backlog int, maxP99 time.Duration) error {
	rcv := &receiver{arrived: map[string]time.Time{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(ln, rcv) }() //nolint:gosec // a loopback receiver for the length of the run
	dbURL, drop, err := benchserver.FreshDatabase(pgURL)
	if err != nil {
		return err
	}
	defer drop()
	dir, err := os.MkdirTemp("", "praxis-bench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	key, err := webhook.NewKey()
	if err != nil {
		return err
	}
	srv, err := benchserver.Start(bin, "PRAXIS_DATABASE_URL="+dbURL, "PRAXIS_REDIS_URL="+redisURL,
		"PRAXIS_BLOB_URL=file://"+filepath.Join(dir, "files"), "PRAXIS_WEBHOOK_KEY="+key, "PRAXIS_WEBHOOK_ALLOW_PRIVATE=true")
	if err != nil {
		return err
	}
	defer srv.Stop()
	c, err := srv.NewCompany(1 << 30)
	if err != nil {
		return err
	}
	var cl struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := srv.Admin(&cl, "admin", "client", "create", "--company", c.ID, "--name", "Bench", "--json",
		"--scopes", "customers:read customers:write webhooks:read webhooks:write"); err != nil {
		return err
	}
	client := &http.Client{Timeout: 30 * time.Second}
	token, err := testenv.ClientToken(client, srv.URL, cl.ID, cl.Secret)
	if err != nil {
		return err
	}
	call := func(method, path, body string) ([]byte, int, error) {
		req, _ := http.NewRequest(method, srv.URL+"/api/oauth/v2/resource/"+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, 0, err
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		return b, resp.StatusCode, err
	}
	b, status, err := call(http.MethodPost, "webhook-endpoints", fmt.Sprintf(`{"url":"http://%s/hook","event_types":["customers.created"]}`, ln.Addr()))
	if err != nil {
		return err
	}
	if status != http.StatusCreated {
		return fmt.Errorf("register: %d %s", status, b)
	}
	var endpoint struct{ ID string }
	_ = json.Unmarshal(b, &endpoint)

	// Latency: customers created at the rate, each timed from its 201.
	committed := map[string]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	interval := time.Second / time.Duration(rate)
	n := int(duration / interval)
	start := time.Now()
	var failed error
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, status, err := call(http.MethodPost, "customers", `{"first_name":"Anna","last_name":"Berger","birth_date":"1980-02-29"}`)
			at := time.Now()
			var obj struct {
				ID json.Number `json:"id"`
			}
			if err == nil && status == http.StatusCreated {
				err = json.NewDecoder(bytes.NewReader(b)).Decode(&obj)
			} else if err == nil {
				err = fmt.Errorf("create: %d %s", status, b)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = err
				return
			}
			committed[obj.ID.String()] = at
		}()
	}
	wg.Wait()
	sent := time.Since(start)
	if failed != nil {
		return failed
	}
	deadline := time.Now().Add(60 * time.Second)
	for rcv.seen() < len(committed) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	var lat []time.Duration
	rcv.mu.Lock()
	for id, at := range committed {
		if got, ok := rcv.arrived[id]; ok {
			lat = append(lat, max(got.Sub(at), 0))
		}
	}
	rcv.mu.Unlock()
	if len(lat) != len(committed) {
		return fmt.Errorf("%d of %d events arrived", len(lat), len(committed))
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	fmt.Printf("webhooks: %d changes at %.0f/s (asked %d/s): commit to delivery p50 %s, p99 %s, max %s (target p99 < %s)\n",
		len(lat), float64(len(lat))/sent.Seconds(), rate, p50.Round(time.Millisecond), p99.Round(time.Millisecond),
		lat[len(lat)-1].Round(time.Millisecond), maxP99)

	// Throughput: a backlog replayed to the endpoint, in order.
	var lines strings.Builder
	for i := range backlog {
		fmt.Fprintf(&lines, `{"section":"customers","id":%d,"data":{"first_name":"Anna","last_name":"Berger","birth_date":"1980-02-29"}}`+"\n", 1_000_000+i)
	}
	file := filepath.Join(dir, "backlog.ndjson")
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		return err
	}
	var report map[string]any
	if err := srv.Admin(&report, "admin", "import", "--company", c.ID, "--json", file); err != nil {
		return err
	}
	deadline = time.Now().Add(10 * time.Minute)
	before := rcv.seen()
	wantAll := len(committed) + backlog
	t0 := time.Now()
	for rcv.distinct() < wantAll && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(t0)
	delivered := rcv.seen() - before
	fmt.Printf("webhooks: a backlog of %d changes delivered to one endpoint in order in %s: %.0f events/s\n",
		backlog, took.Round(time.Millisecond), float64(delivered)/took.Seconds())
	if delivered < backlog {
		return fmt.Errorf("%d of %d backlog events arrived", delivered, backlog)
	}
	if p99 >= maxP99 {
		return fmt.Errorf("target missed: p99 %s >= %s", p99, maxP99)
	}
	return nil
}
