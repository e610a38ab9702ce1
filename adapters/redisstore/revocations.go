package redisstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/ports"
)

// Revocations that survive a Redis failover (docs/contract.md §5,
// "Failover"). Redis replicates asynchronously: a master that dies right
// after a revocation may take the deletion with it, and the promoted
// replica still holds the token, the client's tokens or the session. So
// every ending is first buried in the database (ports.Tombstones), then
// deleted in Redis; each replica reads the tombstones every second and
// refuses what they name, whatever Redis answers. A Sentinel failover
// takes longer than a second, so every revocation committed before it is
// known to every replica by the time the new master answers.

const (
	// tombstonePoll is how often a replica reads new tombstones.
	tombstonePoll = time.Second
	// tombstoneOverlap reads back over the last poll: a tombstone buried
	// by a replica whose clock is behind, or committed just after its
	// time was taken, is read on the next poll.
	tombstoneOverlap = 30 * time.Second
	// tombstoneStale is how old the list may be before the bearer check
	// refuses to trust Redis alone: a database away this long is 503.
	tombstoneStale = 10 * time.Second
)

// Revocations is one replica's copy of the tombstones: NewRevocations,
// then Refresh once before serving and Run until the server stops.
type Revocations struct {
	store ports.Tombstones
	log   *slog.Logger
	now   func() time.Time

	mu   sync.RWMutex
	keys map[[32]byte]time.Time
	read time.Time // when the last successful read began (zero: none yet)
}

func NewRevocations(store ports.Tombstones, log *slog.Logger) *Revocations {
	return &Revocations{store: store, log: log, now: time.Now, keys: map[[32]byte]time.Time{}}
}

func tombstoneKey(kind, name string) [32]byte { return sha256.Sum256([]byte(kind + "\x00" + name)) }

// Refresh reads the tombstones buried since the last read (all of them,
// the first time) and forgets the expired ones.
func (r *Revocations) Refresh(ctx context.Context) error {
	start := r.now()
	var since time.Time // the first read asks for all of them
	r.mu.RLock()
	if !r.read.IsZero() {
		since = r.read.Add(-tombstoneOverlap)
	}
	r.mu.RUnlock()
	found, err := r.store.Since(ctx, since, start)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range found {
		r.keys[t.Key] = t.Until
	}
	for k, until := range r.keys {
		if !start.Before(until) {
			delete(r.keys, k)
		}
	}
	r.read = start
	return nil
}

// check refuses key if it is buried, and everything while the list is stale.
func (r *Revocations) check(keys ...[32]byte) error {
	now := r.now()
	r.mu.RLock()
	defer r.mu.RUnlock()
	if now.Sub(r.read) > tombstoneStale {
		return domain.Unavailable(errors.New("the list of revocations could not be read from the database"))
	}
	for _, k := range keys {
		if until, ok := r.keys[k]; ok && now.Before(until) {
			return domain.ErrNotFound
		}
	}
	return nil
}

// bury keeps key in the database until until, and in this replica at once.
func (r *Revocations) bury(ctx context.Context, key [32]byte, until time.Time) error {
	if err := r.store.Bury(ctx, key, until); err != nil {
		return err
	}
	r.mu.Lock()
	r.keys[key] = until
	r.mu.Unlock()
	return nil
}

// Run reads new tombstones every tombstonePoll and prunes the expired ones
// from the database about once an hour, until ctx ends.
func (r *Revocations) Run(ctx context.Context) {
	tick := time.NewTicker(tombstonePoll)
	defer tick.Stop()
	lastPrune := r.now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := r.Refresh(rctx); err != nil && ctx.Err() == nil {
			r.log.Warn("read revocations", "error", err.Error())
		}
		if r.now().Sub(lastPrune) > time.Hour {
			if _, err := r.store.Prune(rctx, r.now()); err == nil {
				lastPrune = r.now()
			}
		}
		cancel()
	}
}

// DurableTokens is tokens with its revocations buried first in list: a
// revoked token or client stays refused after a failover. ttl is the
// longest a token lives.
func DurableTokens(tokens ports.TokenStore, list *Revocations, ttl time.Duration) ports.TokenStore {
	return durableTokens{TokenStore: tokens, list: list, ttl: ttl}
}

// durableTokens is the shared token store with its revocations buried first.
type durableTokens struct {
	ports.TokenStore
	list *Revocations
	ttl  time.Duration // the longest a token lives
}

func (d durableTokens) checked(g domain.Grant, hash []byte) error {
	return d.list.check(tombstoneKey("token", string(hash)), tombstoneKey("client", string(g.ClientID)))
}

func (d durableTokens) Lookup(ctx context.Context, tokenHash []byte) (domain.Grant, error) {
	g, err := d.TokenStore.Lookup(ctx, tokenHash)
	if err != nil {
		return g, err
	}
	if err := d.checked(g, tokenHash); err != nil {
		return domain.Grant{}, err
	}
	return g, nil
}

func (d durableTokens) Authorize(ctx context.Context, tokenHash []byte, limits ratelimit.Limits) (domain.Grant, ratelimit.State, error) {
	g, rate, err := d.TokenStore.Authorize(ctx, tokenHash, limits)
	if err != nil {
		return g, rate, err
	}
	if err := d.checked(g, tokenHash); err != nil {
		return domain.Grant{}, ratelimit.State{}, err
	}
	return g, rate, nil
}

func (d durableTokens) Revoke(ctx context.Context, tokenHash []byte) error {
	if err := d.list.bury(ctx, tombstoneKey("token", string(tokenHash)), d.list.now().Add(d.ttl)); err != nil {
		return err
	}
	return d.TokenStore.Revoke(ctx, tokenHash)
}

func (d durableTokens) RevokeClient(ctx context.Context, client domain.ClientID) error {
	if err := d.list.bury(ctx, tombstoneKey("client", string(client)), d.list.now().Add(d.ttl)); err != nil {
		return err
	}
	return d.TokenStore.RevokeClient(ctx, client)
}

// DurableSessions is sessions with its deletions buried first in list: a
// settings session signed out stays ended after a failover. ttl is the
// longest a session lives.
func DurableSessions(sessions ports.Sessions, list *Revocations, ttl time.Duration) ports.Sessions {
	return durableSessions{Sessions: sessions, list: list, ttl: ttl}
}

// durableSessions is the shared session store with its deletions buried
// first.
type durableSessions struct {
	ports.Sessions
	list *Revocations
	ttl  time.Duration // the longest a session lives
}

func (d durableSessions) Load(ctx context.Context, key string) ([]byte, error) {
	v, err := d.Sessions.Load(ctx, key)
	if err != nil {
		return v, err
	}
	if err := d.list.check(tombstoneKey("session", key)); err != nil {
		return nil, err
	}
	return v, nil
}

func (d durableSessions) Delete(ctx context.Context, key string) error {
	if err := d.list.bury(ctx, tombstoneKey("session", key), d.list.now().Add(d.ttl)); err != nil {
		return err
	}
	return d.Sessions.Delete(ctx, key)
}
