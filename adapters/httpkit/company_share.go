package httpkit

import (
	"context"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
)

// CompanyShare bounds how many requests of one company a replica serves at
// once, so that one practice's heavy day (an integrator's first full sync,
// many clients reading 500-row pages) cannot take the whole database pool
// from the others. A request beyond the share waits up to its wait for a
// slot, and at most as many wait as may run; any other is refused at once
// (429 company-busy): no queue grows without bound. The refusals are what
// holds a busy practice back — on a replica whose CPU both practices share,
// a cap on running requests alone, with a long queue behind it, left the
// other practice's p99 where it was (test/bench/neighbours).
type CompanyShare struct {
	limit int
	wait  time.Duration
	// Refused is told of each refusal, with the grant's plan (a metric: no company).
	refused func(ctx context.Context, plan domain.Plan)

	mu     sync.Mutex
	shares map[domain.CompanyID]*share
}

// share is one company's slots; users counts who runs or waits, and the
// entry goes when the last leaves.
type share struct {
	slots chan struct{}
	users int
}

// NewCompanyShare lets limit requests of a company run at once (0: no
// bound at all), as many more wait up to wait; refused, when set, counts
// the refusals.
func NewCompanyShare(limit int, wait time.Duration, refused func(ctx context.Context, plan domain.Plan)) *CompanyShare {
	return &CompanyShare{limit: limit, wait: wait, refused: refused, shares: map[domain.CompanyID]*share{}}
}

// Acquire takes a slot of the company: ok false when none came free in
// time. release gives it back; calling it again does nothing.
func (s *CompanyShare) Acquire(ctx context.Context, company domain.CompanyID) (release func(), ok bool) {
	if s == nil || s.limit <= 0 {
		return func() {}, true
	}
	s.mu.Lock()
	sh := s.shares[company]
	if sh == nil {
		sh = &share{slots: make(chan struct{}, s.limit)}
		s.shares[company] = sh
	}
	if sh.users >= (1+waitingPerSlot)*s.limit { // the queue is full
		s.mu.Unlock()
		return nil, false
	}
	sh.users++
	s.mu.Unlock()
	select {
	case sh.slots <- struct{}{}:
	default:
		t := time.NewTimer(s.wait)
		defer t.Stop()
		select {
		case sh.slots <- struct{}{}:
		case <-t.C:
			s.leave(company, sh)
			return nil, false
		case <-ctx.Done():
			s.leave(company, sh)
			return nil, false
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-sh.slots
			s.leave(company, sh)
		})
	}, true
}

func (s *CompanyShare) leave(company domain.CompanyID, sh *share) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh.users--; sh.users == 0 {
		delete(s.shares, company)
	}
}

// companies is how many companies hold or wait for a slot (for tests).
func (s *CompanyShare) companies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.shares)
}

// waitingPerSlot is how many requests may wait for each slot of a share.
const waitingPerSlot = 1

type shareKey struct{}

// ReleaseShare gives the request's company slot back before the request
// ends: a request that then waits long (a bridge's long poll) holds none
// while it waits.
func ReleaseShare(c *fiber.Ctx) {
	if release, ok := c.Locals(shareKey{}).(func()); ok {
		release()
	}
}
