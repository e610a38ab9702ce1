package app

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// batches is a store's backfill that answers the batch sizes it is given,
// then 0 (none left), and counts its calls.
type batches struct {
	sizes []int
	err   error
	calls int
}

func (b *batches) IndexCustomers(context.Context, int64) (int, error) {
	b.calls++
	if b.err != nil {
		return 0, b.err
	}
	if len(b.sizes) == 0 {
		return 0, nil
	}
	n := b.sizes[0]
	b.sizes = b.sizes[1:]
	return n, nil
}

// TestTheBackfillLooksAgainAfterAMinute: a pass indexes batches until none
// is left; the passes of the next minute do not ask the store; the first
// after it does, and indexes what a server of the previous build wrote
// meanwhile; a failed batch is tried again at the next pass.
func TestTheBackfillLooksAgainAfterAMinute(t *testing.T) {
	t.Parallel()
	store := &batches{sizes: []int{500, 500, 3}}
	p := &patientIndexer{store: store, logger: slog.New(slog.DiscardHandler)}
	ctx, t0 := context.Background(), time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	p.pass(ctx, t0)
	if store.calls != 4 || len(store.sizes) != 0 {
		t.Fatalf("the first pass asked %d times, left %v; want 4 (three batches and the empty one)", store.calls, store.sizes)
	}
	for _, later := range []time.Duration{time.Second, 30 * time.Second, patientIndexRecheck - time.Second} {
		p.pass(ctx, t0.Add(later))
	}
	if store.calls != 4 {
		t.Fatalf("within the minute the store was asked %d times, want none after the first pass", store.calls-4)
	}
	store.sizes = []int{7} // written by a server of the previous build
	p.pass(ctx, t0.Add(patientIndexRecheck))
	if store.calls != 6 || len(store.sizes) != 0 {
		t.Fatalf("after the minute: %d calls, left %v; want the batch of 7 and the empty one", store.calls, store.sizes)
	}
	// A failure leaves the pass undone: the next one asks again, however soon.
	store.err = errors.New("the database is away")
	at := t0.Add(2 * patientIndexRecheck)
	p.pass(ctx, at)
	store.err = nil
	p.pass(ctx, at.Add(time.Second))
	if store.calls != 8 {
		t.Fatalf("after a failed pass the store was asked %d times in all, want 8 (the failure, then the retry a second later)", store.calls)
	}
}
