package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

// TestRestoreSourceHoldsTheSchema: a restore's source opens when its
// schema is this build's, and is refused when a migration is missing or
// unknown, when it holds no praxis schema, or (SQLite) when the file does
// not exist — which the check does not make.
func TestRestoreSourceHoldsTheSchema(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "praxis.db") },
		"postgres": func(t *testing.T) string { return testenv.PostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			open := func(u string) error {
				src, err := sqlstore.RestoreSources{}.Open(ctx, u)
				if err == nil {
					_ = src.Close()
				}
				return err
			}
			other := url(t)
			plain, err := sqlstore.Open(other)
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			if _, err := plain.ExecContext(ctx, "CREATE TABLE notes (body text)"); err != nil {
				t.Fatal(err)
			}
			if err := open(other); !errors.Is(err, domain.ErrNotPraxisDatabase) {
				t.Errorf("a database of something else: %v", err)
			}
			u := url(t)
			db := migrated(t, u)
			if err := open(u); err != nil {
				t.Fatalf("a migrated database: %v", err)
			}
			if _, err := db.NewRaw("INSERT INTO bun_migrations (name, group_id, migrated_at) VALUES ('29991231000000_future', 99, CURRENT_TIMESTAMP)").Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if err := open(u); !errors.Is(err, domain.ErrSchemaDiffers) || !strings.Contains(err.Error(), "29991231000000_future is unknown") {
				t.Errorf("a newer schema: %v", err)
			}
			var last string
			if err := db.NewRaw("SELECT max(name) FROM bun_migrations WHERE name < '2999'").Scan(ctx, &last); err != nil {
				t.Fatal(err)
			}
			if _, err := db.NewRaw("DELETE FROM bun_migrations WHERE name IN (?, '29991231000000_future')", last).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if err := open(u); !errors.Is(err, domain.ErrSchemaDiffers) || !strings.Contains(err.Error(), last+" is not applied") {
				t.Errorf("an older schema: %v", err)
			}
			if name == "sqlite" {
				missing := filepath.Join(t.TempDir(), "gone.db")
				if err := open("sqlite:" + missing); err == nil {
					t.Error("a missing file opened")
				}
				if _, err := os.Stat(missing); !os.IsNotExist(err) {
					t.Errorf("the check made the missing file: %v", err)
				}
			}
		})
	}
}
