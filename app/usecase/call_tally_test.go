package usecase_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/release"
)

// countStore is a store of deprecated-call counts that can be out of reach.
type countStore struct {
	mu    sync.Mutex
	down  bool
	calls map[string]int64 // operation → calls
	adds  int              // statements that reached it
}

func (s *countStore) Count(_ context.Context, _ domain.CompanyID, _ domain.ClientID, operation string, _ time.Time, calls int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return domain.Unavailable(context.DeadlineExceeded)
	}
	s.calls[operation] += calls
	s.adds++
	return nil
}

func (s *countStore) List(context.Context, *domain.CompanyID) ([]release.Calls, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []release.Calls
	for op, n := range s.calls {
		out = append(out, release.Calls{Operation: op, Calls: n})
	}
	return out, nil
}

// TestCallTally: concurrent calls become one statement per operation; a
// store out of reach keeps the counts for the next flush; List and Stop
// flush first.
func TestCallTally(t *testing.T) {
	ctx := context.Background()
	store := &countStore{calls: map[string]int64{}}
	tally := usecase.NewCallTally(store, time.Hour, slog.New(slog.DiscardHandler))
	if err := tally.Start(ctx); err != nil {
		t.Fatal(err)
	}
	company, client := domain.CompanyID{1}, domain.ClientID("c")
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { _ = tally.Count(ctx, company, client, "GET /company", time.Now(), 1) })
	}
	wg.Wait()
	if store.adds != 0 {
		t.Fatalf("%d statements before a flush", store.adds)
	}
	store.down = true
	tally.Flush(ctx)
	store.down = false
	_ = tally.Count(ctx, company, client, "GET /company", time.Now(), 1)
	list, err := tally.List(ctx, &company)
	if err != nil || len(list) != 1 || list[0].Calls != 101 || store.adds != 1 {
		t.Fatalf("after the store came back: %+v, %v, %d statements", list, err, store.adds)
	}
	_ = tally.Count(ctx, company, client, "GET /other", time.Now(), 3)
	if err := tally.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if store.calls["GET /other"] != 3 {
		t.Errorf("Stop left %v unflushed", store.calls)
	}
}
