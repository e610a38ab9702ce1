package sqlstore

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// The change clock of the sync feed (docs/contract.md §4). Every write is stamped
// with its transaction's change; a feed serves only changes no open
// transaction can still undercut, so a client following its cursor never
// skips a write that commits late.
//
// PostgreSQL: the stamp is the transaction id (pg_current_xact_id), and only
// stamps below the snapshot's xmin are served: every transaction below xmin
// has ended, and every later one gets a larger id.
// SQLite: one writer at a time (transactions BEGIN IMMEDIATE), so a counter
// bumped inside the write transaction is already in commit order.

// nextChange stamps a write; db must be a transaction.
func nextChange(ctx context.Context, db bun.IDB) (int64, error) {
	var change int64
	var err error
	if db.Dialect().Name() == dialect.PG {
		err = acrossCompanies(db, "the change clock is one for all companies").NewRaw("SELECT pg_current_xact_id()::text::bigint").Scan(ctx, &change)
	} else {
		err = acrossCompanies(db, "the change clock is one for all companies").NewRaw("UPDATE change_clock SET value = value + 1 RETURNING value").Scan(ctx, &change)
	}
	return change, translate(err)
}

// settledChanges limits a feed query to changes no open transaction can undercut.
func settledChanges(q *bun.SelectQuery) *bun.SelectQuery {
	if q.Dialect().Name() == dialect.PG {
		return q.Where("change < pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
	}
	return q
}
