// Command replicas is praxis's scale-out load test, on PostgreSQL, Redis and
// one blob directory, in one run:
//   - requests per second through one replica and through three (GET of the
//     company and a 100-row customer page, alternating), in alternating
//     rounds, with the CPU each process used per request: on a machine of
//     few cores the replicas, PostgreSQL, Redis and this load share them, so
//     the ratio shows what bounds it rather than a gain;
//   - a rolling restart of the three (SIGTERM, start again, one at a time)
//     under a steady mixed load through a balancer that follows /readyz:
//     the operations, retries, failures, latency percentiles, and that every
//     answered create is stored once.
//
// Run it with `make bench`; it exits non-zero when a target is missed.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/praxis-health/praxis/test/bench/benchserver"
	"github.com/praxis-health/praxis/test/testenv"
)

func main() {
	target := benchserver.TargetFlags()
	concurrency := flag.Int("concurrency", 32, "requests in flight at once (throughput)")
	phase := flag.Duration("phase", 2*time.Second, "length of one measured phase")
	rounds := flag.Int("rounds", 3, "alternating rounds of one and three replicas")
	workers := flag.Int("rolling-workers", 8, "clients during the rolling restart")
	minRatio := flag.Float64("min-ratio", 0.5, "target: requests per second through three replicas over one, on the same cores (no collapse)")
	flag.Parse()
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *concurrency, *phase, *rounds, *workers, *minRatio); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

const resource = "/api/oauth/v2/resource/"

func run(binary, pgURL, redisURL string, concurrency int, phase time.Duration, rounds, workers int, minRatio float64) error {
	d, err := benchserver.OnPostgres(binary, pgURL, redisURL, "PRAXIS_SHUTDOWN_DELAY=1s", "PRAXIS_SHUTDOWN_GRACE=10s")
	if err != nil {
		return err
	}
	defer d.Close()
	replicas := []*benchserver.Server{d.Server}
	for range 2 {
		r, err := d.Replica("")
		if err != nil {
			return err
		}
		replicas = append(replicas, r)
	}
	defer func() { // replica 0 too: the rolling restart replaces it
		for _, r := range replicas {
			r.Stop()
		}
	}()
	company, err := d.NewCompany(1 << 30)
	if err != nil {
		return err
	}
	var client struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := d.Admin(&client, "admin", "client", "create", "--company", company.ID, "--scopes", "company:read customers:read customers:write", "--json"); err != nil {
		return err
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency, MaxConnsPerHost: concurrency}}
	token, err := testenv.ClientToken(httpc, d.URL, client.ID, client.Secret)
	if err != nil {
		return err
	}
	auth := "Bearer " + token
	const seeded = 100
	for i := range seeded {
		body := fmt.Sprintf(`{"first_name":"Bench","last_name":"Patient %d","birth_date":"1970-01-01"}`, i)
		if status, answer := send(httpc, http.MethodPost, d.URL+resource+"customers", body, "Authorization", auth, "Content-Type", "application/json"); status != http.StatusCreated {
			return fmt.Errorf("seeding customers: %d %s", status, answer)
		}
	}

	missed := throughput(httpc, replicas, auth, concurrency, phase, rounds, minRatio)
	if err := rollingRestart(d, replicas, client.ID, client.Secret, auth, company.ID, seeded, workers); err != nil {
		return errors.Join(missed, err)
	}
	return missed
}

// throughput alternates rounds through one replica and through three.
func throughput(httpc *http.Client, replicas []*benchserver.Server, auth string, concurrency int, phase time.Duration, rounds int, minRatio float64) error {
	load := func(through []*benchserver.Server) func() error {
		var n atomic.Int64
		return func() error {
			i := n.Add(1)
			base := through[int(i)%len(through)].URL
			path := resource + "company"
			if i%2 == 1 {
				path = resource + "customers?limit=100"
			}
			if status, answer := send(httpc, http.MethodGet, base+path, "", "Authorization", auth); status != http.StatusOK {
				return fmt.Errorf("GET %s: %d %s", path, status, answer)
			}
			return nil
		}
	}
	one, three := replicas[:1], replicas
	if _, err := benchserver.Rate(concurrency, phase/2, load(three)); err != nil { // warm every replica's pools
		return err
	}
	cpu := func() map[string]time.Duration {
		sum := replicas[0].CPU()
		sum["praxis"] = 0
		for _, r := range replicas {
			sum["praxis"] += r.CPU()["praxis"]
		}
		return sum
	}
	type phaseSum struct {
		rate, requests float64
		wall           time.Duration
		cpu            map[string]time.Duration
	}
	sums := map[int]*phaseSum{1: {cpu: map[string]time.Duration{}}, 3: {cpu: map[string]time.Duration{}}}
	for range rounds {
		for _, through := range [][]*benchserver.Server{one, three} {
			before, began := cpu(), time.Now()
			r, err := benchserver.Rate(concurrency, phase, load(through))
			if err != nil {
				return err
			}
			s := sums[len(through)]
			wall := time.Since(began)
			s.rate += r / float64(rounds)
			s.requests += r * wall.Seconds()
			s.wall += wall
			benchserver.AddCPU(s.cpu, before, cpu())
		}
	}
	ratio := sums[3].rate / sums[1].rate
	fmt.Printf("replicas on PostgreSQL + Redis, %d concurrent, %s phases, %d alternating rounds, %d cores\n", concurrency, phase, rounds, runtime.NumCPU())
	fmt.Printf("  GET company and a 100-row customer page, alternating:\n")
	fmt.Printf("    through one replica:    %7.0f req/s\n", sums[1].rate)
	fmt.Printf("    through three replicas: %7.0f req/s, ratio %.2f (target ≥ %.2f)\n", sums[3].rate, ratio, minRatio)
	fmt.Printf("    CPU µs per request  %8s %8s %8s %8s   cores busy\n", "praxis", "load", "postgres", "redis")
	for _, n := range []int{1, 3} {
		s := sums[n]
		us := func(k string) float64 { return float64(s.cpu[k].Microseconds()) / s.requests }
		var busy time.Duration
		for _, v := range s.cpu {
			busy += v
		}
		fmt.Printf("    %d replica(s)       %8.1f %8.1f %8.1f %8.1f   %.2f of %d\n", n, us("praxis"), us("load"), us("postgres"), us("redis-server"),
			busy.Seconds()/s.wall.Seconds(), runtime.NumCPU())
	}
	if ratio < minRatio {
		return fmt.Errorf("target missed: three replicas give %.2f of one", ratio)
	}
	fmt.Println("  target met")
	return nil
}

// rollingRestart restarts the replicas one at a time under a mixed load.
func rollingRestart(d *benchserver.Deployment, replicas []*benchserver.Server, clientID, secret, auth, companyID string, seeded, workers int) error {
	urls := make([]string, len(replicas))
	for i, r := range replicas {
		urls[i] = r.URL
	}
	rt := benchserver.NewRouter(urls...)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go rt.Watch(ctx)
	time.Sleep(100 * time.Millisecond)

	httpc := &http.Client{Timeout: 30 * time.Second}
	tokenForm := url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}}.Encode()
	var retries, failures atomic.Int64
	var mu sync.Mutex
	var latencies []time.Duration
	created := 0
	// call retries what the API marks retryable (503, 429, no connection)
	// on the next ready replica, with the same headers (and so the same
	// Idempotency-Key).
	call := func(method, path, body string, headers ...string) (int, string) {
		for attempt := 0; ; attempt++ {
			status, answer := 0, "no replica ready"
			if base, ok := rt.Pick(); ok {
				status, answer = send(httpc, method, base+path, body, headers...)
			}
			if (status != 0 && status != http.StatusServiceUnavailable && status != http.StatusTooManyRequests) || attempt == 50 {
				return status, answer
			}
			retries.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var mine []time.Duration
			made := 0
			for i := 0; loadCtx.Err() == nil; i++ {
				began := time.Now()
				var status int
				var answer string
				switch i % 4 {
				case 0:
					status, answer = call(http.MethodGet, resource+"customers?limit=20", "", "Authorization", auth)
				case 1:
					status, answer = call(http.MethodPost, resource+"customers", `{"first_name":"Rolling","last_name":"Restart","birth_date":"1980-01-01"}`,
						"Authorization", auth, "Content-Type", "application/json", "Idempotency-Key", fmt.Sprintf("bench-roll-%d-%d", w, i))
					if status == http.StatusCreated {
						made++
					}
				case 2:
					status, answer = call(http.MethodPost, "/api/oauth/v2/token", tokenForm, "Content-Type", "application/x-www-form-urlencoded")
				case 3:
					status, answer = call(http.MethodGet, resource+"company", "", "Authorization", auth)
				}
				mine = append(mine, time.Since(began))
				if status < 200 || status > 299 {
					failures.Add(1)
					fmt.Fprintf(os.Stderr, "  failed: %d %s\n", status, answer)
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			created += made
			mu.Unlock()
		})
	}
	time.Sleep(time.Second)
	began := time.Now()
	for i, r := range replicas {
		addr := strings.TrimPrefix(r.URL, "http://")
		r.Stop()
		again, err := r.Replica(addr)
		if err != nil {
			stopLoad()
			wg.Wait()
			return fmt.Errorf("replica %d did not start again: %w", i, err)
		}
		rt.Replace(i, again.URL)
		replicas[i] = again
		if i == 0 {
			d.Server = again
		}
		time.Sleep(500 * time.Millisecond)
	}
	restarting := time.Since(began)
	time.Sleep(500 * time.Millisecond)
	stopLoad()
	wg.Wait()

	stored, err := countCustomers(d.DatabaseURL, companyID)
	if err != nil {
		return err
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))] }
	fmt.Printf("  rolling restart of the three (SIGTERM, start, one at a time; %s in all) under %d clients\n", restarting.Round(time.Millisecond), workers)
	fmt.Printf("    operations (list, create with Idempotency-Key, token, GET company): %d, %d retried attempts, %d failed (target 0)\n",
		len(latencies), retries.Load(), failures.Load())
	fmt.Printf("    latency of an operation, retries included: p50 %s, p99 %s, max %s\n",
		pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), latencies[len(latencies)-1].Round(time.Millisecond))
	fmt.Printf("    creates answered 201: %d; customers stored: %d (target %d)\n", created, stored-seeded, created)
	var missed []string
	if failures.Load() > 0 {
		missed = append(missed, "failed operations")
	}
	if stored-seeded != created {
		missed = append(missed, "creates stored ≠ creates answered")
	}
	if len(missed) > 0 {
		return fmt.Errorf("targets missed: %s", strings.Join(missed, ", "))
	}
	fmt.Println("  targets met")
	return nil
}

// send makes one request; headers are name, value pairs. Status 0: no answer.
func send(c *http.Client, method, target, body string, headers ...string) (int, string) {
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func countCustomers(databaseURL, companyID string) (int, error) {
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(databaseURL)))
	defer func() { _ = db.Close() }()
	var n int
	err := db.QueryRow("SELECT count(*) FROM customers WHERE company_id = $1", companyID).Scan(&n)
	return n, err
}
