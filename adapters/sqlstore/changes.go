package sqlstore

import (
	"context"
	"sync"
	"time"

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

// FeedHorizon tells how long the sync feed and the webhooks' change feed
// have been held back: on PostgreSQL a change is served once no transaction
// below it is open, so one long transaction anywhere on the server (a
// forgotten psql session, a stuck migration) holds back every company's
// feed for as long as it stays open. SQLite's feed is never held back.
type FeedHorizon struct {
	db    *bun.DB
	mu    sync.Mutex
	xmin  int64
	since time.Time
}

func NewFeedHorizon(db *bun.DB) *FeedHorizon { return &FeedHorizon{db: db} }

// HeldBack answers how long, as of now, the oldest open transaction has
// held the horizon where it is while later changes committed (and wait):
// zero when nothing waits. It is measured
// between calls (a metrics scrape each), so it is exact to one interval.
// ok is false on SQLite.
func (h *FeedHorizon) HeldBack(ctx context.Context, now time.Time) (held time.Duration, ok bool, err error) {
	if h.db.Dialect().Name() != dialect.PG {
		return 0, false, nil
	}
	var xmin, xmax int64
	err = acrossCompanies(h.db, "the metrics read how far the sync feed is held back, one horizon for all companies").
		NewRaw("SELECT pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint FROM pg_current_snapshot() AS s").
		Scan(ctx, &xmin, &xmax)
	if err != nil {
		return 0, true, translate(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if xmin == xmax { // no change committed after a transaction still open
		h.xmin, h.since = 0, time.Time{}
		return 0, true, nil
	}
	if xmin != h.xmin {
		h.xmin, h.since = xmin, now
	}
	return now.Sub(h.since), true, nil
}
