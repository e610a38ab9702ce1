// Package sqlstore implements praxis's repositories with bun, on PostgreSQL
// and on SQLite (the embedded default) from the same code.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/pgdriver"
	_ "modernc.org/sqlite" // pure-Go SQLite, registers driver "sqlite"
)

// Open connects to the database a PRAXIS_DATABASE_URL names:
// postgres://… (or postgresql://…) for PostgreSQL, sqlite:PATH for SQLite.
func Open(databaseURL string) (*bun.DB, error) {
	switch {
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		// Bounded waits: a frozen or unreachable database fails a request in
		// seconds (then 503), never holds it. The URL's own settings win.
		// The driver's own span attributes are off (older names: db.user,
		// db.name); Instrument gives the query spans theirs.
		sqldb := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDialTimeout(5*time.Second), pgdriver.WithReadTimeout(10*time.Second),
			pgdriver.WithWriteTimeout(5*time.Second), pgdriver.WithDSN(databaseURL), pgdriver.WithTracing(false)))
		sqldb.SetMaxOpenConns(20)
		sqldb.SetMaxIdleConns(20)
		return bun.NewDB(sqldb, pgdialect.New()), nil
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
