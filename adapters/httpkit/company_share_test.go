package httpkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// TestCompanyShare: a company runs at most its limit at once; as many more
// wait and get a slot as one is given back; beyond them a request is refused
// at once, and a waiter is refused when its wait or its request ends;
// another company is never held back; nothing is kept once all have gone.
func TestCompanyShare(t *testing.T) {
	t.Parallel()
	s := NewCompanyShare(2, time.Minute, nil)
	ctx := context.Background()
	a, b := domain.NewCompanyID(), domain.NewCompanyID()
	var running []func()
	for range 2 {
		release, ok := s.Acquire(ctx, a)
		if !ok {
			t.Fatal("a request within the limit refused")
		}
		running = append(running, release)
	}
	// Two wait; the next is refused at once, however long the wait may be.
	got := make(chan func(), 2*waitingPerSlot)
	var waiting sync.WaitGroup
	for range 2 * waitingPerSlot {
		waiting.Go(func() {
			release, ok := s.Acquire(ctx, a)
			if !ok {
				t.Error("a waiting request refused while slots were given back")
				return
			}
			got <- release
		})
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		users := s.shares[a].users
		s.mu.Unlock()
		if users == 2+2*waitingPerSlot {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests of the company, want %d", users, 2+2*waitingPerSlot)
		}
	}
	started := time.Now()
	if _, ok := s.Acquire(ctx, a); ok || time.Since(started) > time.Second {
		t.Errorf("a request beyond the waiting ones: ok=%v after %v, want refused at once", ok, time.Since(started))
	}
	if release, ok := s.Acquire(ctx, b); !ok {
		t.Error("another company held back")
	} else {
		release()
	}
	for _, release := range running {
		release()
		release() // a second call gives nothing back twice
	}
	// Each waiter, given its slot, gives it back: the next takes it.
	for range 2 * waitingPerSlot {
		(<-got)()
	}
	waiting.Wait()
	if n := s.companies(); n != 0 {
		t.Errorf("%d companies kept after every request went", n)
	}

	// A waiter whose wait ends, or whose request ends, is refused.
	short := NewCompanyShare(1, 20*time.Millisecond, nil)
	release, _ := short.Acquire(ctx, a)
	if _, ok := short.Acquire(ctx, a); ok {
		t.Error("a waiter got a slot nobody gave back")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	slow := NewCompanyShare(1, time.Minute, nil)
	held, _ := slow.Acquire(ctx, a)
	if _, ok := slow.Acquire(cancelled, a); ok {
		t.Error("a waiter whose request ended got a slot")
	}
	release()
	held()
	if short.companies()+slow.companies() != 0 {
		t.Error("companies kept after every request went")
	}

	// No limit: no bound, and no bookkeeping.
	var none *CompanyShare
	if release, ok := none.Acquire(ctx, a); !ok {
		t.Error("no share refused")
	} else {
		release()
	}
}
