package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports/porttest"
)

// TestCompanyLeases: a company's lease is one holder's until released or
// run out — another is answered the holder's lease, cannot renew or
// release it; of eight taking it at once one gets it; another company's
// lease is its own.
func TestCompanyLeases(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		repos := repositoriesOn(db)
		a, _ := porttest.NewCompany(t, repos, "A", 1000)
		b, _ := porttest.NewCompany(t, repos, "B", 1000)
		leases := sqlstore.NewCompanyLeases(db)
		now := time.Now().Truncate(time.Millisecond)
		lease := func(c domain.CompanyID, holder string, until time.Time) domain.CompanyLease {
			return domain.CompanyLease{Company: c, Holder: holder, Purpose: "import", AcquiredAt: now, ExpiresAt: until}
		}
		take := func(l domain.CompanyLease, at time.Time) (domain.CompanyLease, bool) {
			t.Helper()
			held, ok, err := leases.Take(ctx, l, at)
			if err != nil {
				t.Fatal(err)
			}
			return held, ok
		}
		if _, ok := take(lease(a.ID, "one", now.Add(time.Minute)), now); !ok {
			t.Fatal("a free lease was not taken")
		}
		if held, ok := take(lease(a.ID, "two", now.Add(time.Minute)), now); ok || held.Holder != "one" || !held.ExpiresAt.Equal(now.Add(time.Minute)) {
			t.Errorf("a held lease: taken %v, answered %+v", ok, held)
		}
		if _, ok := take(lease(b.ID, "two", now.Add(time.Minute)), now); !ok {
			t.Error("another company's lease was held by the first")
		}
		if ok, err := leases.Extend(ctx, a.ID, "two", now.Add(time.Hour)); err != nil || ok {
			t.Errorf("another holder renewed it: %v %v", ok, err)
		}
		if err := leases.Release(ctx, a.ID, "two"); err != nil {
			t.Fatal(err)
		}
		if ok, err := leases.Extend(ctx, a.ID, "one", now.Add(2*time.Minute)); err != nil || !ok {
			t.Errorf("its holder could not renew it: %v %v", ok, err)
		}
		// Run out (renewed to two minutes): after that, another takes it over.
		if _, ok := take(lease(a.ID, "three", now.Add(time.Hour)), now.Add(time.Minute)); ok {
			t.Error("taken before it ran out")
		}
		if _, ok := take(lease(a.ID, "three", now.Add(time.Hour)), now.Add(2*time.Minute)); !ok {
			t.Error("not taken once it ran out")
		}
		if err := leases.Release(ctx, a.ID, "three"); err != nil {
			t.Fatal(err)
		}
		// Eight at once: one wins.
		var won atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				_, ok, err := leases.Take(ctx, lease(a.ID, fmt.Sprint("racer ", i), now.Add(time.Minute)), now)
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Errorf("%d of 8 took the lease at once, want 1", won.Load())
		}
	})
}
