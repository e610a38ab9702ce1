package sqlstore_test

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/ports"
)

// TestTombstones: a key buried is read back while in force, by the time it
// was buried; an expired one is neither read nor kept by Prune.
func TestTombstones(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		store := sqlstore.NewTombstones(db)
		now := time.Now()
		live, dead := sha256.Sum256([]byte("live")), sha256.Sum256([]byte("dead"))
		if err := store.Bury(ctx, live, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := store.Bury(ctx, dead, now.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		got, err := store.Since(ctx, now.Add(-time.Minute), now)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Key != live || got[0].Until.UnixMilli() != now.Add(time.Hour).UnixMilli() {
			t.Fatalf("in force: %+v, want the live key alone", got)
		}
		later, err := store.Since(ctx, now.Add(time.Minute), now)
		if err != nil || len(later) != 0 {
			t.Fatalf("buried after a minute from now: %+v %v, want none", later, err)
		}
		n, err := store.Prune(ctx, now)
		if err != nil || n != 1 {
			t.Fatalf("pruned %d %v, want the expired one", n, err)
		}
		var all []ports.Tombstone
		if all, err = store.Since(ctx, time.Time{}, time.Time{}); err != nil || len(all) != 1 {
			t.Fatalf("after pruning: %+v %v, want the live key", all, err)
		}
	})
}
