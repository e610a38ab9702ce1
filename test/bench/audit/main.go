// Command audit measures what the audit trail costs and how fast it
// answers, on PostgreSQL and Redis:
//   - GET of one customer and a 100-row list page, per second, on a server
//     with the trail and one without, alternating in one run: the ratio;
//   - GET audit-events?customer_id= over -events events of one company: p95.
//
// The shipped binary has no switch that stops the trail; this program
// builds its own with -tags auditbench, where PRAXIS_AUDIT_BENCH_OFF=1 does.
// Run it with `make bench`; it exits non-zero when a target is missed.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/praxis-health/praxis/test/bench/benchserver"
	"github.com/praxis-health/praxis/test/testenv"
)

func main() {
	target := benchserver.TargetFlags()
	// A read with the trail waits for its group commit (a few milliseconds):
	// with too few clients the figure measures that wait, not what the trail
	// costs the machine. 64 keep both servers' 2 cores busy; 32 is printed
	// beside it as what a smaller load sees.
	concurrency := flag.Int("concurrency", 64, "requests in flight at once, for the target")
	fewer := flag.Int("fewer", 32, "requests in flight at once, for the figure printed beside it (0: none)")
	phase := flag.Duration("phase", 2*time.Second, "length of one measured phase")
	rounds := flag.Int("rounds", 3, "alternating rounds of the server with and without the trail")
	events := flag.Int("events", 10_000_000, "audit events of one company for the query figure")
	minRatio := flag.Float64("min-ratio", 0.9, "target: throughput with the trail over without it")
	maxP95 := flag.Duration("max-p95", 200*time.Millisecond, "target: p95 of audit-events?customer_id=")
	flag.Parse()
	if err := run(*target.Postgres, *target.Redis, []int{*concurrency, *fewer}, *phase, *rounds, *events, *minRatio, *maxP95); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// side is one server with its company, token and customers.
type side struct {
	srv   *benchserver.Server
	db    string
	token string
	audit string
	id    string
}

func start(bin, pgURL, redisURL, dir string, off bool) (*side, func(), error) {
	dbURL, drop, err := benchserver.FreshDatabase(pgURL)
	if err != nil {
		return nil, nil, err
	}
	env := []string{"PRAXIS_DATABASE_URL=" + dbURL, "PRAXIS_REDIS_URL=" + redisURL, "PRAXIS_BLOB_URL=file://" + filepath.Join(dir, fmt.Sprint(off))}
	if off {
		env = append(env, "PRAXIS_AUDIT_BENCH_OFF=1")
	}
	srv, err := benchserver.Start(bin, env...)
	if err != nil {
		drop()
		return nil, nil, err
	}
	stop := func() { srv.Stop(); drop() }
	s := &side{srv: srv, db: dbURL}
	c, err := srv.NewCompany(1 << 30)
	if err != nil {
		stop()
		return nil, nil, err
	}
	s.id = c.ID
	var lines strings.Builder
	for i := 1; i <= 101; i++ {
		fmt.Fprintf(&lines, `{"section":"customers","id":%d,"data":{"first_name":"Anna","last_name":"Berger","birth_date":"1980-02-29"}}`+"\n", i)
	}
	imp := exec.Command(bin, "admin", "import", "--company", c.ID, "-")
	imp.Env, imp.Stdin = srv.Env, strings.NewReader(lines.String())
	if out, err := imp.CombinedOutput(); err != nil {
		stop()
		return nil, nil, fmt.Errorf("import: %w: %s", err, out)
	}
	for _, scopes := range []string{"customers:read", "audit:read"} {
		var cl struct {
			ID     string `json:"client_id"`
			Secret string `json:"client_secret"`
		}
		if err := srv.Admin(&cl, "admin", "client", "create", "--company", c.ID, "--scopes", scopes, "--json"); err != nil {
			stop()
			return nil, nil, err
		}
		token, err := testenv.ClientToken(http.DefaultClient, srv.URL, cl.ID, cl.Secret)
		if err != nil {
			stop()
			return nil, nil, err
		}
		if scopes == "audit:read" {
			s.audit = token
		} else {
			s.token = token
		}
	}
	return s, stop, nil
}

func get(c *http.Client, url, token string) error {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	return nil
}

func run(pgURL, redisURL string, concurrencies []int, phase time.Duration, rounds, events int, minRatio float64, maxP95 time.Duration) error {
	dir, err := os.MkdirTemp("", "praxis-audit-bench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "praxis-auditbench")
	build := exec.Command("go", "build", "-tags", "auditbench", "-o", bin, "./app/cmd/praxis")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build the benchmark binary: %w", err)
	}
	on, stopOn, err := start(bin, pgURL, redisURL, dir, false)
	if err != nil {
		return err
	}
	defer stopOn()
	off, stopOff, err := start(bin, pgURL, redisURL, dir, true)
	if err != nil {
		return err
	}
	defer stopOff()

	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: slices.Max(concurrencies)}}
	failed := false
	for _, load := range []struct{ name, path string }{
		{"GET one customer", "/api/oauth/v2/resource/customers/42"},
		{"GET a page of 100 customers", "/api/oauth/v2/resource/customers?limit=100"},
	} {
		for k, concurrency := range concurrencies {
			if concurrency <= 0 {
				continue
			}
			blocks0, events0, _ := blockSizes(on.db)
			sums, requests, cpu, err := compare([2]*side{on, off}, concurrency, phase, rounds,
				func(s *side) error { return get(httpc, s.srv.URL+load.path, s.token) })
			if err != nil {
				return err
			}
			ratio := sums[0] / sums[1]
			target := fmt.Sprintf("target ≥ %.2f", minRatio)
			if k > 0 {
				target = "no target"
			}
			fmt.Printf("%-28s %2d clients: with the audit trail %6.0f/s, without %6.0f/s: ratio %.2f (%s)\n",
				load.name, concurrency, sums[0]/float64(rounds), sums[1]/float64(rounds), ratio, target)
			for i, name := range []string{"with", "without"} {
				per := func(what string) float64 { return float64(cpu[i][what].Microseconds()) / requests[i] }
				fmt.Printf("    CPU per request %-8s praxis %4.0f µs, PostgreSQL %4.0f µs, Redis %3.0f µs, load %3.0f µs\n",
					name, per("praxis"), per("postgres"), per("redis-server"), per("load"))
			}
			if blocks, events, err := blockSizes(on.db); err == nil && blocks > blocks0 {
				fmt.Printf("    group commit: %.1f events per block\n", float64(events-events0)/float64(blocks-blocks0))
			}
			failed = failed || (k == 0 && ratio < minRatio)
		}
	}

	// The query figure: events of one company, spread over its 100 customers,
	// and a rare one.
	began := time.Now()
	if err := fill(on.db, on.id, events); err != nil {
		return err
	}
	fmt.Printf("%d audit events written in %s\n", events, time.Since(began).Round(time.Second))
	for _, query := range []struct {
		name     string
		customer func() int
	}{
		{"a customer in every block", func() int { return 1 + rand.IntN(100) }},
		{"a customer in every " + rareEvery + "th block", func() int { return 101 }},
	} {
		var took []time.Duration
		for range 200 {
			t0 := time.Now()
			if err := get(httpc, fmt.Sprintf("%s/api/oauth/v2/resource/audit-events?customer_id=%d&limit=100", on.srv.URL, query.customer()), on.audit); err != nil {
				return err
			}
			took = append(took, time.Since(t0))
		}
		slices.Sort(took)
		p95 := took[len(took)*95/100]
		fmt.Printf("audit-events?customer_id= over %d events, %s: p50 %s, p95 %s (target < %s)\n",
			events, query.name, took[len(took)/2].Round(time.Microsecond*100), p95.Round(time.Microsecond*100), maxP95)
		failed = failed || p95 >= maxP95
	}
	if failed {
		return fmt.Errorf("a target is missed")
	}
	return nil
}

// rareEvery is how often, in blocks, the filled events reach the rare
// customer: a tenth of a percent of the blocks, one event in 100,000.
const rareEvery = "1000"

// compare runs call against both sides by turns, rounds times after a
// round that warms them up, and answers each side's sum of rates, its
// requests and the CPU time each process spent on them.
func compare(sides [2]*side, concurrency int, phase time.Duration, rounds int, call func(*side) error) (
	sums, requests [2]float64, cpu [2]map[string]time.Duration, err error) {
	for r := 0; r <= rounds; r++ {
		for i, s := range sides {
			before := s.srv.CPU()
			rate, err := benchserver.Rate(concurrency, phase, func() error { return call(s) })
			if err != nil {
				return sums, requests, cpu, err
			}
			if r == 0 { // the first round warms both up
				continue
			}
			sums[i] += rate
			requests[i] += rate * phase.Seconds()
			if cpu[i] == nil {
				cpu[i] = map[string]time.Duration{}
			}
			benchserver.AddCPU(cpu[i], before, s.srv.CPU())
		}
	}
	return sums, requests, cpu, nil
}

// blockSizes counts the audit blocks of the database at dbURL and the
// events they hold: how large the group commits were.
func blockSizes(dbURL string) (blocks, events int64, err error) {
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dbURL)))
	defer func() { _ = db.Close() }()
	err = db.QueryRow("SELECT count(*), coalesce(sum(last_seq - first_seq + 1), 0) FROM audit_blocks").Scan(&blocks, &events)
	return blocks, events, err
}

// fill appends n events of company after its chain's head, in blocks of
// 100 as group commits write them: entry k of every block reaches customer
// k (1..100), so every block reaches them all; the last entry of every
// rareEvery-th block reaches customer 101 too, the rare one. The query
// reads them as the server's own.
func fill(dbURL, company string, n int) error {
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dbURL), pgdriver.WithReadTimeout(30*time.Minute), pgdriver.WithWriteTimeout(time.Minute)))
	defer func() { _ = db.Close() }()
	var head int64
	if err := db.QueryRow("SELECT seq FROM audit_heads WHERE company_id = $1", company).Scan(&head); err != nil {
		return err
	}
	const perBlock = 100
	const rare = `(k = 100 AND b % ` + rareEvery + ` = 0)`
	const entry = `'{"h":"AA==","e":{"id":"00000000-0000-0000-0000-000000000000","time":"2026-11-24T08:00:00Z",` +
		`"agent":{"type":"client","id":"pc_bench","name":"Bench"},"source":{"address":"127.0.0.1"},"trace_id":"","action":"read",` +
		`"section":"customers","object_id":"' || k || '","outcome":{"status":200,"reason":""},"customer_ids":[' || k ||
		CASE WHEN ` + rare + ` THEN ',101' ELSE '' END || ']}}'`
	blocks := n / perBlock
	const chunk = 2_000
	for from := 0; from < blocks; from += chunk {
		to := min(from+chunk, blocks) - 1
		if _, err := db.Exec(`INSERT INTO audit_blocks (company_id, first_seq, last_seq, first_at, last_at, prev_hash, events, customers)
			SELECT $1, $2 + b*100 + 1, $2 + b*100 + 100, now(), now(), '\x00',
			       convert_to('[' || (SELECT string_agg(`+entry+`, ',') FROM generate_series(1, 100) k) || ']', 'UTF8'),
			       (SELECT array_agg(k::bigint) FROM generate_series(1, 100) k) || CASE WHEN b % `+rareEvery+` = 0 THEN '{101}'::bigint[] ELSE '{}' END
			FROM generate_series($3::bigint, $4::bigint) b`, company, head, from, to); err != nil {
			return err
		}
		if _, err := db.Exec(`INSERT INTO audit_customer_segments (company_id, customer_id, segment)
			SELECT DISTINCT $1::uuid, k, ($2 + b*100 + 1) / 1024 FROM generate_series($3::bigint, $4::bigint) b, generate_series(1, 101) k
			WHERE k <= 100 OR b % `+rareEvery+` = 0
			ON CONFLICT DO NOTHING`, company, head, from, to); err != nil {
			return err
		}
	}
	// The head moves past them, so that the server's own events go on after.
	if _, err := db.Exec("UPDATE audit_heads SET seq = $2 WHERE company_id = $1", company, head+int64(blocks*perBlock)); err != nil {
		return err
	}
	_, err := db.Exec("ANALYZE audit_blocks; ANALYZE audit_customer_segments")
	return err
}
