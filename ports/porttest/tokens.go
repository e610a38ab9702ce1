package porttest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/ports"
)

// TokenStores is what one token-store adapter provides.
type TokenStores struct {
	Tokens   ports.TokenStore
	Attempts ports.AttemptCounter
	Sessions ports.Sessions
}

// lockoutPolicy is the lockout cases' policy: short enough to wait out.
var lockoutPolicy = domain.LockoutPolicy{MaxFailures: 3, Window: time.Minute, Lockout: 400 * time.Millisecond}

// RunTokenStoreSuite checks a token-store adapter against the ports' contract.
// newStores must return an empty store. Expiry cases wait a few hundred
// milliseconds of real time: Redis keeps time itself.
func RunTokenStoreSuite(t *testing.T, newStores func(t *testing.T) TokenStores) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, newStores func(t *testing.T) TokenStores)
	}{
		{"sessions", tokenSessions},
		{"usage per client and day", tokenUsage},
		{"save and look up", tokenSaveLookup},
		{"authorize looks up and counts per client by plan, in one call", tokenAuthorize},
		{"tokens expire", tokenExpiry},
		{"revoke one token", tokenRevoke},
		{"revoke a client: all its tokens, no other company's, no new ones", tokenRevokeClient},
		{"lockout after MaxFailures, per subject, then it ends", tokenLockout},
		{"a save beside the lockout saves nothing while a subject is locked", tokenLockedSave},
		{"failures in separate windows do not add up", tokenSeparateWindows},
		{"concurrent failures lock exactly once per MaxFailures", tokenConcurrentFailures},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStores) })
	}
}

// newToken returns a fresh token hash and a grant of client in company.
func newToken(t *testing.T, client domain.ClientID, company domain.CompanyID, ttl time.Duration) ([]byte, domain.Grant) {
	t.Helper()
	secret, err := domain.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	scopes, _ := domain.ParseScopes("company:read customers:read")
	now := time.Now().UTC().Truncate(time.Millisecond)
	return secret.Hash(), domain.Grant{ClientID: client, CompanyID: company, Scopes: scopes, IssuedAt: now, ExpiresAt: now.Add(ttl)}
}

func tokenSessions(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t).Sessions
	if err := s.Store(ctx, "key-a", []byte("one"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Store(ctx, "key-short", []byte("two"), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(ctx, "key-a"); err != nil || string(got) != "one" {
		t.Errorf("load: %q %v", got, err)
	}
	if _, err := s.Load(ctx, "key-b"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown key: %v, want ErrNotFound", err)
	}
	if err := s.Store(ctx, "key-a", []byte("three"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, "key-a"); string(got) != "three" {
		t.Errorf("replaced value: %q", got)
	}
	if err := s.Delete(ctx, "key-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "key-a"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("deleted key: %v, want ErrNotFound", err)
	}
	time.Sleep(600 * time.Millisecond)
	if _, err := s.Load(ctx, "key-short"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("expired key: %v, want ErrNotFound", err)
	}
}

func tokenUsage(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	company := domain.NewCompanyID()
	hash, grant := newToken(t, "pc_usage_a", company, time.Hour)
	if err := s.Tokens.Save(ctx, hash, grant); err != nil {
		t.Fatal(err)
	}
	limits := ratelimit.Limits{domain.PlanBasic: {Limit: 100, Window: time.Minute}}
	for range 3 {
		if _, _, err := s.Tokens.Authorize(ctx, hash, limits); err != nil {
			t.Fatal(err)
		}
	}
	u, err := s.Tokens.Usage(ctx, "pc_usage_a", time.Now())
	if err != nil || len(u.Days) != ratelimit.UsageDays || u.Today() != 3 || u.Total() != 3 || u.LastUse == nil ||
		time.Since(*u.LastUse) > time.Minute || u.Days[0].Day != time.Now().UTC().Format(time.DateOnly) {
		t.Errorf("usage: %+v %v", u, err)
	}
	if other, _ := s.Tokens.Usage(ctx, "pc_usage_b", time.Now()); other.Total() != 0 || other.LastUse != nil {
		t.Errorf("another client's usage: %+v", other)
	}
	if later, _ := s.Tokens.Usage(ctx, "pc_usage_a", time.Now().Add(24*time.Hour*ratelimit.UsageDays)); later.Total() != 0 {
		t.Errorf("a week on the calls still count: %+v", later)
	}

	// Forgotten (its company erased): the client's counts go, another's stay.
	hashB, grantB := newToken(t, "pc_usage_b", company, time.Hour)
	if err := s.Tokens.Save(ctx, hashB, grantB); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Tokens.Authorize(ctx, hashB, limits); err != nil {
		t.Fatal(err)
	}
	if err := s.Tokens.ForgetUsage(ctx, "pc_usage_a"); err != nil {
		t.Fatal(err)
	}
	if gone, err := s.Tokens.Usage(ctx, "pc_usage_a", time.Now()); err != nil || gone.Total() != 0 || gone.LastUse != nil {
		t.Errorf("usage after it was forgotten: %+v %v", gone, err)
	}
	if kept, _ := s.Tokens.Usage(ctx, "pc_usage_b", time.Now()); kept.Today() != 1 || kept.LastUse == nil {
		t.Errorf("another client's usage after one was forgotten: %+v", kept)
	}
}

func tokenSaveLookup(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	hash, grant := newToken(t, "pc_a", domain.NewCompanyID(), time.Hour)
	if err := s.Tokens.Save(ctx, hash, grant); err != nil {
		t.Fatal(err)
	}
	got, err := s.Tokens.Lookup(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClientID != grant.ClientID || got.CompanyID != grant.CompanyID || got.Scopes.String() != grant.Scopes.String() ||
		!got.IssuedAt.Equal(grant.IssuedAt) || !got.ExpiresAt.Equal(grant.ExpiresAt) {
		t.Errorf("got %+v, want %+v", got, grant)
	}
	unknown, _ := newToken(t, "pc_a", grant.CompanyID, time.Hour)
	if _, err := s.Tokens.Lookup(ctx, unknown); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown token: %v, want ErrNotFound", err)
	}
}

func tokenAuthorize(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	limits := ratelimit.Limits{domain.PlanBasic: {Limit: 2, Window: time.Minute}, domain.PlanPro: {Limit: 3, Window: time.Minute},
		domain.PlanEnterprise: {Limit: 9, Window: time.Minute}}
	company := domain.NewCompanyID()
	pro, proGrant := newToken(t, "pc_pro", company, time.Hour)
	proGrant.Plan = domain.PlanPro
	second, _ := newToken(t, "pc_pro", company, time.Hour) // a second token of the same client shares its budget
	basic, basicGrant := newToken(t, "pc_basic", company, time.Hour)
	basicGrant.Plan = domain.PlanBasic
	for hash, g := range map[string]domain.Grant{string(pro): proGrant, string(second): proGrant, string(basic): basicGrant} {
		if err := s.Tokens.Save(ctx, []byte(hash), g); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []int{2, 1, 0, -1} {
		token := pro
		if i%2 == 1 {
			token = second
		}
		g, rate, err := s.Tokens.Authorize(ctx, token, limits)
		if err != nil || g.ClientID != "pc_pro" || g.Plan != domain.PlanPro || rate.Limit != 3 || rate.Remaining != want ||
			rate.Window != time.Minute || rate.Reset <= 0 || rate.Reset > time.Minute || rate.Exceeded() != (want < 0) {
			t.Fatalf("request %d: %+v %+v %v", i+1, g, rate, err)
		}
	}
	if _, rate, err := s.Tokens.Authorize(ctx, basic, limits); err != nil || rate.Limit != 2 || rate.Remaining != 1 {
		t.Errorf("another client has its own budget: %+v %v", rate, err)
	}
	unknown, _ := newToken(t, "pc_pro", company, time.Hour)
	if _, _, err := s.Tokens.Authorize(ctx, unknown, limits); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown token: %v", err)
	}
}

func tokenExpiry(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	short, shortGrant := newToken(t, "pc_a", domain.NewCompanyID(), 300*time.Millisecond)
	long, longGrant := newToken(t, "pc_a", shortGrant.CompanyID, time.Hour)
	for hash, g := range map[string]domain.Grant{string(short): shortGrant, string(long): longGrant} {
		if err := s.Tokens.Save(ctx, []byte(hash), g); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Tokens.Lookup(ctx, short); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	time.Sleep(time.Until(shortGrant.ExpiresAt) + 100*time.Millisecond)
	if _, err := s.Tokens.Lookup(ctx, short); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("after expiry: %v, want ErrNotFound", err)
	}
	if _, err := s.Tokens.Lookup(ctx, long); err != nil {
		t.Errorf("the other token: %v", err)
	}
}

func tokenRevoke(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	company := domain.NewCompanyID()
	first, g1 := newToken(t, "pc_a", company, time.Hour)
	second, g2 := newToken(t, "pc_a", company, time.Hour)
	_ = s.Tokens.Save(ctx, first, g1)
	_ = s.Tokens.Save(ctx, second, g2)
	if err := s.Tokens.Revoke(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tokens.Lookup(ctx, first); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("revoked token: %v, want ErrNotFound", err)
	}
	if _, err := s.Tokens.Lookup(ctx, second); err != nil {
		t.Errorf("the client's other token: %v", err)
	}
	if err := s.Tokens.Revoke(ctx, first); err != nil {
		t.Errorf("revoking again: %v", err)
	}
}

func tokenRevokeClient(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	companyA, companyB := domain.NewCompanyID(), domain.NewCompanyID()
	var ofA, ofB [][]byte
	for i := range 150 {
		hash, g := newToken(t, "pc_a", companyA, time.Hour)
		if i%2 == 1 {
			hash, g = newToken(t, "pc_b", companyB, time.Hour)
		}
		if err := s.Tokens.Save(ctx, hash, g); err != nil {
			t.Fatal(err)
		}
		if g.ClientID == "pc_a" {
			ofA = append(ofA, hash)
		} else {
			ofB = append(ofB, hash)
		}
	}
	if err := s.Tokens.RevokeClient(ctx, "pc_a"); err != nil {
		t.Fatal(err)
	}
	for _, h := range ofA {
		if _, err := s.Tokens.Lookup(ctx, h); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("token of the revoked client: %v, want ErrNotFound", err)
		}
	}
	for _, h := range ofB {
		if _, err := s.Tokens.Lookup(ctx, h); err != nil {
			t.Fatalf("token of company B's client: %v", err)
		}
	}
	late, g := newToken(t, "pc_a", companyA, time.Hour)
	if err := s.Tokens.Save(ctx, late, g); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("saving a token of the revoked client: %v, want ErrNotFound", err)
	}
	other, gB := newToken(t, "pc_b", companyB, time.Hour)
	if err := s.Tokens.Save(ctx, other, gB); err != nil {
		t.Errorf("saving a token of B's client: %v", err)
	}
}

func tokenLockout(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	subject, other := "client:pc_"+t.Name(), "upload:"+domain.NewCompanyID().String()
	for i := 1; i < lockoutPolicy.MaxFailures; i++ {
		if wait, err := s.Attempts.Fail(ctx, subject, lockoutPolicy); err != nil || wait != 0 {
			t.Fatalf("failure %d: lockout %v, %v; want none yet", i, wait, err)
		}
	}
	if _, err := s.Attempts.Fail(ctx, other, lockoutPolicy); err != nil {
		t.Fatal(err)
	}
	wait, err := s.Attempts.Fail(ctx, subject, lockoutPolicy)
	if err != nil || wait != lockoutPolicy.Lockout {
		t.Fatalf("failure %d: lockout %v, %v; want %v", lockoutPolicy.MaxFailures, wait, err, lockoutPolicy.Lockout)
	}
	if wait, _ := s.Attempts.Lockout(ctx, subject); wait <= 0 || wait > lockoutPolicy.Lockout {
		t.Errorf("locked subject: lockout %v, want (0, %v]", wait, lockoutPolicy.Lockout)
	}
	if wait, err := s.Attempts.Lockout(ctx, other, subject); err != nil || wait <= 0 || wait > lockoutPolicy.Lockout {
		t.Errorf("several subjects, one locked: %s %v, want the locked one's wait", wait, err)
	}
	if wait, _ := s.Attempts.Lockout(ctx, other); wait != 0 {
		t.Errorf("another subject is locked out for %v", wait)
	}
	time.Sleep(lockoutPolicy.Lockout + 100*time.Millisecond)
	if wait, _ := s.Attempts.Lockout(ctx, subject); wait != 0 {
		t.Errorf("after the lockout: %v, want 0", wait)
	}
	if wait, _ := s.Attempts.Fail(ctx, subject, lockoutPolicy); wait != 0 {
		t.Errorf("first failure after a lockout locks again (%v): the count must start over", wait)
	}
}

func tokenLockedSave(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	company := domain.NewCompanyID()
	source, subject := "source:192.0.2.7", "client:pc_locked@192.0.2.7"
	hash, grant := newToken(t, "pc_locked", company, time.Hour)
	if wait, err := s.Tokens.SaveUnlocked(ctx, hash, grant, source, subject); err != nil || wait != 0 {
		t.Fatalf("nothing locked: wait %v, %v", wait, err)
	}
	if got, err := s.Tokens.Lookup(ctx, hash); err != nil || got.ClientID != "pc_locked" {
		t.Fatalf("the token saved beside an open lockout: %+v %v", got, err)
	}
	for range lockoutPolicy.MaxFailures {
		if _, err := s.Attempts.Fail(ctx, subject, lockoutPolicy); err != nil {
			t.Fatal(err)
		}
	}
	locked, lockedGrant := newToken(t, "pc_locked", company, time.Hour)
	wait, err := s.Tokens.SaveUnlocked(ctx, locked, lockedGrant, source, subject)
	if err != nil || wait <= 0 || wait > lockoutPolicy.Lockout {
		t.Fatalf("a subject locked: wait %v, %v; want (0, %v]", wait, err, lockoutPolicy.Lockout)
	}
	if _, err := s.Tokens.Lookup(ctx, locked); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("a token saved while its subject was locked: %v", err)
	}
	other, otherGrant := newToken(t, "pc_other", company, time.Hour)
	if wait, err := s.Tokens.SaveUnlocked(ctx, other, otherGrant, source, "client:pc_other@192.0.2.7"); err != nil || wait != 0 {
		t.Errorf("another subject from the same source: wait %v, %v", wait, err)
	}
	if err := s.Tokens.RevokeClient(ctx, "pc_other"); err != nil {
		t.Fatal(err)
	}
	revoked, revokedGrant := newToken(t, "pc_other", company, time.Hour)
	if _, err := s.Tokens.SaveUnlocked(ctx, revoked, revokedGrant, source); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("a token of a revoked client: %v, want ErrNotFound", err)
	}
	time.Sleep(lockoutPolicy.Lockout + 100*time.Millisecond)
	if wait, err := s.Tokens.SaveUnlocked(ctx, locked, lockedGrant, source, subject); err != nil || wait != 0 {
		t.Errorf("after the lockout: wait %v, %v", wait, err)
	}
	if _, err := s.Tokens.Lookup(ctx, locked); err != nil {
		t.Errorf("the token saved after the lockout: %v", err)
	}
}

func tokenSeparateWindows(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	short := domain.LockoutPolicy{MaxFailures: 2, Window: 200 * time.Millisecond, Lockout: time.Minute}
	if wait, _ := s.Attempts.Fail(ctx, "client:pc_w", short); wait != 0 {
		t.Fatalf("first failure locks: %v", wait)
	}
	time.Sleep(short.Window + 100*time.Millisecond)
	if wait, _ := s.Attempts.Fail(ctx, "client:pc_w", short); wait != 0 {
		t.Errorf("a failure in a new window locks (%v)", wait)
	}
}

func tokenConcurrentFailures(t *testing.T, newStores func(t *testing.T) TokenStores) {
	ctx := context.Background()
	s := newStores(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	locks := 0
	for range 3 * lockoutPolicy.MaxFailures {
		wg.Go(func() {
			wait, err := s.Attempts.Fail(ctx, "client:pc_race", domain.LockoutPolicy{MaxFailures: lockoutPolicy.MaxFailures, Window: time.Minute, Lockout: time.Minute})
			if err != nil {
				t.Error(err)
			}
			if wait > 0 {
				mu.Lock()
				locks++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if locks != 3 {
		t.Errorf("%d failures locked %d times, want 3", 3*lockoutPolicy.MaxFailures, locks)
	}
}
