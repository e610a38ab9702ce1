// Command records is the sync feed's load test. It starts the built binary on
// PostgreSQL (and Redis), loads a million notes of one company in bulk (100
// transactions of 10,000 rows, straight into the database), and measures in
// one run:
//   - the latency of a 100-row page deep in the feed (row 900,000) over the
//     same page near its start (row 1,000): a keyset must not slow down with
//     depth (target ≤ 1.2);
//   - a full sync of the million through the API (500-row pages, following
//     next_cursor) by a client that decodes every page into typed notes, in
//     rows/s, next to `COPY … TO STDOUT` of the same rows in the same order
//     as the floor, alternately, three of each, the medians (target ≥ 0.3
//     of it).
//
// Run it with `make bench`; it exits non-zero when a target is missed.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/bench/benchserver"
	"github.com/praxis-health/praxis/test/testenv"
)

func main() {
	target := benchserver.TargetFlags()
	rows := flag.Int("rows", 1_000_000, "notes loaded")
	samples := flag.Int("samples", 300, "page requests timed at each depth")
	maxDepthRatio := flag.Float64("max-depth-ratio", 1.2, "target: deep page latency over shallow page latency")
	minSyncRatio := flag.Float64("min-sync-ratio", 0.3, "target: rows/s of an API sync whose client decodes every page over COPY rows/s")
	flag.Parse()
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *rows, *samples, *maxDepthRatio, *minSyncRatio); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(binary, pgURL, redisURL string, rows, samples int, maxDepthRatio, minSyncRatio float64) error {
	srv, err := benchserver.OnPostgres(binary, pgURL, redisURL)
	if err != nil {
		return err
	}
	defer srv.Close()
	dbURL := srv.DatabaseURL
	company, err := srv.NewCompany(1 << 30)
	if err != nil {
		return err
	}
	customer, err := srv.NewCustomer(company.ID)
	if err != nil {
		return err
	}
	var client struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := srv.Admin(&client, "admin", "client", "create", "--company", company.ID, "--scopes", "notes:read", "--json"); err != nil {
		return err
	}
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dbURL)))
	defer func() { _ = db.Close() }()

	start := time.Now()
	payload := fmt.Sprintf(`{"customer_id":%d,"user_id":null,"appointment_id":null,"noted_on":"2026-03-10","title":"Phone call","text":"Patient called about the blood pressure readings; next check in two weeks."}`, customer)
	if err := benchserver.LoadRecords(db, company.ID, customer, "notes", payload, rows); err != nil {
		return err
	}
	fmt.Printf("loaded %d notes in %.1f s\n", rows, time.Since(start).Seconds())

	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	token, err := testenv.ClientToken(httpc, srv.URL, client.ID, client.Secret)
	if err != nil {
		return err
	}
	shallow, err := cursorAt(db, company.ID, 1_000)
	if err != nil {
		return err
	}
	deep, err := cursorAt(db, company.ID, rows*9/10)
	if err != nil {
		return err
	}
	var shallowLat, deepLat []time.Duration
	var buf bytes.Buffer
	for i := range 2 * samples { // alternate, so drift of the machine hits both alike
		c, into := shallow, &shallowLat
		if i%2 == 1 {
			c, into = deep, &deepLat
		}
		t0 := time.Now()
		if _, err := benchserver.FetchSyncPage(httpc, &buf, srv.URL, token, "notes", "limit=100&cursor="+c); err != nil {
			return err
		}
		*into = append(*into, time.Since(t0))
	}
	ms, md := benchserver.Percentile(shallowLat, 50), benchserver.Percentile(deepLat, 50)
	depthRatio := float64(md) / float64(ms)
	fmt.Printf("100-row page at row 1,000: median %.2f ms; at row %d: median %.2f ms; ratio %.2f (target ≤ %.1f)\n",
		ms.Seconds()*1000, rows*9/10, md.Seconds()*1000, depthRatio, maxDepthRatio)

	// COPY and the sync alternately, three times each, the medians their
	// rates: the first of each reads what the later ones find cached.
	var copyRates, syncRates []float64
	copyCPU, syncCPU := map[string]time.Duration{}, map[string]time.Duration{}
	for range 3 {
		before := srv.CPU()
		r, err := copyFloor(db, company.ID)
		if err != nil {
			return err
		}
		benchserver.AddCPU(copyCPU, before, srv.CPU())
		copyRates = append(copyRates, r)
		before, t0 := srv.CPU(), time.Now()
		synced, err := benchserver.FullSync(httpc, srv.URL, token, "notes", decodeNotes)
		if err != nil {
			return err
		}
		if synced != rows {
			return fmt.Errorf("the sync received %d of %d rows", synced, rows)
		}
		syncRates = append(syncRates, float64(synced)/time.Since(t0).Seconds())
		benchserver.AddCPU(syncCPU, before, srv.CPU())
	}
	fmt.Printf("COPY TO STDOUT: %.0f, %.0f, %.0f rows/s; the API sync: %.0f, %.0f, %.0f rows/s\n",
		copyRates[0], copyRates[1], copyRates[2], syncRates[0], syncRates[1], syncRates[2])
	slices.Sort(copyRates)
	slices.Sort(syncRates)
	copyRate, syncRate := copyRates[1], syncRates[1]
	perRow := func(cpu map[string]time.Duration, name string) float64 {
		return float64(cpu[name]) / float64(time.Microsecond) / float64(3*rows) * 1000
	}
	fmt.Printf("CPU ns per row       server   load  postgres\n")
	fmt.Printf("  COPY           %8.0f %6.0f %9.0f\n", perRow(copyCPU, "praxis"), perRow(copyCPU, "load"), perRow(copyCPU, "postgres"))
	fmt.Printf("  API sync       %8.0f %6.0f %9.0f\n", perRow(syncCPU, "praxis"), perRow(syncCPU, "load"), perRow(syncCPU, "postgres"))
	syncRatio := syncRate / copyRate
	fmt.Printf("full sync through the API: %.0f rows/s; COPY TO STDOUT: %.0f rows/s; ratio %.2f (target ≥ %.2f)\n",
		syncRate, copyRate, syncRatio, minSyncRatio)
	if depthRatio > maxDepthRatio || syncRatio < minSyncRatio {
		return fmt.Errorf("target missed")
	}
	return nil
}

// note is a note as the sync's client stores it.
type note struct {
	ID            string     `json:"id"`
	CustomerID    int64      `json:"customer_id"`
	UserID        *string    `json:"user_id"`
	AppointmentID *string    `json:"appointment_id"`
	NotedOn       string     `json:"noted_on"`
	Title         string     `json:"title"`
	Text          string     `json:"text"`
	Version       int64      `json:"version"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	DeletedAt     *time.Time `json:"deleted_at"`
}

// decodeNotes decodes a page of notes whole, every row into a note, and
// answers how many it held.
func decodeNotes(raw []byte) (int, error) {
	var page struct {
		Data       []note `json:"data"`
		NextCursor string `json:"next_cursor"`
		HasMore    bool   `json:"has_more"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return 0, err
	}
	for _, n := range page.Data {
		if n.ID == "" || n.Text == "" || n.UpdatedAt.IsZero() {
			return 0, fmt.Errorf("a note decoded without its id, text or time: %+v", n)
		}
	}
	return len(page.Data), nil
}

// cursorAt is the feed cursor after the row at offset n.
func cursorAt(db *sql.DB, company string, n int) (string, error) {
	var c domain.Cursor
	err := db.QueryRow(`SELECT change, id FROM records WHERE company_id = $1 AND kind = 'notes' ORDER BY change, id OFFSET $2 LIMIT 1`,
		company, n).Scan(&c.Change, &c.ID)
	return c.Encode(), err
}

// copyFloor is COPY TO STDOUT of the same rows, in feed order: the database's own rate of handing them out.
func copyFloor(db *sql.DB, company string) (float64, error) {
	conn, err := bun.NewDB(db, pgdialect.New()).Conn(context.Background())
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	t0 := time.Now()
	res, err := pgdriver.CopyTo(context.Background(), conn, io.Discard, fmt.Sprintf(
		`COPY (SELECT id, customer_id, payload, created_at, updated_at FROM records WHERE company_id = '%s' AND kind = 'notes' ORDER BY change, id) TO STDOUT`,
		strings.ReplaceAll(company, "'", "")))
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return float64(n) / time.Since(t0).Seconds(), nil
}
