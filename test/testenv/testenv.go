// Package testenv gives tests real servers: a fresh PostgreSQL database per
// test from PRAXIS_TEST_POSTGRES_URL (default: the local server). When none
// can be reached the test skips loudly, except under CI=true, where it fails.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"
)

const defaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PostgresURL creates an empty database for this test and returns its URL;
// the database is dropped when the test ends.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("PRAXIS_TEST_POSTGRES_URL")
	if base == "" {
		base = defaultPostgresURL
	}
	admin := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(base)))
	t.Cleanup(func() { _ = admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		unavailable(t, "PostgreSQL", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "praxis_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("PRAXIS_TEST_POSTGRES_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// unavailable skips, loudly, or fails under CI=true.
func unavailable(t testing.TB, what string, err error) {
	t.Helper()
	SkipOrFail(t, fmt.Sprintf("%s unreachable (%v): set PRAXIS_TEST_POSTGRES_URL / PRAXIS_TEST_REDIS_URL or start the server", what, err))
}

// Missing skips a test whose tool (a Node linter, a code generator) cannot
// be had here, loudly; under CI=true it fails, since CI installs every tool.
func Missing(t testing.TB, what string, err error) {
	t.Helper()
	SkipOrFail(t, fmt.Sprintf("%s missing (%v): run `make tools node-tools` (or .ci/run)", what, err))
}

// SkipOrFail skips t loudly with msg, or fails it under CI=true, where
// every part is installed.
func SkipOrFail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true: %s", msg)
	}
	fmt.Fprintf(os.Stderr, "\n*** SKIPPING: %s ***\n\n", msg)
	t.Skip(msg)
}
