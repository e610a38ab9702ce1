// Command failover measures praxis on a failover cluster of its own: a
// Patroni primary and synchronous standby (testenv.StartPatroni: etcd,
// ttl 20, loopback ports, never the machine's PostgreSQL) with
// pg_stat_statements preloaded.
//
//   - Planning's share of PostgreSQL's statement time under authenticated
//     GETs of the company and of one customer (64 clients), with the hot
//     statements prepared and without (the same build, PRAXIS_DB_PREPARE_HOT),
//     from pg_stat_statements (track_planning on): a prepared statement is
//     planned once per connection, not once per request.
//   - The write gap of a failover: creates with an Idempotency-Key from 8
//     clients that retry 503s, the primary's Patroni and postmaster killed
//     (kill -9): the longest time without an answered write (target ≤ 25 s,
//     the engine's ttl 20 and praxis's share), and the first write after
//     the new leader (target ≤ 3 s: what praxis adds).
//
// It needs root and Debian's patroni, etcd-server and postgresql-contrib's
// pg_stat_statements (part of postgresql). Run it with `make bench`; it exits
// non-zero when a target is missed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/test/bench/benchserver"
	"github.com/praxis-health/praxis/test/testenv"
)

func main() {
	binary := flag.String("binary", "bin/praxis", "the praxis binary")
	redisURL := flag.String("redis", benchserver.EnvOr("PRAXIS_TEST_REDIS_URL", "redis://127.0.0.1:6379/0"), "Redis server")
	phase := flag.Duration("phase", 5*time.Second, "length of one measured phase")
	maxGap := flag.Duration("max-gap", 25*time.Second, "target: the longest time without an answered write")
	maxAfter := flag.Duration("max-after-leader", 3*time.Second, "target: the first write after the new leader")
	flag.Parse()
	if err := run(*binary, *redisURL, *phase, *maxGap, *maxAfter); err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		if errors.Is(err, testenv.ErrPatroniMissing) {
			os.Exit(0) // said loudly; make bench goes on
		}
		os.Exit(1)
	}
}

func run(binary, redisURL string, phase, maxGap, maxAfter time.Duration) error {
	cluster, err := testenv.StartPatroni("shared_preload_libraries: pg_stat_statements", `pg_stat_statements.track_planning: "on"`)
	if err != nil {
		return err
	}
	defer cluster.Close()
	db, err := sqlstore.Open(cluster.URL())
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "praxis-bench-failover-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	env := []string{"PRAXIS_DATABASE_URL=" + cluster.URL(), "PRAXIS_REDIS_URL=" + redisURL, "PRAXIS_REDIS_PREFIX=bench-failover:",
		"PRAXIS_BLOB_URL=file://" + filepath.Join(dir, "files")}
	on, err := benchserver.Start(binary, env...)
	if err != nil {
		return err
	}
	defer on.Stop()
	off, err := benchserver.Start(binary, append(env, "PRAXIS_DB_PREPARE_HOT=false")...)
	if err != nil {
		return err
	}
	defer off.Stop()
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}, Timeout: 30 * time.Second}
	in, err := on.NewIntegrator(httpc, 1<<30, "company:read customers:read customers:write")
	if err != nil {
		return err
	}
	status, body := send(httpc, http.MethodPost, on.URL+"/api/oauth/v2/resource/customers", in.Token,
		`{"first_name":"Anna","last_name":"Berger","birth_date":"1980-02-29"}`, "")
	if status != http.StatusCreated {
		return fmt.Errorf("create a customer: %d %s", status, body)
	}
	_, rest, _ := strings.Cut(body, `"id":`)
	customer, _, _ := strings.Cut(rest, ",")

	fmt.Printf("praxis on a Patroni cluster (a primary and a synchronous standby, ttl 20), pg_stat_statements with track_planning\n")
	for _, s := range []struct {
		name string
		srv  *benchserver.Server
	}{{"prepared", on}, {"builder", off}} {
		pair := func() error {
			for _, path := range []string{"company", "customers/" + customer} {
				if st, b := send(httpc, http.MethodGet, s.srv.URL+"/api/oauth/v2/resource/"+path, in.Token, "", ""); st != http.StatusOK {
					return fmt.Errorf("GET %s: %d %s", path, st, b)
				}
			}
			return nil
		}
		// A phase first, not counted: the pool opens its connections, and
		// a new backend's first plans load its catalog caches (a
		// millisecond and more each), once per connection's life.
		if _, err := benchserver.Rate(64, phase, pair); err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
			return err
		}
		rate, err := benchserver.Rate(64, phase, pair)
		if err != nil {
			return err
		}
		var plan, exec, calls float64
		if err := db.NewRaw("SELECT coalesce(sum(total_plan_time), 0), coalesce(sum(total_exec_time), 0), coalesce(sum(calls), 0) FROM pg_stat_statements").
			Scan(ctx, &plan, &exec, &calls); err != nil {
			return err
		}
		fmt.Printf("  hot statements %-8s %5.0f pairs of GETs/s; planning %5.1f %% of statement time (plan %.0f ms, execution %.0f ms, %.0f statements)\n",
			s.name, rate, 100*plan/(plan+exec), plan, exec, calls)
		// Where the planning went: the statements that planned most
		// (pg_stat_statements shows constants as placeholders).
		var top []struct {
			Query string  `bun:"query"`
			Plan  float64 `bun:"plan"`
			Plans float64 `bun:"plans"`
			Calls float64 `bun:"calls"`
		}
		if err := db.NewRaw("SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query, total_plan_time AS plan, plans::float8 AS plans, calls::float8 AS calls FROM pg_stat_statements ORDER BY total_plan_time DESC LIMIT 3").
			Scan(ctx, &top); err != nil {
			return err
		}
		for _, q := range top {
			fmt.Printf("    planned %4.0f ms, %6.0f plans for %6.0f calls: %s\n", q.Plan, q.Plans, q.Calls, q.Query)
		}
	}

	// The failover under writes.
	var mu sync.Mutex
	var writes []time.Duration
	t0 := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	failures := 0
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("gap-%d-%d", w, i)
				for attempt := 0; ; attempt++ {
					st, _ := send(httpc, http.MethodPost, on.URL+"/api/oauth/v2/resource/customers", in.Token,
						`{"first_name":"Gap","last_name":"Writer","birth_date":"1980-01-01"}`, key)
					if st == http.StatusCreated {
						mu.Lock()
						writes = append(writes, time.Since(t0))
						mu.Unlock()
						break
					}
					if st != http.StatusServiceUnavailable && st != 0 || attempt > 600 {
						mu.Lock()
						failures++
						mu.Unlock()
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	time.Sleep(2 * time.Second)
	killed := time.Since(t0)
	old, standby := cluster.Nodes[0], cluster.Nodes[1]
	cluster.Kill(old)
	cluster.KillPostmaster(old)
	leaderAfter, err := cluster.WaitRole(standby, "primary", 90*time.Second)
	if err != nil {
		close(stop)
		wg.Wait()
		return err
	}
	leader := killed + leaderAfter
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		done := len(writes) > 0 && writes[len(writes)-1] > leader+time.Second
		mu.Unlock()
		if done {
			break
		}
	}
	close(stop)
	wg.Wait()
	var gap, after time.Duration
	last, found := killed-time.Second, false
	for _, w := range writes {
		if w < killed-time.Second {
			continue
		}
		gap, last = max(gap, w-last), w
		if !found && w >= leader {
			after, found = w-leader, true
		}
	}
	fmt.Printf("  failover (kill -9 of the primary's Patroni and postmaster): new leader after %s; write gap %s (target ≤ %s); "+
		"first write %s after the new leader (target ≤ %s); %d writes, %d failed\n",
		leaderAfter.Round(time.Millisecond), gap.Round(time.Millisecond), maxGap, after.Round(time.Millisecond), maxAfter, len(writes), failures)
	var missed []string
	if gap > maxGap {
		missed = append(missed, "write gap")
	}
	if !found || after > maxAfter {
		missed = append(missed, "first write after the new leader")
	}
	if failures > 0 {
		missed = append(missed, "failed writes")
	}
	if len(missed) > 0 {
		return fmt.Errorf("target missed: %s", strings.Join(missed, ", "))
	}
	return nil
}

// send makes one request and answers its status (0 without an answer) and body.
func send(c *http.Client, method, url, token, body, key string) (int, string) {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
