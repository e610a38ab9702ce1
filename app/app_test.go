package app

import (
	"runtime"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/adapters/sqlstore"

	"go.uber.org/fx"
)

// TestGraphsAreComplete catches a missing or mistyped provider at test time, not at start-up.
func TestGraphsAreComplete(t *testing.T) {
	t.Parallel()
	cfg := Config{HTTPAddr: "127.0.0.1:0", DatabaseURL: "sqlite::memory:", BlobURL: "mem://", AutoMigrate: true}
	for name, opts := range map[string]fx.Option{"server": Options(cfg), "admin": AdminOptions(cfg)} {
		if err := fx.ValidateApp(opts); err != nil {
			t.Errorf("%s graph: %v", name, err)
		}
	}
}

func TestNormalizeBlobURL(t *testing.T) {
	t.Parallel()
	got, err := normalizeBlobURL("file://data/files")
	if err != nil {
		t.Fatal(err)
	}
	if want := "create_dir=true&metadata=skip&no_tmp_dir=true"; got[:7] != "file://" || got[7] != '/' || got[len(got)-len(want):] != want {
		t.Errorf("normalizeBlobURL = %q, want an absolute file:// URL ending in %q", got, want)
	}
	if got, _ := normalizeBlobURL("file:///srv/x?metadata=skip&create_dir=false"); got != "file:///srv/x?create_dir=false&metadata=skip&no_tmp_dir=true" {
		t.Errorf("explicit parameters must win, got %q", got)
	}
	if got, _ := normalizeBlobURL("s3://bucket?region=eu-central-1"); got != "s3://bucket?region=eu-central-1" {
		t.Errorf("non-file URLs pass unchanged, got %q", got)
	}
}

func TestTrustedProxies(t *testing.T) {
	t.Setenv("PRAXIS_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.7,fd00::/8")
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Proxies()
	if len(got) != 3 || got[0].String() != "10.0.0.0/8" || got[1].String() != "192.168.1.7/32" || got[2].String() != "fd00::/8" {
		t.Errorf("proxies %v", got)
	}
	t.Setenv("PRAXIS_TRUSTED_PROXIES", "10.0.0.0/8, ingress")
	if _, err := LoadConfig(); err == nil || !strings.Contains(err.Error(), "PRAXIS_TRUSTED_PROXIES") {
		t.Errorf("a name instead of an address: %v", err)
	}
}

// TestDatabaseMaxConns: the pool is as wide as PRAXIS_DATABASE_MAX_CONNS
// says, four per CPU and at least 8 when it says 0, and a negative width is
// refused.
func TestDatabaseMaxConns(t *testing.T) {
	for _, c := range []struct {
		env  string
		want int
	}{{"3", 3}, {"0", max(8, 4*runtime.GOMAXPROCS(0))}} {
		t.Setenv("PRAXIS_DATABASE_MAX_CONNS", c.env)
		cfg, err := LoadConfig()
		if err != nil {
			t.Fatal(err)
		}
		db, err := sqlstore.OpenPool("postgres://praxis@127.0.0.1:1/praxis", cfg.DatabaseMaxConns) // opening dials nothing
		if err != nil {
			t.Fatal(err)
		}
		if got := db.DB.Stats().MaxOpenConnections; got != c.want {
			t.Errorf("PRAXIS_DATABASE_MAX_CONNS=%s: a pool of %d, want %d", c.env, got, c.want)
		}
		_ = db.Close()
	}
	t.Setenv("PRAXIS_DATABASE_MAX_CONNS", "-1")
	if _, err := LoadConfig(); err == nil || !strings.Contains(err.Error(), "PRAXIS_DATABASE_MAX_CONNS") {
		t.Errorf("a negative pool: %v", err)
	}
}
