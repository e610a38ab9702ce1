package benchserver

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/uptrace/bun/driver/pgdriver"
)

// EnvOr is the environment variable name, or def when it is unset.
func EnvOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// FreshDatabase creates an empty database on the server of base and returns
// its URL and a function that drops it.
func FreshDatabase(base string) (string, func(), error) {
	admin := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(base)))
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "praxis_bench_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		_ = admin.Close()
		return "", nil, fmt.Errorf("PostgreSQL at %s: %w", base, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		_ = admin.Close()
	}, nil
}

// Deployment is a server on a fresh PostgreSQL database, Redis and a
// temporary blob directory.
type Deployment struct {
	*Server
	DatabaseURL string
	// Dir holds the blobs under Dir/files and whatever else the program writes.
	Dir     string
	cleanup []func()
}

// OnPostgres starts binary on a fresh database of the server at pgURL, on
// Redis at redisURL and local files, with env besides. Close stops it and removes what it made.
func OnPostgres(binary, pgURL, redisURL string, env ...string) (*Deployment, error) {
	dbURL, drop, err := FreshDatabase(pgURL)
	if err != nil {
		return nil, err
	}
	d := &Deployment{DatabaseURL: dbURL, cleanup: []func(){drop}}
	if d.Dir, err = os.MkdirTemp("", "praxis-bench-"); err != nil {
		d.Close()
		return nil, err
	}
	d.cleanup = append(d.cleanup, func() { _ = os.RemoveAll(d.Dir) })
	d.Server, err = Start(binary, append([]string{"PRAXIS_DATABASE_URL=" + dbURL, "PRAXIS_REDIS_URL=" + redisURL,
		"PRAXIS_BLOB_URL=file://" + filepath.Join(d.Dir, "files")}, env...)...)
	if err != nil {
		d.Close()
		return nil, err
	}
	d.cleanup = append(d.cleanup, d.Stop)
	return d, nil
}

// Close stops the server and removes the database and the directory.
func (d *Deployment) Close() {
	for i := len(d.cleanup) - 1; i >= 0; i-- {
		d.cleanup[i]()
	}
}

// Target is where a load program runs: the binary, the PostgreSQL server and Redis.
type Target struct{ Binary, Postgres, Redis *string }

// TargetFlags declares the flags every load program on PostgreSQL takes.
func TargetFlags() Target {
	return Target{
		Binary: flag.String("binary", "bin/praxis", "the praxis binary"),
		Postgres: flag.String("postgres", EnvOr("PRAXIS_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
			"PostgreSQL server (a fresh database is created on it)"),
		Redis: flag.String("redis", EnvOr("PRAXIS_TEST_REDIS_URL", "redis://127.0.0.1:6379/0"), "Redis server"),
	}
}
