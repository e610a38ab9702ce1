package usecase

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/release"
	"github.com/praxis-health/praxis/ports"
)

// CallTally counts deprecated calls in memory and adds them to the store
// every few seconds, one statement per client, operation and day: a
// deprecated operation called by many requests at once would otherwise
// have each wait for the same row. A replica killed (-9) loses at most one
// interval's counts; they say who still calls what, they are not an audit.
type CallTally struct {
	store ports.DeprecatedCalls
	every time.Duration
	log   *slog.Logger

	mu     sync.Mutex
	counts map[tallyKey]int64
	stop   chan struct{}
	done   chan struct{}
}

type tallyKey struct {
	company   domain.CompanyID
	client    domain.ClientID
	operation string
	day       string // UTC, release.DateLayout
}

var _ ports.DeprecatedCalls = (*CallTally)(nil)

// NewCallTally adds what it counts to store every interval.
func NewCallTally(store ports.DeprecatedCalls, every time.Duration, log *slog.Logger) *CallTally {
	return &CallTally{store: store, every: every, log: log, counts: map[tallyKey]int64{}}
}

// Count adds calls in memory; the store has them within one interval.
func (t *CallTally) Count(_ context.Context, company domain.CompanyID, client domain.ClientID, operation string, day time.Time, calls int64) error {
	k := tallyKey{company, client, operation, day.UTC().Format(release.DateLayout)}
	t.mu.Lock()
	t.counts[k] += calls
	t.mu.Unlock()
	return nil
}

// List answers the store's counts with this replica's added first.
func (t *CallTally) List(ctx context.Context, company *domain.CompanyID) ([]release.Calls, error) {
	t.Flush(ctx)
	return t.store.List(ctx, company)
}

// Flush adds the counts so far to the store; what cannot be added for a
// store out of reach stays for the next time.
func (t *CallTally) Flush(ctx context.Context) {
	t.mu.Lock()
	counts := t.counts
	t.counts = map[tallyKey]int64{}
	t.mu.Unlock()
	for k, n := range counts {
		day, err := time.Parse(release.DateLayout, k.day)
		if err == nil {
			err = t.store.Count(ctx, k.company, k.client, k.operation, day, n)
		}
		if err != nil {
			t.log.WarnContext(ctx, "count deprecated calls", "operation", k.operation, "calls", n, "error", err.Error())
			if !errors.Is(err, domain.ErrUnavailable) {
				continue
			}
			t.mu.Lock()
			t.counts[k] += n
			t.mu.Unlock()
		}
	}
}

// Start flushes every interval until Stop.
func (t *CallTally) Start(ctx context.Context) error {
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	base := context.WithoutCancel(ctx) // the start's deadline is not the loop's
	go func() {
		defer close(t.done)
		tick := time.NewTicker(t.every)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
				ctx, cancel := context.WithTimeout(base, t.every)
				t.Flush(ctx)
				cancel()
			}
		}
	}()
	return nil
}

// Stop ends the loop and flushes what is left.
func (t *CallTally) Stop(ctx context.Context) error {
	if t.stop != nil {
		close(t.stop)
		<-t.done
	}
	t.Flush(ctx)
	return nil
}
