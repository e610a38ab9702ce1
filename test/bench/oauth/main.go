// Command oauth is praxis's OAuth load test. It starts the built binary on
// PostgreSQL and Redis and measures, over loopback and in one run:
//   - token issuance per second (client authentication, token saved in Redis);
//   - next to Ory Hydra's default setup, when -hydra names its binary;
//   - authenticated GET /api/oauth/v2/resource/company per second next to
//     the floor (test/bench/floor: the same Redis call, SELECT and audit
//     event, nothing else), alternating, and the median round's ratio; the
//     floor without the audit event and unauthenticated GET /livez beside;
//   - Redis round trips per authenticated request, from Redis's own counters:
//     the reads it processed (a script call or a pipeline is one read).
//
// Run it with `make bench`; it exits non-zero when a target is missed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/praxis-health/praxis/test/bench/benchserver"
)

func main() {
	target := benchserver.TargetFlags()
	concurrency := flag.Int("concurrency", 32, "requests in flight at once")
	phase := flag.Duration("phase", 2*time.Second, "length of one measured phase")
	rounds := flag.Int("rounds", 5, "alternating rounds of /livez and GET company")
	minRatio := flag.Float64("min-floor-ratio", 0.8, "target: authenticated GET company rate over the floor server's rate")
	minIssue := flag.Float64("min-tokens-per-second", 9600, "target: tokens issued per second (2x the 4,800/s before the client cache)")
	maxRedis := flag.Float64("max-redis-per-request", 1, "target: Redis round trips per authenticated request")
	hydraBin := flag.String("hydra", "", "an Ory Hydra binary (.ci/hydra) to measure token issuance against; empty: not measured")
	minHydra := flag.Float64("min-hydra-ratio", 20, "target: praxis's tokens per second over Hydra's default setup's")
	flag.Parse()
	h := hydraTarget{bin: *hydraBin, min: *minHydra}
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *concurrency, *phase, *rounds, *minRatio, *minIssue, *maxRedis, h); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(binary, pgURL, redisURL string, concurrency int, phase time.Duration, rounds int, minRatio, minIssue, maxRedis float64, h hydraTarget) error {
	srv, err := benchserver.OnPostgres(binary, pgURL, redisURL)
	if err != nil {
		return err
	}
	defer srv.Close()
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)
	defer func() { _ = rdb.Close() }()

	company, err := srv.NewCompany(1 << 30)
	if err != nil {
		return err
	}
	client, err := srv.NewClient(company.ID, "company:read")
	if err != nil {
		return err
	}
	narrow, err := srv.NewClient(company.ID, "customers:read")
	if err != nil {
		return err
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency, MaxConnsPerHost: concurrency}}
	tokenBody := url.Values{"grant_type": {"client_credentials"}, "client_id": {client.ID}, "client_secret": {client.Secret}}.Encode()

	var token string
	issue := func() error {
		body, err := call(httpc, http.MethodPost, srv.URL+"/api/oauth/v2/token", tokenBody, "", http.StatusOK)
		if err != nil {
			return err
		}
		var t struct {
			AccessToken string `json:"access_token"`
		}
		if err := json.Unmarshal(body, &t); err != nil {
			return err
		}
		token = t.AccessToken
		return nil
	}
	issueRate, err := benchserver.Rate(concurrency, phase, issue)
	if err != nil {
		return fmt.Errorf("token issuance: %w", err)
	}
	var hydraRate float64
	if h.bin != "" {
		if hydraRate, err = hydraIssuance(h.bin, pgURL, concurrency, phase); err != nil {
			return fmt.Errorf("ory hydra: %w", err)
		}
	}
	tokenBody = url.Values{"grant_type": {"client_credentials"}, "client_id": {narrow.ID}, "client_secret": {narrow.Secret}}.Encode()
	if err := issue(); err != nil {
		return err
	}
	narrowToken := token
	tokenBody = url.Values{"grant_type": {"client_credentials"}, "client_id": {client.ID}, "client_secret": {client.Secret}}.Encode()
	if err := issue(); err != nil {
		return err
	}
	livez := func() error {
		_, err := call(httpc, http.MethodGet, srv.URL+"/livez", "", "", http.StatusOK)
		return err
	}
	getCompany := func() error {
		_, err := call(httpc, http.MethodGet, srv.URL+"/api/oauth/v2/resource/company", "", token, http.StatusOK)
		return err
	}
	// A token without company:read passes the whole bearer check (one Redis
	// GET) and is refused before any database work: the guard's cost alone.
	guardOnly := func() error {
		_, err := call(httpc, http.MethodGet, srv.URL+"/api/oauth/v2/resource/company", "", narrowToken, http.StatusForbidden)
		return err
	}
	floorURL, _, stopFloor, err := startFloor("test/bench/floor", srv.Dir, srv.DatabaseURL, redisURL)
	if err != nil {
		return err
	}
	defer stopFloor()
	bareURL, barePID, stopBare, err := startFloor("test/bench/barefloor", srv.Dir, srv.DatabaseURL, redisURL)
	if err != nil {
		return err
	}
	defer stopBare()
	bareCompany := func() error {
		_, err := call(httpc, http.MethodGet, bareURL+"/company", "", token, http.StatusOK)
		return err
	}
	if _, err := benchserver.Rate(concurrency, phase/4, bareCompany); err != nil {
		return fmt.Errorf("bare floor: %w", err)
	}
	floorGet := func(path string) func() error {
		return func() error {
			_, err := call(httpc, http.MethodGet, floorURL+path, "", token, http.StatusOK)
			return err
		}
	}
	// The floor of a GET that praxis must also record (docs/contract.md
	// §11), and beside it the same without the audit event.
	floorCompany, floorUnaudited := floorGet("/company/audited"), floorGet("/company")
	if _, err := benchserver.Rate(concurrency, phase/4, floorCompany); err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	// Warm both paths (connections, pools, JIT-free but cache-warm), then alternate.
	if _, err := benchserver.Rate(concurrency, phase/4, livez); err != nil {
		return err
	}
	if _, err := benchserver.Rate(concurrency, phase/4, getCompany); err != nil {
		return err
	}
	var livezSum, companySum, guardSum, floorSum, unauditedSum, commands, trips, requests, livezRequests, guardRequests float64
	var ratios, bareRatios []float64 // GET company over the floor and over the bare floor, round by round
	var bareSum float64
	cpuLivez, cpuCompany, cpuGuard, cpuBare := map[string]time.Duration{}, map[string]time.Duration{}, map[string]time.Duration{}, map[string]time.Duration{}
	var bareRequests float64
	// The independent floor's own CPU in the server's column, beside
	// PostgreSQL's and Redis's while it is measured.
	bareCPU := func() map[string]time.Duration {
		m := srv.CPU()
		m["praxis"] = benchserver.CPUOf(barePID)
		return m
	}
	for range rounds {
		cpuBefore, began := srv.CPU(), time.Now()
		r, err := benchserver.Rate(concurrency, phase, guardOnly)
		if err != nil {
			return fmt.Errorf("bearer check only: %w", err)
		}
		guardSum += r
		guardRequests += r * time.Since(began).Seconds()
		benchserver.AddCPU(cpuGuard, cpuBefore, srv.CPU())

		cpuBefore, began = srv.CPU(), time.Now()
		r, err = benchserver.Rate(concurrency, phase, livez)
		if err != nil {
			return fmt.Errorf("/livez: %w", err)
		}
		livezSum += r
		livezRequests += r * time.Since(began).Seconds()
		benchserver.AddCPU(cpuLivez, cpuBefore, srv.CPU())

		r, err = benchserver.Rate(concurrency, phase, floorUnaudited)
		if err != nil {
			return fmt.Errorf("floor without the audit event: %w", err)
		}
		unauditedSum += r
		// The floor right before GET company: each round is one pair.
		floor, err := benchserver.Rate(concurrency, phase, floorCompany)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		floorSum += floor
		cpuBefore, began = bareCPU(), time.Now()
		bare, err := benchserver.Rate(concurrency, phase, bareCompany)
		if err != nil {
			return fmt.Errorf("bare floor: %w", err)
		}
		bareSum += bare
		bareRequests += bare * time.Since(began).Seconds()
		benchserver.AddCPU(cpuBare, cpuBefore, bareCPU())

		before, err := redisCounts(rdb)
		if err != nil {
			return err
		}
		cpuBefore, began = srv.CPU(), time.Now()
		r, err = benchserver.Rate(concurrency, phase, getCompany)
		if err != nil {
			return fmt.Errorf("GET company: %w", err)
		}
		requests += r * time.Since(began).Seconds()
		benchserver.AddCPU(cpuCompany, cpuBefore, srv.CPU())
		after, err := redisCounts(rdb)
		if err != nil {
			return err
		}
		// Less the INFO calls between the two counts (the second of the
		// first, the first of the second): a read is a round trip however
		// many commands it carried — a script call, a pipeline.
		commands += float64(after.commands - before.commands - 2)
		trips += float64(after.reads - before.reads - 2)
		companySum += r
		ratios = append(ratios, r/floor)
		bareRatios = append(bareRatios, r/bare)
	}
	livezRate, companyRate, guardRate := livezSum/float64(rounds), companySum/float64(rounds), guardSum/float64(rounds)
	floorRate, unauditedRate := floorSum/float64(rounds), unauditedSum/float64(rounds)
	// The median round: one phase disturbed by the machine (2 cores that
	// every process shares) moves it less than it moves the means.
	slices.Sort(ratios)
	ratio, perRequest, commandsPerRequest := ratios[len(ratios)/2], trips/requests, commands/requests
	slices.Sort(bareRatios)
	bareRatio := bareRatios[len(bareRatios)/2]

	fmt.Printf("oauth load on PostgreSQL + Redis, %d concurrent, %s phases, %d alternating rounds\n", concurrency, phase, rounds)
	fmt.Printf("  token issuance (client auth; lockout and save: one Redis call): %4.0f tokens/s (target ≥ %.0f)\n", issueRate, minIssue)
	if hydraRate > 0 {
		fmt.Printf("  Ory Hydra v2.3.0 (serve all --dev, its defaults, PostgreSQL):   %4.0f tokens/s; praxis %.1f× (target ≥ %.0f×)\n",
			hydraRate, issueRate/hydraRate, h.min)
	} else {
		fmt.Println("  Ory Hydra: not measured (no -hydra binary)")
	}
	fmt.Printf("  GET /livez (no auth):                                     %9.0f req/s\n", livezRate)
	fmt.Printf("  GET /api/oauth/v2/resource/company (bearer + PostgreSQL): %9.0f req/s\n", companyRate)
	fmt.Printf("  the floor: a bare server doing the same Redis call, SELECT and audit event: %5.0f req/s\n", floorRate)
	fmt.Printf("  ratio GET company / floor, median round:                  %9.2f   (target ≥ %.2f; rounds %.2f–%.2f)\n",
		ratio, minRatio, ratios[0], ratios[len(ratios)-1])
	fmt.Printf("  the independent floor (net/http, no praxis code: the Redis GET, a prepared SELECT, a hash-chained audit row by a plain 1 ms group commit): %5.0f req/s\n",
		bareSum/float64(rounds))
	fmt.Printf("  ratio GET company / independent floor, median round:      %9.2f   (target ≥ %.2f; rounds %.2f–%.2f)\n",
		bareRatio, minRatio, bareRatios[0], bareRatios[len(bareRatios)-1])
	fmt.Printf("  the same bare server without the audit event:             %9.0f req/s; GET company / it: %.2f\n",
		unauditedRate, companyRate/unauditedRate)
	fmt.Printf("  ratio GET company / livez:                                %9.2f\n", companyRate/livezRate)
	fmt.Printf("  bearer check alone (token without the scope, 403):       %9.0f req/s, ratio to /livez %.2f\n", guardRate, guardRate/livezRate)
	fmt.Printf("  Redis round trips per authenticated request:              %9.2f   (target ≤ %.0f)\n", perRequest, maxRedis)
	fmt.Printf("  Redis commands per request (in those round trips):        %9.2f\n", commandsPerRequest)
	fmt.Printf("  CPU µs per request      %8s %8s %8s %8s   (%d cores shared by all four)\n", "server", "load", "postgres", "redis", runtime.NumCPU())
	for _, row := range []struct {
		name string
		cpu  map[string]time.Duration
		n    float64
	}{{"/livez", cpuLivez, livezRequests}, {"bearer check alone", cpuGuard, guardRequests}, {"GET company", cpuCompany, requests}, {"independent floor", cpuBare, bareRequests}} {
		us := func(k string) float64 { return float64(row.cpu[k].Microseconds()) / row.n }
		fmt.Printf("    %-20s %8.1f %8.1f %8.1f %8.1f\n", row.name, us("praxis"), us("load"), us("postgres"), us("redis-server"))
	}
	var missed []string
	if bareRatio < minRatio {
		missed = append(missed, "GET company / independent floor ratio")
	}
	if ratio < minRatio {
		missed = append(missed, "GET company / floor ratio")
	}
	if issueRate < minIssue {
		missed = append(missed, "token issuance")
	}
	if hydraRate > 0 && issueRate/hydraRate < h.min {
		missed = append(missed, "token issuance over Hydra's")
	}
	if perRequest > maxRedis+0.01 {
		missed = append(missed, "Redis round trips per request")
	}
	if len(missed) > 0 {
		return fmt.Errorf("targets missed: %s", strings.Join(missed, ", "))
	}
	fmt.Println("  targets met")
	return nil
}

// call sends one request and fails on any status but want.
func call(c *http.Client, method, target, form, token string, want int) ([]byte, error) {
	req, err := http.NewRequest(method, target, strings.NewReader(form))
	if err != nil {
		return nil, err
	}
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != want {
		err = fmt.Errorf("%s %s: %d %s", method, target, resp.StatusCode, body)
	}
	return body, err
}

// startFloor builds and starts a floor server (the package pkg:
// test/bench/floor or test/bench/barefloor) on the same database and Redis,
// and answers its address and process id.
func startFloor(pkg, dir, databaseURL, redisURL string) (string, string, func(), error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	build := exec.Command("go", "build", "-o", bin, "./"+pkg)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return "", "", nil, fmt.Errorf("build the floor server: %w", err)
	}
	addr, err := benchserver.FreeAddr()
	if err != nil {
		return "", "", nil, err
	}
	cmd := exec.Command(bin, "-addr", addr, "-database", databaseURL, "-redis", redisURL) //nolint:gosec // the bench's own binary
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return "http://" + addr, strconv.Itoa(cmd.Process.Pid), stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", "", nil, fmt.Errorf("the floor server did not start")
		}
	}
}

// counts are Redis's own: the commands it ran (a script's own included)
// and the reads it processed (a client's round trip is one read: a
// command, a script call, a pipeline). While GET company is measured,
// nothing else calls Redis.
type counts struct{ commands, reads int64 }

func redisCounts(rdb *redis.Client) (counts, error) {
	var c counts
	for _, section := range []string{"stats", "commandstats"} {
		info, err := rdb.Info(context.Background(), section).Result()
		if err != nil {
			return c, fmt.Errorf("redis INFO: %w", err)
		}
		for line := range strings.SplitSeq(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "total_reads_processed:"); ok {
				c.reads, _ = strconv.ParseInt(v, 10, 64)
			}
			if rest, ok := strings.CutPrefix(line, "cmdstat_"); ok {
				_, rest, _ = strings.Cut(rest, ":calls=")
				calls, _, _ := strings.Cut(rest, ",")
				n, _ := strconv.ParseInt(calls, 10, 64)
				c.commands += n
			}
		}
	}
	return c, nil
}

// hydraTarget is the Hydra binary to compare token issuance with, and the
// ratio praxis must reach.
type hydraTarget struct {
	bin string
	min float64
}

// hydraIssuance runs Ory Hydra as its quickstart does (`serve all --dev`,
// PostgreSQL, its default hashing of client secrets) on a fresh database of
// the same server, with one client_credentials client, and measures tokens
// per second at the same concurrency.
func hydraIssuance(bin, pgURL string, concurrency int, phase time.Duration) (float64, error) {
	dsn, drop, err := benchserver.FreshDatabase(pgURL)
	if err != nil {
		return 0, err
	}
	defer drop()
	env := append(os.Environ(), "DSN="+dsn, "LOG_LEVEL=error")
	migrate := exec.Command(bin, "migrate", "sql", "up", "-e", "--yes") //nolint:gosec // the bench's own binary
	migrate.Env = env
	if out, err := migrate.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("migrate: %w: %s", err, out)
	}
	public, err := benchserver.FreeAddr()
	if err != nil {
		return 0, err
	}
	admin, err := benchserver.FreeAddr()
	if err != nil {
		return 0, err
	}
	_, publicPort, _ := net.SplitHostPort(public)
	_, adminPort, _ := net.SplitHostPort(admin)
	serve := exec.Command(bin, "serve", "all", "--dev") //nolint:gosec // the bench's own binary
	serve.Env = append(env, "SECRETS_SYSTEM=praxis-bench-hydra-system-secret", "URLS_SELF_ISSUER=http://"+public,
		"SERVE_PUBLIC_HOST=127.0.0.1", "SERVE_PUBLIC_PORT="+publicPort, "SERVE_ADMIN_HOST=127.0.0.1", "SERVE_ADMIN_PORT="+adminPort)
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := call(http.DefaultClient, http.MethodGet, "http://"+admin+"/health/ready", "", "", http.StatusOK); err == nil {
			break
		} else if time.Now().After(deadline) {
			return 0, fmt.Errorf("not ready: %w", err)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+admin+"/admin/clients",
		strings.NewReader(`{"grant_types":["client_credentials"],"token_endpoint_auth_method":"client_secret_basic","scope":"company:read"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	var client struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	err = json.NewDecoder(resp.Body).Decode(&client)
	_ = resp.Body.Close()
	if err == nil && client.Secret == "" {
		err = errors.New("no client secret in the answer")
	}
	if err != nil {
		return 0, fmt.Errorf("create a client: %d: %w", resp.StatusCode, err)
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency, MaxConnsPerHost: concurrency}}
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"company:read"}}.Encode()
	issue := func() error {
		req, err := http.NewRequest(http.MethodPost, "http://"+public+"/oauth2/token", strings.NewReader(form))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(url.QueryEscape(client.ID), url.QueryEscape(client.Secret))
		resp, err := httpc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("token: %d", resp.StatusCode)
		}
		return nil
	}
	if _, err := benchserver.Rate(concurrency, phase/4, issue); err != nil { // warm
		return 0, err
	}
	return benchserver.Rate(concurrency, phase, issue)
}
