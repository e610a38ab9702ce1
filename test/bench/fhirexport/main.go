// Command fhirexport measures a FHIR Bulk Data export against the native
// full sync of the same data (docs/contract.md §15), in one run. It starts
// the built binary on PostgreSQL (and Redis), loads measurements straight
// into the records table (each batch stamped by its transaction, as the
// server's writes are), then times, in one run: the native full sync
// (GET measurements, 500 a page, following next_cursor) and the export of
// the same rows (kick-off, status polls, every NDJSON file downloaded with
// the token, every line counted). The figure is the export's rows/s over
// the sync's; the sync's client is records' (rows counted, not decoded).
//
// Run it with `make bench`; it exits non-zero when the ratio is below -min-ratio.
package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/praxis-health/praxis/test/bench/benchserver"
	"github.com/praxis-health/praxis/test/testenv"
)

func main() {
	target := benchserver.TargetFlags()
	rows := flag.Int("rows", 1_000_000, "measurements to load")
	minRatio := flag.Float64("min-ratio", 0.8, "target: export rows/s over the native full sync's")
	flag.Parse()
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *rows, *minRatio); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(binary, pgURL, redisURL string, rows int, minRatio float64) error {
	srv, err := benchserver.OnPostgres(binary, pgURL, redisURL, "PRAXIS_RATE_LIMITS=basic=1000000/s,pro=1000000/s,enterprise=1000000/s")
	if err != nil {
		return err
	}
	defer srv.Close()
	company, err := srv.NewCompany(1 << 40)
	if err != nil {
		return err
	}
	customer, err := srv.NewCustomer(company.ID)
	if err != nil {
		return err
	}
	client, err := srv.NewClient(company.ID, "measurements:read")
	if err != nil {
		return err
	}
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(srv.DatabaseURL)))
	defer func() { _ = db.Close() }()
	start := time.Now()
	payload := fmt.Sprintf(`{"customer_id":%d,"measured_at":"2026-03-10T09:00:00Z","type":"weight","name":null,"loinc_code":"29463-7","value":"72.5","unit":"kg","components":[],"source":"device","note":null}`, customer)
	if err := benchserver.LoadRecords(db, company.ID, customer, "measurements", payload, rows); err != nil {
		return err
	}
	fmt.Printf("loaded %d measurements in %.1f s\n", rows, time.Since(start).Seconds())

	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	token, err := testenv.ClientToken(httpc, srv.URL, client.ID, client.Secret)
	if err != nil {
		return err
	}
	get := func(url string, headers ...string) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		for _, h := range headers {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Set(k, v)
		}
		return httpc.Do(req)
	}

	cpu0 := srv.CPU()
	t0 := time.Now()
	synced, err := benchserver.FullSync(httpc, srv.URL, token, "measurements", nil)
	if err != nil {
		return err
	}
	syncTime := time.Since(t0)
	cpu1 := srv.CPU()
	t0 = time.Now()
	exported, files, produced, err := export(get, srv.URL)
	if err != nil {
		return err
	}
	exportTime := time.Since(t0)
	cpu2 := srv.CPU()
	if synced != rows || exported != rows {
		return fmt.Errorf("synced %d and exported %d of %d rows", synced, exported, rows)
	}
	perRow := func(before, after map[string]time.Duration, name string) float64 {
		return float64(after[name]-before[name]) / float64(time.Microsecond) / float64(rows) * 1000
	}
	fmt.Printf("CPU ns per row       server   load  postgres\n")
	fmt.Printf("  native sync    %8.0f %6.0f %9.0f\n", perRow(cpu0, cpu1, "praxis"), perRow(cpu0, cpu1, "load"), perRow(cpu0, cpu1, "postgres"))
	fmt.Printf("  FHIR export    %8.0f %6.0f %9.0f\n", perRow(cpu1, cpu2, "praxis"), perRow(cpu1, cpu2, "load"), perRow(cpu1, cpu2, "postgres"))
	syncRate, exportRate := float64(rows)/syncTime.Seconds(), float64(rows)/exportTime.Seconds()
	fmt.Printf("export of %d Observations in %d files: written in %.1f s, downloaded by %.1f s\n", rows, files, produced.Seconds(), exportTime.Seconds())
	fmt.Printf("FHIR $export (kick-off to the last line downloaded): %.0f rows/s; native full sync: %.0f rows/s; ratio %.2f (target ≥ %.2f)\n",
		exportRate, syncRate, exportRate/syncRate, minRatio)
	if exportRate/syncRate < minRatio {
		return fmt.Errorf("target missed")
	}
	return nil
}

type getter func(url string, headers ...string) (*http.Response, error)

// export kicks an export of Observations off, polls it to its manifest,
// downloads every file and counts its lines (each checked to be one).
func export(get getter, base string) (lines, files int, produced time.Duration, err error) {
	t0 := time.Now()
	resp, err := get(base+"/fhir/R4/$export?_type=Observation", "Prefer: respond-async")
	if err != nil {
		return 0, 0, 0, err
	}
	_ = resp.Body.Close()
	status := resp.Header.Get("Content-Location")
	if resp.StatusCode != http.StatusAccepted || status == "" {
		return 0, 0, 0, fmt.Errorf("kick-off: %d", resp.StatusCode)
	}
	var m struct {
		Output []struct {
			URL   string `json:"url"`
			Count int    `json:"count"`
		} `json:"output"`
	}
	for {
		resp, err := get(status)
		if err != nil {
			return 0, 0, 0, err
		}
		if resp.StatusCode == http.StatusAccepted {
			_ = resp.Body.Close()
			time.Sleep(100 * time.Millisecond) // the client's poll, tighter than the Retry-After
			continue
		}
		err = json.NewDecoder(resp.Body).Decode(&m)
		_ = resp.Body.Close()
		if err != nil {
			return 0, 0, 0, fmt.Errorf("status: %d %w", resp.StatusCode, err)
		} else if resp.StatusCode != http.StatusOK {
			return 0, 0, 0, fmt.Errorf("status: %d", resp.StatusCode)
		}
		break
	}
	produced = time.Since(t0)
	for _, o := range m.Output {
		resp, err := get(o.URL)
		if err != nil {
			return 0, 0, 0, err
		}
		n, err := countLines(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return 0, 0, 0, fmt.Errorf("file %s: %w", o.URL, err)
		} else if resp.StatusCode != http.StatusOK || n != o.Count {
			return 0, 0, 0, fmt.Errorf("file %s: %d, %d lines of %d", o.URL, resp.StatusCode, n, o.Count)
		}
		lines += n
	}
	return lines, len(m.Output), produced, nil
}

// countLines counts the NDJSON lines of r, each an Observation.
func countLines(r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		if !bytes.HasPrefix(sc.Bytes(), []byte(`{"`)) || !bytes.Contains(sc.Bytes(), []byte(`"resourceType":"Observation"`)) {
			return n, fmt.Errorf("line %d is no Observation: %.100s", n+1, sc.Bytes())
		}
		n++
	}
	return n, sc.Err()
}
