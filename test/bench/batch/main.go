// Command batch measures a read of many objects by id (?ids=, docs/contract.md
// §4 "Versions"). It starts the built binary on PostgreSQL (and Redis),
// creates 100 customers through the API, and times in one run, round after
// round: 100 single GETs of them one after another (what an integrator does
// without ids=), and one GET customers?ids= of the same 100. The figure is
// the ratio of the two times, each round's median (target ≥ 20×).
//
// Run it with `make bench`; it exits non-zero when the target is missed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-health/praxis/test/bench/benchserver"
)

func main() {
	target := benchserver.TargetFlags()
	rounds := flag.Int("rounds", 5, "rounds, each timing both ways")
	samples := flag.Int("samples", 20, "reads of the 100 each way per round")
	minRatio := flag.Float64("min-ratio", 20, "target: time of 100 single GETs over one ids= of the same 100")
	flag.Parse()
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *rounds, *samples, *minRatio); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(binary, pgURL, redisURL string, rounds, samples int, minRatio float64) error {
	// The rate limit is lifted: the single GETs are 10,000 requests in a few seconds.
	srv, err := benchserver.OnPostgres(binary, pgURL, redisURL, "PRAXIS_RATE_LIMITS=basic=1000000/s,pro=1000000/s,enterprise=1000000/s")
	if err != nil {
		return err
	}
	defer srv.Close()
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	in, err := srv.NewIntegrator(httpc, 1<<30, "customers:read customers:write")
	if err != nil {
		return err
	}
	token := in.Token
	api := srv.URL + "/api/oauth/v2/resource/customers"
	ids := make([]string, 100)
	for i := range ids {
		body := fmt.Sprintf(`{"first_name":"Anna","last_name":"Berger %d","birth_date":"1980-02-29"}`, i)
		id, err := call(httpc, http.MethodPost, api, token, body, http.StatusCreated)
		if err != nil {
			return err
		}
		ids[i] = id
	}
	batch := api + "?ids=" + strings.Join(ids, ",")
	singles := func() error {
		for _, id := range ids {
			if _, err := call(httpc, http.MethodGet, api+"/"+id, token, "", http.StatusOK); err != nil {
				return err
			}
		}
		return nil
	}
	once := func() error {
		got, err := call(httpc, http.MethodGet, batch, token, "", http.StatusOK)
		if err == nil && strings.Count(got, `"last_name"`) != len(ids) {
			err = fmt.Errorf("ids= answered %d of %d customers", strings.Count(got, `"last_name"`), len(ids))
		}
		return err
	}
	for range 3 { // warm the connections, the caches and the plans
		if err := singles(); err != nil {
			return err
		}
		if err := once(); err != nil {
			return err
		}
	}
	ratios := make([]float64, 0, rounds)
	for r := range rounds {
		var single, many []time.Duration
		for range samples { // alternate, so drift of the machine hits both alike
			t0 := time.Now()
			if err := singles(); err != nil {
				return err
			}
			single = append(single, time.Since(t0))
			t0 = time.Now()
			if err := once(); err != nil {
				return err
			}
			many = append(many, time.Since(t0))
		}
		ms, mb := benchserver.Percentile(single, 50), benchserver.Percentile(many, 50)
		ratio := float64(ms) / float64(mb)
		ratios = append(ratios, ratio)
		fmt.Printf("round %d: 100 single GETs median %.2f ms; one ids= of 100 median %.2f ms; ratio %.1f\n",
			r+1, ms.Seconds()*1000, mb.Seconds()*1000, ratio)
	}
	slices.Sort(ratios)
	mid := ratios[len(ratios)/2]
	fmt.Printf("ids= of 100 customers against 100 single GETs: %.1f× fewer seconds (median round; rounds %.1f–%.1f; target ≥ %.0f×)\n",
		mid, ratios[0], ratios[len(ratios)-1], minRatio)
	if mid < minRatio {
		return fmt.Errorf("target missed")
	}
	return nil
}

// call sends one request and answers the body's id (for a create) or the body.
func call(c *http.Client, method, url, token, body string, want int) (string, error) {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != want {
		return "", fmt.Errorf("%s %s: %d %.200s", method, url, resp.StatusCode, raw)
	}
	if method == http.MethodPost {
		// {"id":N,…}: the customer's number
		rest, ok := bytes.CutPrefix(raw, []byte(`{"id":`))
		end := bytes.IndexByte(rest, ',')
		if !ok || end < 0 {
			return "", fmt.Errorf("create answered %.200s", raw)
		}
		if _, err := strconv.ParseInt(string(rest[:end]), 10, 64); err != nil {
			return "", fmt.Errorf("create answered %.200s", raw)
		}
		return string(rest[:end]), nil
	}
	return string(raw), nil
}
