// Command fhir measures the FHIR door against the resource API it is a
// view of (docs/contract.md §15). It starts the built binary on PostgreSQL
// (and Redis), creates customers through the API, and times in one run,
// alternating: paging every patient through GET /fhir/R4/Patient
// (searchset bundles, next links) and through the native
// GET customers (the sync feed), 100 a page. The figure is the ratio of
// the rows per second of the two (FHIR over native, the native being the
// floor it cannot beat), with the p50 and p99 of a Patient search by
// family name and of a Patient read.
//
// Run it with `make bench`; it exits non-zero when the ratio is below -min-ratio.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/praxis-health/praxis/test/bench/benchserver"
)

func main() {
	target := benchserver.TargetFlags()
	patients := flag.Int("patients", 2000, "customers to create")
	rounds := flag.Int("rounds", 5, "rounds, each paging both ways")
	searches := flag.Int("searches", 400, "searches and reads timed for the percentiles")
	minRatio := flag.Float64("min-ratio", 0.5, "target: FHIR paging rows/s over the native list's")
	flag.Parse()
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *patients, *rounds, *searches, *minRatio); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(binary, pgURL, redisURL string, patients, rounds, searches int, minRatio float64) error {
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
	get := func(url string) ([]byte, error) { return call(httpc, http.MethodGet, url, in.Token, "") }
	native := srv.URL + "/api/oauth/v2/resource/customers"
	families := []string{"Berger", "Huber", "Gruber", "Wagner", "Steiner"}
	for i := range patients {
		body := fmt.Sprintf(`{"first_name":"Anna","last_name":"%s","birth_date":"1980-02-29","svnr":null}`, families[i%len(families)])
		if _, err := call(httpc, http.MethodPost, native, in.Token, body); err != nil {
			return err
		}
	}
	pageNative := func() (int, error) {
		n, cursor := 0, ""
		for {
			raw, err := get(native + "?limit=100" + cursor)
			if err != nil {
				return 0, err
			}
			var page struct {
				Data    []json.RawMessage `json:"data"`
				Next    string            `json:"next_cursor"`
				HasMore bool              `json:"has_more"`
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				return 0, err
			}
			n += len(page.Data)
			if !page.HasMore {
				return n, nil
			}
			cursor = "&cursor=" + page.Next
		}
	}
	pageFHIR := func() (int, error) {
		n, next := 0, srv.URL+"/fhir/R4/Patient?_count=100"
		for next != "" {
			raw, err := get(next)
			if err != nil {
				return 0, err
			}
			var b struct {
				Entry []json.RawMessage `json:"entry"`
				Link  []struct{ Relation, URL string }
			}
			if err := json.Unmarshal(raw, &b); err != nil {
				return 0, err
			}
			n += len(b.Entry)
			next = ""
			for _, l := range b.Link {
				if l.Relation == "next" {
					next = l.URL
				}
			}
		}
		return n, nil
	}
	for range 2 { // warm the connections, the caches and the plans
		if _, err := pageNative(); err != nil {
			return err
		}
		if _, err := pageFHIR(); err != nil {
			return err
		}
	}
	ratios := make([]float64, 0, rounds)
	for r := range rounds {
		t0 := time.Now()
		nn, err := pageNative()
		if err != nil {
			return err
		}
		dn := time.Since(t0)
		t0 = time.Now()
		nf, err := pageFHIR()
		if err != nil {
			return err
		}
		df := time.Since(t0)
		if nn != patients || nf != patients {
			return fmt.Errorf("paged %d natively and %d through FHIR, want %d", nn, nf, patients)
		}
		rn, rf := float64(nn)/dn.Seconds(), float64(nf)/df.Seconds()
		ratios = append(ratios, rf/rn)
		fmt.Printf("round %d: native %.0f rows/s, FHIR %.0f rows/s, ratio %.2f\n", r+1, rn, rf, rf/rn)
	}
	slices.Sort(ratios)
	mid := ratios[len(ratios)/2]

	search := make([]time.Duration, 0, searches)
	read := make([]time.Duration, 0, searches)
	for i := range searches {
		t0 := time.Now()
		if _, err := get(srv.URL + "/fhir/R4/Patient?family=" + families[i%len(families)] + "&_count=50"); err != nil {
			return err
		}
		search = append(search, time.Since(t0))
		t0 = time.Now()
		if _, err := get(fmt.Sprintf("%s/fhir/R4/Patient/%d", srv.URL, 1+i%patients)); err != nil {
			return err
		}
		read = append(read, time.Since(t0))
	}
	fmt.Printf("Patient?family=…&_count=50 (a fifth of %d match): p50 %.2f ms, p99 %.2f ms; Patient/{id}: p50 %.2f ms, p99 %.2f ms\n",
		patients, ms(benchserver.Percentile(search, 50)), ms(benchserver.Percentile(search, 99)), ms(benchserver.Percentile(read, 50)), ms(benchserver.Percentile(read, 99)))
	fmt.Printf("FHIR paging of %d patients against the native list (its floor): %.2f of its rows/s (median round; rounds %.2f–%.2f; target ≥ %.2f)\n",
		patients, mid, ratios[0], ratios[len(ratios)-1], minRatio)
	if mid < minRatio {
		return fmt.Errorf("target missed")
	}
	return nil
}

func call(c *http.Client, method, url, token, body string) ([]byte, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %d %.200s", method, url, resp.StatusCode, raw)
	}
	return raw, nil
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }
