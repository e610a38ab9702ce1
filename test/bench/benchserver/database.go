package benchserver

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"

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
