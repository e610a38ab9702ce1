package redisstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/test/testenv"
)

// TestAuthorizeCountsAlikeByScriptAndPipeline: a token's first check runs
// the script, the next ones the pipeline; both count into the same
// window and day, with the same expiries, so two replicas — one that
// has seen the token, one that has not — share one budget. A token gone
// from Redis is refused by the pipeline, forgotten, and counted once.
func TestAuthorizeCountsAlikeByScriptAndPipeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, err := Open(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	prefix := testenv.RedisPrefix()
	one, other := New(rdb, prefix), New(rdb, prefix) // two replicas
	limits := ratelimit.Limits{domain.PlanBasic: {Limit: 2, Window: time.Hour}, domain.PlanPro: {Limit: 10, Window: time.Hour},
		domain.PlanEnterprise: {Limit: 20, Window: time.Hour}}
	// Every count below falls into one window: start clear of its end.
	if left := time.Hour - time.Duration(time.Now().UnixMilli()%time.Hour.Milliseconds())*time.Millisecond; left < 10*time.Second {
		time.Sleep(left)
	}
	company := domain.NewCompanyID()
	token := func(client domain.ClientID, n int) []byte {
		h := sha256.Sum256([]byte(string(client) + strconv.Itoa(n)))
		scopes, _ := domain.ParseScopes("company:read")
		if err := one.Save(ctx, h[:], domain.Grant{ClientID: client, CompanyID: company, Plan: domain.PlanPro, Scopes: scopes,
			IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		return h[:]
	}
	first, second, neighbour := token("pc_counted", 1), token("pc_counted", 2), token("pc_neighbour", 1)

	for i, step := range []struct {
		store  *Store
		token  []byte
		seen   bool // the pipeline, not the script
		remain int
	}{
		{one, first, false, 9}, {one, first, true, 8}, {other, first, false, 7}, {one, second, false, 6},
		{other, first, true, 5}, {one, second, true, 4}, {one, neighbour, false, 9},
	} {
		_, seen := step.store.seen.get(string(step.token))
		g, rate, err := step.store.Authorize(ctx, step.token, limits)
		if err != nil || seen != step.seen || rate.Limit != 10 || rate.Remaining != step.remain || rate.Window != time.Hour ||
			rate.Reset <= 0 || rate.Reset > time.Hour || g.CompanyID != company || g.Plan != domain.PlanPro || g.Scopes.String() != "company:read" {
			t.Fatalf("check %d (pipeline %v): %+v %+v %v, want %d remaining", i+1, seen, g, rate, err, step.remain)
		}
	}
	now := time.Now().UnixMilli()
	usage := prefix + "usage:pc_counted:"
	for key, memory := range map[string]time.Duration{
		prefix + "rate:pc_counted:" + strconv.FormatInt(now/time.Hour.Milliseconds(), 10): time.Hour,
		usage + strconv.FormatInt(now/86400000, 10):                                       usageMemory,
		usage + "last": lastUseMemory,
	} {
		if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 0 || ttl > memory || (memory > time.Hour && ttl < memory-time.Minute) {
			t.Errorf("%s expires in %v, want within %v", key, ttl, memory)
		}
	}

	if err := one.Revoke(ctx, first); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, _, err := one.Authorize(ctx, first, limits); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("revoked token, check %d: %v", i+1, err)
		}
		if _, seen := one.seen.get(string(first)); seen {
			t.Fatalf("revoked token still known after check %d", i+1)
		}
	}
	// The refusal that found it gone counted once; the script's did not.
	if _, rate, err := one.Authorize(ctx, second, limits); err != nil || rate.Remaining != 2 {
		t.Errorf("after the revoked token's checks: %+v %v, want 2 remaining", rate, err)
	}
	u, err := one.Usage(ctx, "pc_counted", time.Now())
	if err != nil || u.Today() != 8 || u.LastUse == nil || time.Since(*u.LastUse) > time.Minute {
		t.Errorf("usage: %+v %v, want 8 today", u, err)
	}

	// A hash whose value changed (never written so): the script counts the
	// request for the client the value names, and the hash is learnt anew.
	rdb.Set(ctx, one.tokenKey(second), rdb.Get(ctx, one.tokenKey(neighbour)).Val(), time.Hour)
	if g, rate, err := one.Authorize(ctx, second, limits); err != nil || g.ClientID != "pc_neighbour" || rate.Remaining != 8 {
		t.Errorf("a changed value: %+v %+v %v, want pc_neighbour with 8 remaining", g, rate, err)
	}
	if g, _ := one.seen.get(string(second)); g.ClientID != "pc_neighbour" {
		t.Errorf("the changed value's client was not learnt: %+v", g)
	}
}
