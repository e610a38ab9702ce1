// Command prepared measures the hot statements (docs/contract.md §5): the
// same build twice on one database, with PRAXIS_DB_PREPARE_HOT on and off,
// under the same load of authenticated GETs of the company and of one
// customer (64 clients), in alternating rounds; it prints each rate and the
// median round's ratio of on to off (target ≥ 1.3), and PostgreSQL's CPU
// per request of each (the parse and plan the prepared statements save
// show there).
//
// Run it with `make bench`; it exits non-zero when a target is missed.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/praxis-health/praxis/test/bench/benchserver"
)

func main() {
	target := benchserver.TargetFlags()
	concurrency := flag.Int("c", 64, "concurrent clients")
	phase := flag.Duration("phase", 2*time.Second, "length of one measured phase")
	rounds := flag.Int("rounds", 5, "alternating rounds")
	minRatio := flag.Float64("min-ratio", 1.3, "target: requests/s with the hot statements prepared over without")
	flag.Parse()
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *concurrency, *phase, *rounds, *minRatio); err != nil {
		fmt.Fprintln(os.Stderr, "prepared:", err)
		os.Exit(1)
	}
}

func run(binary, pgURL, redisURL string, concurrency int, phase time.Duration, rounds int, minRatio float64) error {
	on, err := benchserver.OnPostgres(binary, pgURL, redisURL)
	if err != nil {
		return err
	}
	defer on.Close()
	off, err := benchserver.Start(binary, "PRAXIS_DATABASE_URL="+on.DatabaseURL, "PRAXIS_REDIS_URL="+redisURL,
		"PRAXIS_BLOB_URL=file://"+filepath.Join(on.Dir, "files"), "PRAXIS_DB_PREPARE_HOT=false")
	if err != nil {
		return err
	}
	defer off.Stop()
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency, MaxConnsPerHost: concurrency}}
	in, err := on.NewIntegrator(httpc, 1<<30, "company:read customers:read customers:write")
	if err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPost, on.URL+"/api/oauth/v2/resource/customers",
		strings.NewReader(`{"first_name":"Anna","last_name":"Berger","birth_date":"1980-02-29"}`))
	req.Header.Set("Authorization", "Bearer "+in.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpc.Do(req)
	if err != nil {
		return err
	}
	var created struct {
		ID int64 `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&created)
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("create a customer: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("create a customer: %d", resp.StatusCode)
	}
	get := func(base, path string) func() error {
		return func() error {
			req, _ := http.NewRequest(http.MethodGet, base+"/api/oauth/v2/resource/"+path, nil)
			req.Header.Set("Authorization", "Bearer "+in.Token)
			resp, err := httpc.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET %s: %d", path, resp.StatusCode)
			}
			return nil
		}
	}
	type measured struct {
		name    string
		path    string
		ratios  []float64
		rate    [2]float64 // on, off: sums over the rounds
		pgCPU   [2]time.Duration
		request [2]float64
	}
	cases := []*measured{{name: "GET company", path: "company"}, {name: "GET customer", path: fmt.Sprintf("customers/%d", created.ID)}}
	servers := [2]*benchserver.Server{on.Server, off}
	for _, m := range cases { // warm both
		for _, s := range servers {
			if _, err := benchserver.Rate(concurrency, phase/4, get(s.URL, m.path)); err != nil {
				return err
			}
		}
	}
	for range rounds {
		for _, m := range cases {
			var r [2]float64
			for i, s := range servers {
				before, began := s.CPU(), time.Now()
				if r[i], err = benchserver.Rate(concurrency, phase, get(s.URL, m.path)); err != nil {
					return fmt.Errorf("%s: %w", m.name, err)
				}
				m.request[i] += r[i] * time.Since(began).Seconds()
				m.pgCPU[i] += s.CPU()["postgres"] - before["postgres"]
				m.rate[i] += r[i]
			}
			m.ratios = append(m.ratios, r[0]/r[1])
		}
	}
	fmt.Printf("hot statements prepared on vs off, the same build and database, %d concurrent, %s phases, %d alternating rounds\n",
		concurrency, phase, rounds)
	var missed []string
	for _, m := range cases {
		slices.Sort(m.ratios)
		ratio := m.ratios[len(m.ratios)/2]
		us := func(i int) float64 { return float64(m.pgCPU[i].Microseconds()) / m.request[i] }
		fmt.Printf("  %-13s prepared %6.0f req/s, builder %6.0f req/s; ratio, median round %.2f (target ≥ %.2f; rounds %.2f–%.2f); PostgreSQL CPU per request %.0f vs %.0f µs\n",
			m.name, m.rate[0]/float64(rounds), m.rate[1]/float64(rounds), ratio, minRatio, m.ratios[0], m.ratios[len(m.ratios)-1], us(0), us(1))
		if ratio < minRatio {
			missed = append(missed, m.name)
		}
	}
	if len(missed) > 0 {
		return fmt.Errorf("target missed: %s", strings.Join(missed, ", "))
	}
	return nil
}
