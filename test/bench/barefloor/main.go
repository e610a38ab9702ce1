// Command barefloor is an independent floor of an authenticated GET of the
// company, written without any of praxis's code: a bare net/http server
// that does what that request must and no more — the Redis GET of the
// token's grant (the key praxis's token store uses), the SELECT of the
// company by id (a prepared statement on a pgx pool), and the request's
// audit row, hash-chained per company, written by a plain group commit:
// one multi-row INSERT of whatever waited, at most 1 ms after the first,
// the answer sent once that INSERT committed. The OAuth load program runs
// it beside praxis (the other floor, test/bench/floor, goes through
// praxis's own adapters and auditor).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	database := flag.String("database", "", "PostgreSQL URL")
	redisURL := flag.String("redis", "", "Redis URL")
	prefix := flag.String("prefix", "praxis:", "Redis key prefix")
	flag.Parse()
	if err := run(*addr, *database, *redisURL, *prefix); err != nil {
		fmt.Fprintln(os.Stderr, "barefloor:", err)
		os.Exit(1)
	}
}

// event is one request's audit row, waiting for its group commit.
type event struct {
	company string
	body    []byte
	done    chan error
}

func run(addr, database, redisURL, prefix string) error {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, database)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS barefloor_audit (
		company_id uuid NOT NULL, seq bigint NOT NULL, hash bytea NOT NULL, event jsonb NOT NULL,
		PRIMARY KEY (company_id, seq))`); err != nil {
		return err
	}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)
	defer func() { _ = rdb.Close() }()

	events := make(chan event, 4096)
	go groupCommit(ctx, pool, events)
	http.HandleFunc("GET /company", func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		sum := sha256.Sum256([]byte(token))
		raw, err := rdb.Get(r.Context(), prefix+"token:"+hex.EncodeToString(sum[:])).Bytes()
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var grant struct {
			Client  string `json:"cl"`
			Company string `json:"co"`
		}
		if json.Unmarshal(raw, &grant) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var company struct {
			ID, Name, TimeZone, Plan string
			Quota, Used              int64
			Created, Updated         time.Time
		}
		err = pool.QueryRow(r.Context(), "SELECT id::text, name, time_zone, plan, storage_quota, storage_used, created_at, updated_at FROM companies WHERE id = $1",
			grant.Company).Scan(&company.ID, &company.Name, &company.TimeZone, &company.Plan, &company.Quota, &company.Used, &company.Created, &company.Updated)
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		body, _ := json.Marshal(map[string]any{"at": time.Now().UTC(), "client": grant.Client, "section": "company", "action": "read", "status": 200})
		e := event{company: grant.Company, body: body, done: make(chan error, 1)}
		events <- e
		if err := <-e.done; err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(company)
	})
	return http.ListenAndServe(addr, nil) //nolint:gosec // a benchmark's floor on loopback
}

// groupCommit writes what waited as one INSERT, at most 1 ms after the
// first event of a batch arrived, chaining each company's rows by hash.
func groupCommit(ctx context.Context, pool *pgxpool.Pool, events <-chan event) {
	type head struct {
		seq  int64
		hash []byte
	}
	heads := map[string]head{}
	for first := range events {
		batch := []event{first}
		timer := time.NewTimer(time.Millisecond)
	collect:
		for {
			select {
			case e := <-events:
				batch = append(batch, e)
			case <-timer.C:
				break collect
			}
		}
		var sql strings.Builder
		sql.WriteString("INSERT INTO barefloor_audit (company_id, seq, hash, event) VALUES ")
		args := make([]any, 0, 4*len(batch))
		next := map[string]head{}
		for i, e := range batch {
			h, ok := next[e.company]
			if !ok {
				h = heads[e.company]
			}
			chained := sha256.Sum256(append(append([]byte{}, h.hash...), e.body...))
			h = head{seq: h.seq + 1, hash: chained[:]}
			next[e.company] = h
			if i > 0 {
				sql.WriteString(", ")
			}
			fmt.Fprintf(&sql, "($%d, $%d, $%d, $%d)", 4*i+1, 4*i+2, 4*i+3, 4*i+4)
			args = append(args, e.company, h.seq, h.hash, e.body)
		}
		_, err := pool.Exec(ctx, sql.String(), args...)
		if err == nil {
			for k, h := range next {
				heads[k] = h
			}
		} else {
			err = errors.Join(errors.New("audit group commit"), err)
		}
		for _, e := range batch {
			e.done <- err
		}
	}
}
