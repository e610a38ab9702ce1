// Package memstore is the in-process token store of the embedded mode: live
// access tokens and failed-attempt counts in this process's memory, expiring
// on time and bounded in size. It is a product feature, not a test double,
// and passes the same contract suite as the Redis store.
package memstore

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/ports"
)

// Limits bound the store's memory.
type Limits struct {
	// MaxTokens live tokens; past it the one closest to expiry is dropped.
	MaxTokens int
	// MaxSubjects tracked for failed attempts; past it expired ones are
	// dropped first, then any that is not locked out.
	MaxSubjects int
	// MaxSessions kept for the settings pages; past it the one closest to
	// expiry is dropped.
	MaxSessions int
}

// DefaultLimits hold about 100 MB at most.
var DefaultLimits = Limits{MaxTokens: 500_000, MaxSubjects: 200_000, MaxSessions: 50_000}

// revocationMemory is how long a revoked client's marker keeps refusing new
// tokens. The database refuses them too; the marker closes the gap of a
// token request that passed the database check just before the revocation.
const revocationMemory = 24 * time.Hour

// Store keeps tokens under their hashes.
type Store struct {
	limits Limits
	now    func() time.Time

	mu       sync.Mutex
	tokens   map[string]domain.Grant
	byClient map[domain.ClientID]map[string]struct{}
	revoked  map[domain.ClientID]time.Time
	expiries expiryHeap
	attempts map[string]*attempt
	rates    map[domain.ClientID]*window
	sessions map[string]session
	usage    map[domain.ClientID]*usage
}

// usage is one client's calls per day number, and its last call.
type usage struct {
	days map[int64]int64
	last time.Time
}

// window counts one client's requests in its current rate-limit window.
type window struct {
	slot int64
	n    int
}

var (
	_ ports.TokenStore     = (*Store)(nil)
	_ ports.AttemptCounter = (*Store)(nil)
	_ ports.Sessions       = (*Store)(nil)
)

// New returns an empty store.
func New(limits Limits) *Store {
	return &Store{
		limits:   limits,
		now:      time.Now,
		tokens:   map[string]domain.Grant{},
		byClient: map[domain.ClientID]map[string]struct{}{},
		revoked:  map[domain.ClientID]time.Time{},
		attempts: map[string]*attempt{},
		rates:    map[domain.ClientID]*window{},
		sessions: map[string]session{},
		usage:    map[domain.ClientID]*usage{},
	}
}

// Shared is false: other processes cannot see these tokens.
func (s *Store) Shared() bool { return false }

func (s *Store) Save(ctx context.Context, tokenHash []byte, grant domain.Grant) error {
	_, err := s.SaveUnlocked(ctx, tokenHash, grant)
	return err
}

func (s *Store) SaveUnlocked(_ context.Context, tokenHash []byte, grant domain.Grant, subjects ...string) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wait := s.lockedFor(subjects); wait > 0 {
		return wait, nil
	}
	now := s.now()
	if until, ok := s.revoked[grant.ClientID]; ok && now.Before(until) {
		return 0, domain.ErrNotFound
	}
	s.expire(now)
	if s.expiries.Len() > 2*s.limits.MaxTokens {
		s.rebuildExpiries()
	}
	for len(s.tokens) >= s.limits.MaxTokens && s.expiries.Len() > 0 {
		s.drop(heap.Pop(&s.expiries).(expiry))
	}
	key := string(tokenHash)
	s.tokens[key] = grant
	if s.byClient[grant.ClientID] == nil {
		s.byClient[grant.ClientID] = map[string]struct{}{}
	}
	s.byClient[grant.ClientID][key] = struct{}{}
	heap.Push(&s.expiries, expiry{at: grant.ExpiresAt, key: key})
	return 0, nil
}

func (s *Store) Lookup(_ context.Context, tokenHash []byte) (domain.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.tokens[string(tokenHash)]
	if !ok || !s.now().Before(g.ExpiresAt) {
		return domain.Grant{}, domain.ErrNotFound
	}
	return g, nil
}

// Authorize looks the token up and counts one request of its client in the
// fixed window of its plan, like the Redis script.
func (s *Store) Authorize(_ context.Context, tokenHash []byte, limits ratelimit.Limits) (domain.Grant, ratelimit.State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	g, ok := s.tokens[string(tokenHash)]
	if !ok || !now.Before(g.ExpiresAt) {
		return domain.Grant{}, ratelimit.State{}, domain.ErrNotFound
	}
	limit := limits.Of(g.Plan)
	ms, windowMS := now.UnixMilli(), limit.Window.Milliseconds()
	slot := ms / windowMS
	w := s.rates[g.ClientID]
	if w == nil || w.slot != slot {
		if len(s.rates) >= s.limits.MaxSubjects {
			clear(s.rates) // a new window for everyone rather than unbounded memory
		}
		w = &window{slot: slot}
		s.rates[g.ClientID] = w
	}
	w.n++
	s.countUsage(g.ClientID, now)
	return g, ratelimit.State{Limit: limit.Limit, Window: limit.Window, Remaining: limit.Limit - w.n,
		Reset: time.Duration(windowMS-ms%windowMS) * time.Millisecond}, nil
}

// countUsage counts one call of client today, forgetting days past the
// ones kept; past MaxSubjects clients every count starts again.
func (s *Store) countUsage(client domain.ClientID, now time.Time) {
	u := s.usage[client]
	if u == nil {
		if len(s.usage) >= s.limits.MaxSubjects {
			clear(s.usage)
		}
		u = &usage{days: map[int64]int64{}}
		s.usage[client] = u
	}
	today := ratelimit.UsageDay(now)
	u.days[today]++
	u.last = now
	for d := range u.days {
		if d <= today-ratelimit.UsageDays {
			delete(u.days, d)
		}
	}
}

func (s *Store) Usage(_ context.Context, client domain.ClientID, now time.Time) (ratelimit.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out ratelimit.Usage
	u := s.usage[client]
	today := ratelimit.UsageDay(now)
	for i := range int64(ratelimit.UsageDays) {
		var n int64
		if u != nil {
			n = u.days[today-i]
		}
		out.Days = append(out.Days, ratelimit.DayCalls{Day: time.Unix((today-i)*86400, 0).UTC().Format(time.DateOnly), Calls: n})
	}
	if u != nil {
		last := u.last.UTC()
		out.LastUse = &last
	}
	return out, nil
}

func (s *Store) ForgetUsage(_ context.Context, client domain.ClientID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.usage, client)
	return nil
}

func (s *Store) Revoke(_ context.Context, tokenHash []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remove(string(tokenHash))
	return nil
}

func (s *Store) RevokeClient(_ context.Context, client domain.ClientID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for id, until := range s.revoked {
		if !now.Before(until) {
			delete(s.revoked, id)
		}
	}
	s.revoked[client] = now.Add(revocationMemory)
	for key := range s.byClient[client] {
		delete(s.tokens, key)
	}
	delete(s.byClient, client)
	return nil
}

// expire drops every token whose time has come.
func (s *Store) expire(now time.Time) {
	for s.expiries.Len() > 0 && !now.Before(s.expiries[0].at) {
		s.drop(heap.Pop(&s.expiries).(expiry))
	}
}

// rebuildExpiries forgets the heap entries of revoked tokens, which would
// otherwise stay until their expiry.
func (s *Store) rebuildExpiries() {
	s.expiries = s.expiries[:0]
	for key, g := range s.tokens {
		s.expiries = append(s.expiries, expiry{at: g.ExpiresAt, key: key})
	}
	heap.Init(&s.expiries)
}

// drop removes the token of a popped heap entry, unless the entry is stale
// (the token was revoked, and its hash is not in the map any more).
func (s *Store) drop(e expiry) {
	if g, ok := s.tokens[e.key]; ok && g.ExpiresAt.Equal(e.at) {
		s.remove(e.key)
	}
}

func (s *Store) remove(key string) {
	g, ok := s.tokens[key]
	if !ok {
		return
	}
	delete(s.tokens, key)
	if keys := s.byClient[g.ClientID]; keys != nil {
		delete(keys, key)
		if len(keys) == 0 {
			delete(s.byClient, g.ClientID)
		}
	}
}

// attempt is the failure count of one subject.
type attempt struct {
	failures    int
	windowEnd   time.Time
	lockedUntil time.Time
}

func (a *attempt) idle(now time.Time) bool {
	return !now.Before(a.windowEnd) && !now.Before(a.lockedUntil)
}

func (s *Store) Lockout(_ context.Context, subjects ...string) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lockedFor(subjects), nil
}

// lockedFor is how long the longest-locked of subjects stays locked; s.mu is held.
func (s *Store) lockedFor(subjects []string) time.Duration {
	var longest time.Duration
	for _, subject := range subjects {
		if a, ok := s.attempts[subject]; ok {
			longest = max(longest, a.lockedUntil.Sub(s.now()))
		}
	}
	return longest
}

func (s *Store) Fail(_ context.Context, subject string, policy domain.LockoutPolicy) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	a, ok := s.attempts[subject]
	if !ok {
		s.makeRoomForSubject(now)
		a = &attempt{}
		s.attempts[subject] = a
	}
	if !now.Before(a.windowEnd) {
		a.failures, a.windowEnd = 0, now.Add(policy.Window)
	}
	a.failures++
	if a.failures < policy.MaxFailures {
		return 0, nil
	}
	a.failures, a.windowEnd, a.lockedUntil = 0, now, now.Add(policy.Lockout)
	return policy.Lockout, nil
}

func (s *Store) makeRoomForSubject(now time.Time) {
	if len(s.attempts) < s.limits.MaxSubjects {
		return
	}
	for subject, a := range s.attempts {
		if a.idle(now) {
			delete(s.attempts, subject)
		}
	}
	for subject, a := range s.attempts {
		if len(s.attempts) < s.limits.MaxSubjects {
			return
		}
		if !now.Before(a.lockedUntil) {
			delete(s.attempts, subject)
		}
	}
}

// HealthCheck of the in-process store: it is there as long as the process is.
type HealthCheck struct{}

func (HealthCheck) Name() string                { return "token_store" }
func (HealthCheck) Check(context.Context) error { return nil }

// expiry is one token's expiry time in the heap.
type expiry struct {
	at  time.Time
	key string
}

type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
