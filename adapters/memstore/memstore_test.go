package memstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/praxis-health/praxis/adapters/memstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports/porttest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	porttest.RunTokenStoreSuite(t, func(*testing.T) porttest.TokenStores {
		s := memstore.New(memstore.DefaultLimits)
		return porttest.TokenStores{Tokens: s, Attempts: s, Sessions: s}
	})
}

// TestBounded: past MaxTokens the token closest to expiry goes first, and
// past MaxSubjects idle attempt counts go, but a lockout in force stays.
func TestBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := memstore.New(memstore.Limits{MaxTokens: 3, MaxSubjects: 2})
	company := domain.NewCompanyID()
	var hashes [][]byte
	for i := range 4 {
		secret, _ := domain.NewSecret()
		now := time.Now()
		// The first token expires last; the second soonest.
		ttl := map[int]time.Duration{0: 4 * time.Hour, 1: time.Hour, 2: 2 * time.Hour, 3: 3 * time.Hour}[i]
		if err := s.Save(ctx, secret.Hash(), domain.Grant{ClientID: "pc_a", CompanyID: company, IssuedAt: now, ExpiresAt: now.Add(ttl)}); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, secret.Hash())
	}
	for i, h := range hashes {
		_, err := s.Lookup(ctx, h)
		if dropped := errors.Is(err, domain.ErrNotFound); dropped != (i == 1) {
			t.Errorf("token %d: dropped %v, want only token 1 (closest to expiry) dropped", i, dropped)
		}
	}

	policy := domain.LockoutPolicy{MaxFailures: 1, Window: time.Minute, Lockout: time.Hour}
	if wait, _ := s.Fail(ctx, "client:locked", policy); wait != time.Hour {
		t.Fatalf("lockout %v", wait)
	}
	soft := domain.LockoutPolicy{MaxFailures: 5, Window: time.Minute, Lockout: time.Hour}
	for _, subject := range []string{"client:x", "client:y", "client:z"} {
		if _, err := s.Fail(ctx, subject, soft); err != nil {
			t.Fatal(err)
		}
	}
	if wait, _ := s.Lockout(ctx, "client:locked"); wait <= 0 {
		t.Error("making room dropped a subject that is locked out")
	}
}
