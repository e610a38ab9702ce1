package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
)

// TestRevocationsReachEveryReplica: a key one replica buries is refused by
// another after its next read; a list not read for tombstoneStale refuses
// everything with 503 rather than trust Redis alone.
func TestRevocationsReachEveryReplica(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open("sqlite:" + filepath.Join(t.TempDir(), "praxis.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := sqlstore.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	one, other := NewRevocations(sqlstore.NewTombstones(db), slog.Default()), NewRevocations(sqlstore.NewTombstones(db), slog.Default())
	for _, r := range []*Revocations{one, other} {
		if err := r.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	key := tombstoneKey("token", "hash")
	if err := one.check(key); err != nil {
		t.Fatalf("before: %v", err)
	}
	if err := one.bury(ctx, key, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := one.check(key); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the burying replica: %v, want not found at once", err)
	}
	if err := other.check(key); err != nil {
		t.Errorf("the other replica before its read: %v", err)
	}
	if err := other.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.check(key); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the other replica after its read: %v, want not found", err)
	}
	if err := other.check(tombstoneKey("session", "hash")); err != nil {
		t.Errorf("another kind of the same name: %v", err)
	}
	other.now = func() time.Time { return time.Now().Add(tombstoneStale + time.Second) }
	if err := other.check(tombstoneKey("token", "fresh")); !errors.Is(err, domain.ErrUnavailable) {
		t.Errorf("a stale list: %v, want unavailable", err)
	}
	other.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if err := other.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if len(other.keys) != 0 {
		t.Errorf("%d keys kept past their time", len(other.keys))
	}
}
