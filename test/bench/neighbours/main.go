// Command neighbours measures how much one practice's heavy reading slows
// another's on one replica (PostgreSQL and Redis), and what the practice's
// share of the replica (PRAXIS_COMPANY_CONCURRENCY) changes. The quiet
// practice reads one patient (GET customers/{id}) one request after the
// other: alone, then while the busy practice's clients page through its
// notes 500 at a time (honouring Retry-After on a 429) — on a replica
// without a share, with the default share (half the pool), with the whole
// pool and with a quarter of it, in turn, twice. It prints the quiet
// practice's p50 and p99 (and their ratio to alone) and the busy one's
// pages/s for each, and in each round the quiet p99 without a share over
// the p99 with the default share (target ≥ 1.2 in every round: the share
// must hold the busy practice back; 1 is no gain).
//
// Run it with `make bench`; it exits non-zero when the target is missed.
package main

import (
	"bytes"
	"database/sql"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/test/bench/benchserver"
)

func main() {
	target := benchserver.TargetFlags()
	notes := flag.Int("notes", 20_000, "the busy practice's notes")
	clients := flag.Int("clients", 16, "the busy practice's clients paging at once")
	seconds := flag.Duration("for", 5*time.Second, "each measurement's length")
	minGain := flag.Float64("min-gain", 1.2, "target: the quiet p99 beside the busy practice without a share over with the default share")
	flag.Parse()
	if err := run(*target.Binary, *target.Postgres, *target.Redis, *notes, *clients, *seconds, *minGain); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type measured struct {
	p50, p99 time.Duration
	pages    float64
	refused  int64
}

func run(binary, pgURL, redisURL string, notes, clients int, length time.Duration, minGain float64) error {
	srv, err := benchserver.OnPostgres(binary, pgURL, redisURL, "PRAXIS_COMPANY_CONCURRENCY=100000")
	if err != nil {
		return err
	}
	defer srv.Close()
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 2}}
	busy, err := srv.NewIntegrator(httpc, 1<<30, "")
	if err != nil {
		return err
	}
	customer, err := srv.NewCustomer(busy.Company.ID)
	if err != nil {
		return err
	}
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(srv.DatabaseURL)))
	defer func() { _ = db.Close() }()
	payload := fmt.Sprintf(`{"customer_id":%d,"user_id":null,"appointment_id":null,"noted_on":"2026-03-10","title":"Phone call","text":"Patient called about the blood pressure readings; next check in two weeks."}`, customer)
	if err := benchserver.LoadRecords(db, busy.Company.ID, customer, "notes", payload, notes); err != nil {
		return err
	}
	quiet, err := srv.NewIntegrator(httpc, 1<<20, "")
	if err != nil {
		return err
	}
	patient, err := srv.NewCustomer(quiet.Company.ID)
	if err != nil {
		return err
	}
	pool := sqlstore.DefaultMaxConns()
	env := []string{"PRAXIS_DATABASE_URL=" + srv.DatabaseURL, "PRAXIS_REDIS_URL=" + redisURL, "PRAXIS_BLOB_URL=file://" + filepath.Join(srv.Dir, "files")}
	shares := []struct {
		name  string
		share int
	}{{"no share", 100000}, {fmt.Sprintf("share %d (the default: half the pool)", max(2, pool/2)), 0}, {fmt.Sprintf("share %d (the whole pool)", pool), pool},
		{fmt.Sprintf("share %d (a quarter of the pool)", max(1, pool/4)), max(1, pool/4)}}
	results := map[string][]measured{}
	var alone []time.Duration
	for round := range 2 {
		for _, sh := range shares {
			s, err := benchserver.Start(binary, append(env, "PRAXIS_COMPANY_CONCURRENCY="+strconv.Itoa(sh.share))...)
			if err != nil {
				return err
			}
			if round == 0 && len(alone) == 0 {
				alone = quietReads(httpc, s.URL, quiet.Token, patient, length)
			}
			m := beside(httpc, s.URL, busy.Token, quiet.Token, patient, clients, length)
			s.Stop()
			results[sh.name] = append(results[sh.name], m)
		}
	}
	a50, a99 := benchserver.Percentile(alone, 50), benchserver.Percentile(alone, 99)
	fmt.Printf("quiet practice's GET customers/{id} alone: p50 %.2f ms, p99 %.2f ms (%d reads)\n", ms(a50), ms(a99), len(alone))
	for _, sh := range shares {
		for i, m := range results[sh.name] {
			fmt.Printf("beside %d clients paging 500 notes at a time, %s, round %d: quiet p50 %.2f ms, p99 %.2f ms (%.1f× alone); busy %.0f pages/s, %d refused 429\n",
				clients, sh.name, i+1, ms(m.p50), ms(m.p99), float64(m.p99)/float64(a99), m.pages, m.refused)
		}
	}
	// The comparison within each round: the same load, no share against the default.
	worst := 0.0
	for i := range results[shares[0].name] {
		gain := float64(results[shares[0].name][i].p99) / float64(results[shares[1].name][i].p99)
		if i == 0 || gain < worst {
			worst = gain
		}
	}
	fmt.Printf("the quiet practice's p99 beside the busy one, without a share over with the default share: %.2f at worst (target ≥ %.2f; 1: no gain)\n", worst, minGain)
	if worst < minGain {
		return fmt.Errorf("target missed")
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// quietReads reads the patient one request after the other for length:
// each answer's latency.
func quietReads(c *http.Client, base, token string, patient int64, length time.Duration) []time.Duration {
	var out []time.Duration
	url := base + "/api/oauth/v2/resource/customers/" + strconv.FormatInt(patient, 10)
	for end := time.Now().Add(length); time.Now().Before(end); {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		t0 := time.Now()
		resp, err := c.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				out = append(out, time.Since(t0))
			}
		}
	}
	return out
}

// beside measures the quiet reads while the busy practice's clients page.
func beside(c *http.Client, base, busyToken, quietToken string, patient int64, clients int, length time.Duration) measured {
	stop := make(chan struct{})
	var pages, refused atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			var buf bytes.Buffer
			cursor := ""
			for {
				select {
				case <-stop:
					return
				default:
				}
				p, err := benchserver.FetchSyncPage(c, &buf, base, busyToken, "notes", "limit=500"+cursor)
				if err != nil { // 429 company-busy: as Retry-After says
					if bytes.Contains(buf.Bytes(), []byte(`"company-busy"`)) {
						refused.Add(1)
					}
					time.Sleep(time.Second)
					continue
				}
				pages.Add(1)
				cursor = "&cursor=" + p.Next
				if !p.More {
					cursor = ""
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // the busy practice at full pace
	t0 := time.Now()
	reads := quietReads(c, base, quietToken, patient, length)
	elapsed := time.Since(t0)
	close(stop)
	wg.Wait()
	return measured{p50: benchserver.Percentile(reads, 50), p99: benchserver.Percentile(reads, 99),
		pages: float64(pages.Load()) / elapsed.Seconds(), refused: refused.Load()}
}
