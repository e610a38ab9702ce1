// Package sqlstore implements praxis's repositories with bun, on PostgreSQL
// and on SQLite (the embedded default) from the same code.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/praxis-health/praxis/adapters/internal/redact"
	_ "modernc.org/sqlite" // pure-Go SQLite, registers driver "sqlite"
)

// Open connects to the database a PRAXIS_DATABASE_URL names:
// postgres://… (or postgresql://…) for PostgreSQL, sqlite:PATH for SQLite.
func Open(databaseURL string) (*bun.DB, error) { return OpenPool(databaseURL, 0) }

// OpenPool is Open with at most maxConns connections to PostgreSQL (0:
// DefaultMaxConns). SQLite keeps its one.
func OpenPool(databaseURL string, maxConns int) (*bun.DB, error) {
	switch {
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		if maxConns <= 0 {
			maxConns = DefaultMaxConns()
		}
		return openPostgres(databaseURL, maxConns)
	case strings.HasPrefix(databaseURL, "sqlite:"):
		dsn, err := sqliteDSN(strings.TrimPrefix(databaseURL, "sqlite:"))
		if err != nil {
			return nil, err
		}
		sqldb, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, err
		}
		// SQLite has one writer; one connection per process turns lock
		// contention inside the process into queueing, and busy_timeout
		// covers the other processes (admin commands) on the same file.
		sqldb.SetMaxOpenConns(1)
		return bun.NewDB(sqldb, sqlitedialect.New()), nil
	default:
		return nil, fmt.Errorf("database url: want postgres://… or sqlite:PATH, got scheme of %q", redactURL(databaseURL))
	}
}

// openPostgres connects through pgx (docs/contract.md §5, "Failover"): it
// takes a URL of several hosts, postgres://a:5432,b:5432/praxis, and with
// target_session_attrs=read-write connects to the one that takes writes,
// trying the others in turn; bun's own pgdriver dials one address and
// passes unknown settings on as SET, so the attribute broke its connection.
// The URL's own settings win over the defaults here: connect_timeout 5 s,
// and queries sent as text in one round trip (default_query_exec_mode
// simple_protocol; bun writes its arguments into the text, so a statement
// cache would fill with texts never sent again: the few hot statements ask
// for a prepared statement each, see prepared.go).
func openPostgres(databaseURL string, maxConns int) (*bun.DB, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		// pgx's message quotes the URL, and so does a url.Error inside it:
		// ours names what is wrong and never the URL, which holds a password.
		if inner := redact.URLError(err); inner != nil {
			return nil, fmt.Errorf("database url: %w", inner)
		}
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) && errors.Unwrap(pe) != nil {
			return nil, fmt.Errorf("database url: %w", errors.Unwrap(pe))
		}
		return nil, errors.New("database url: cannot be parsed")
	}
	if !strings.Contains(databaseURL, "connect_timeout=") {
		cfg.ConnectTimeout = 5 * time.Second
	}
	if !strings.Contains(databaseURL, "default_query_exec_mode=") {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	// A peer that vanishes without a word (packets dropped, a host gone)
	// is noticed on an idle connection within about 20 s, and a write that
	// is never acknowledged fails after 10 s, instead of the kernel's
	// minutes; the request's own deadline ends its wait earlier still.
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: 5 * time.Second, Interval: 5 * time.Second, Count: 3}, Control: userTimeout(10 * time.Second)}
	cfg.DialFunc = dialer.DialContext
	sqldb := stdlib.OpenDB(*cfg)
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns)
	return bun.NewDB(sqldb, pgdialect.New()), nil
}

// DefaultMaxConns is a replica's PostgreSQL connections when the
// configuration names no number: four for each CPU it may use
// (GOMAXPROCS), at least 8. A pool about as wide as the CPUs keeps each
// backend busy: on the GET company load (32 requests in flight, 2 CPUs) 8
// connections cost PostgreSQL 54 µs of CPU a request and 20 cost it 61,
// each query then waking a backend that had gone to sleep (make bench,
// oauth).
func DefaultMaxConns() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

func sqliteDSN(path string) (string, error) {
	if path == "" {
		return "", errors.New("database url: sqlite: needs a path")
	}
	if path != ":memory:" {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return "", fmt.Errorf("database directory: %w", err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// Writers take the lock at BEGIN, so two transactions never deadlock upgrading read locks.
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode(), nil
}

// redactURL keeps the scheme only: database URLs carry passwords.
func redactURL(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		return s[:i] + "://…"
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i] + ":…"
	}
	return "…"
}

// HealthCheck asks the database for /readyz.
type HealthCheck struct{ DB *bun.DB }

func (HealthCheck) Name() string { return "database" }

// Check asks the database whether it is there and takes writes: a ping
// alone passes on a read-only standby, which is what a failover leaves the
// old primary as, while every write fails (docs/contract.md §5).
func (h HealthCheck) Check(ctx context.Context) error {
	if h.DB.Dialect().Name() != dialect.PG {
		return h.DB.PingContext(ctx)
	}
	var readOnly string
	err := acrossCompanies(h.DB, "a setting of the transaction names no table").
		NewRaw("SELECT current_setting('transaction_read_only')").Scan(ctx, &readOnly)
	if err != nil {
		return translate(err)
	}
	if readOnly != "off" {
		return ErrReadOnly
	}
	return nil
}

// ErrReadOnly is a database that answers but takes no writes (a standby).
var ErrReadOnly = errors.New("the database takes no writes (transaction_read_only is on: a standby, or a primary that was demoted)")
