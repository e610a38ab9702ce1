package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/ports/porttest"
	"github.com/praxis-health/praxis/test/testenv"
)

func TestRepositoriesSQLite(t *testing.T) {
	t.Parallel()
	porttest.RunRepositorySuite(t, func(t *testing.T) porttest.Repositories {
		return repositories(t, "sqlite:"+filepath.Join(t.TempDir(), "praxis.db"))
	})
}

func TestRepositoriesPostgres(t *testing.T) {
	t.Parallel()
	porttest.RunRepositorySuite(t, func(t *testing.T) porttest.Repositories {
		return repositories(t, testenv.PostgresURL(t))
	})
}

func repositories(t *testing.T, url string) porttest.Repositories {
	t.Helper()
	return repositoriesOn(migrated(t, url))
}

func migrated(t *testing.T, url string) *bun.DB {
	t.Helper()
	db, err := sqlstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := sqlstore.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	// Migrating twice is a no-op: replicas and the Helm hook may both run it.
	if err := sqlstore.Migrate(context.Background(), db); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	return db
}

func repositoriesOn(db *bun.DB) porttest.Repositories {
	return porttest.Repositories{
		Tx:        sqlstore.NewTransactor(db),
		Companies: sqlstore.NewCompanyRepository(db),
		Customers: sqlstore.NewCustomerRepository(db),
		Files:     sqlstore.NewFileRepository(db),
		Clients:   sqlstore.NewClientRepository(db),
	}
}

func TestRecordStoreSQLite(t *testing.T) {
	t.Parallel()
	porttest.RunRecordStoreSuite(t, func(t *testing.T) porttest.RecordRepositories {
		return recordRepositories(t, "sqlite:"+filepath.Join(t.TempDir(), "praxis.db"))
	})
}

func TestRecordStorePostgres(t *testing.T) {
	t.Parallel()
	porttest.RunRecordStoreSuite(t, func(t *testing.T) porttest.RecordRepositories {
		return recordRepositories(t, testenv.PostgresURL(t))
	})
}

func recordRepositories(t *testing.T, url string) porttest.RecordRepositories {
	t.Helper()
	db := migrated(t, url)
	return porttest.RecordRepositories{Repositories: repositoriesOn(db), Records: sqlstore.NewRecordStore(db)}
}
