package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/adapters/sqlstore"
)

// TestFeedHorizon: an open transaction holds back the changes committed
// after it for as long as it stays open, and no longer; SQLite's feed is never held back.
func TestFeedHorizon(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		h := sqlstore.NewFeedHorizon(db)
		if db.Dialect().Name() != dialect.PG {
			if held, ok, err := h.HeldBack(ctx, time.Now()); ok || held != 0 || err != nil {
				t.Errorf("SQLite: held %v, ok %v, %v", held, ok, err)
			}
			return
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		if _, err := tx.ExecContext(ctx, "SELECT pg_current_xact_id()"); err != nil { // takes a transaction id
			t.Fatal(err)
		}
		// A change committed after it waits for it.
		if _, err := db.ExecContext(ctx, "SELECT pg_current_xact_id()"); err != nil {
			t.Fatal(err)
		}
		// Measured between calls: time is what the caller says it is. Other
		// tests' short transactions on the server may be older than this one
		// for a moment; then the horizon moves on to this one and stays.
		start := time.Now()
		var held time.Duration
		for i := 0; i < 200 && held < time.Minute; i++ {
			if held, _, err = h.HeldBack(ctx, start.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if held < time.Minute {
			t.Fatalf("an open transaction held the feed %v, want a minute or more", held)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		// Another test's transaction older than this one may still hold the
		// horizon for a while: it ends too.
		end := start.Add(time.Hour)
		for i := 0; i < 1000; i++ {
			if held, _, err = h.HeldBack(ctx, end); err != nil || held == 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if held != 0 || err != nil {
			t.Errorf("after the commit: held %v, %v", held, err)
		}
	})
}
