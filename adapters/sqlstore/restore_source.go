package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// RestoreSources opens copies of the database for the company restore.
type RestoreSources struct{}

var _ ports.RestoreSources = RestoreSources{}

// restoreSource is one copy: the record store's own reads on its connection.
type restoreSource struct {
	*RecordStore
	companies *CompanyRepository
	db        *bun.DB
}

// Open connects to the copy and holds its schema against this build's
// migrations: every one applied, none unknown.
func (RestoreSources) Open(ctx context.Context, databaseURL string) (ports.RestoreSource, error) {
	if path, ok := strings.CutPrefix(databaseURL, "sqlite:"); ok {
		if _, err := os.Stat(path); err != nil { // Open would make an empty one
			return nil, fmt.Errorf("the source %s: %w", path, err)
		}
	}
	db, err := OpenPool(databaseURL, 2)
	if err != nil {
		return nil, err
	}
	if err := holdSchema(ctx, db); err != nil {
		_ = db.Close()
		return nil, err
	}
	return &restoreSource{RecordStore: NewRecordStore(db), companies: NewCompanyRepository(db), db: db}, nil
}

func (s *restoreSource) Company(ctx context.Context, id domain.CompanyID) (domain.Company, error) {
	return s.companies.Get(ctx, id)
}

func (s *restoreSource) Close() error { return s.db.Close() }

// holdSchema answers domain.ErrNotPraxisDatabase for a database without
// praxis's migrations table or companies, domain.ErrSchemaDiffers (naming
// the first difference) for one migrated to another schema.
func holdSchema(ctx context.Context, db *bun.DB) error {
	var tables []string
	query := "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('bun_migrations', 'companies', 'records')"
	if db.Dialect().Name() == dialect.PG {
		query = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('bun_migrations', 'companies', 'records')"
	}
	if err := acrossCompanies(db, "the schema walk reads the catalogue, which names no company").NewRaw(query).Scan(ctx, &tables); err != nil {
		return translate(err)
	}
	if len(tables) < 3 {
		return domain.ErrNotPraxisDatabase
	}
	var applied []string
	if err := acrossCompanies(db, "the schema walk reads the catalogue, which names no company").NewRaw("SELECT name FROM bun_migrations").Scan(ctx, &applied); err != nil {
		return translate(err)
	}
	known, err := migrationNames(db)
	if err != nil {
		return err
	}
	for _, name := range known {
		if !slices.Contains(applied, name) {
			return fmt.Errorf("%w: migration %s is not applied (run praxis migrate against it)", domain.ErrSchemaDiffers, name)
		}
	}
	for _, name := range applied {
		if !slices.Contains(known, name) {
			return fmt.Errorf("%w: migration %s is unknown to this build (it is newer)", domain.ErrSchemaDiffers, name)
		}
	}
	return nil
}

// migrationNames are the names of this build's migrations for db's dialect.
func migrationNames(db *bun.DB) ([]string, error) {
	ms, err := migrations(db)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range ms.Sorted() {
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return nil, errors.New("this build has no migrations")
	}
	return names, nil
}

// migrations discovers the embedded migrations of db's dialect.
func migrations(db *bun.DB) (*migrate.Migrations, error) {
	dir := "migrations/sqlite"
	if db.Dialect().Name() == dialect.PG {
		dir = "migrations/postgres"
	}
	sub, err := fs.Sub(migrationFiles, dir)
	if err != nil {
		return nil, err
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(sub); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	return ms, nil
}
