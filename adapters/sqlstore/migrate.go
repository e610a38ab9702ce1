package sqlstore

import (
	"context"
	"embed"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// Migrations are timestamped SQL files, one set per dialect, embedded in the binary.
//
//go:embed migrations
var migrationFiles embed.FS

// Migrate applies every pending migration. Replicas starting together
// serialise on the migrator's lock table.
func Migrate(ctx context.Context, db *bun.DB) error {
	ms, err := migrations(db)
	if err != nil {
		return err
	}
	migrator := migrate.NewMigrator(db, ms, migrate.WithMarkAppliedOnSuccess(true))
	if err := migrator.Init(ctx); err != nil {
		return fmt.Errorf("init migrations: %w", err)
	}
	if err := migrator.Lock(ctx); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer func() { _ = migrator.Unlock(context.WithoutCancel(ctx)) }()
	if _, err := migrator.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
