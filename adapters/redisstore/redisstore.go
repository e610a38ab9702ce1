// Package redisstore is the token store on Redis (go-redis v9), shared by
// every replica: live access tokens under the SHA-256 of the token, and
// failed-attempt counts for the lockout.
//
// Keys (all under one prefix, "praxis:" in production):
//
//	token:<hex sha256>        the grant as JSON, expiring with the token
//	client:<id>:tokens        sorted set of the client's token hashes, scored by expiry
//	client:<id>:revoked       marker: the client is revoked, no new tokens
//	attempts:<subject>        failures in the current window
//	lockout:<subject>         marker: subject is locked out until it expires
//	rate:<client>:<window>    requests of the client in one rate-limit window
//	usage:<client>:<day>      the client's calls in one UTC day
//	usage:<client>:last       the client's last call (Unix ms)
//
// Revoking a client reads its own set and deletes those keys in one script:
// no scan over other clients' tokens. A bearer check is one round trip
// (see Authorize).
// The scripts name keys they build from their arguments, so they need a
// single Redis (or a primary with replicas / Sentinel), not Redis Cluster.
package redisstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/praxis-health/praxis/adapters/internal/redact"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/ports"
)

// revocationMemory is how long a revoked client's marker refuses new tokens;
// the database refuses them too, the marker closes the race with a token
// request that passed the database check just before the revocation.
const revocationMemory = 24 * time.Hour

// Store is the Redis ports.TokenStore and ports.AttemptCounter.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	// authorize is the authorize script of the limits last asked for.
	authorize atomic.Pointer[authorizeScript]
	grants    grantCache
	seen      seenTokens
}

var (
	_ ports.TokenStore     = (*Store)(nil)
	_ ports.AttemptCounter = (*Store)(nil)
)

// Open connects to a redis:// or rediss:// URL. With master_name in its
// query the URL names Sentinels instead (go-redis's failover form): the
// host and every addr= are Sentinel addresses, master_name the master they
// watch; the client asks them for the master and follows a failover.
//
//	redis://:password@sentinel-0:26379?master_name=praxis&addr=sentinel-1:26379&addr=sentinel-2:26379
func Open(rawURL string) (*redis.Client, error) {
	if strings.Contains(rawURL, "master_name=") {
		opts, err := redis.ParseFailoverURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("PRAXIS_REDIS_URL (Sentinel): %w", withoutURL(err))
		}
		opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.MaxRetries =
			bounded(opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.MaxRetries)
		return redis.NewFailoverClient(opts), nil
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("PRAXIS_REDIS_URL: %w", withoutURL(err))
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.MaxRetries =
		bounded(opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.MaxRetries)
	return redis.NewClient(opts), nil
}

// withoutURL is a parse error without the URL it would quote: the URL
// holds the password.
func withoutURL(err error) error {
	if inner := redact.URLError(err); inner != nil {
		return inner
	}
	return err
}

// bounded gives the waits their defaults: a frozen Redis answers 503
// within seconds instead of holding requests (go-redis defaults: 5 s dial,
// 3 s reads, 3 retries; our commands take well under a millisecond). The
// URL's own dial_timeout, read_timeout, write_timeout, max_retries win.
func bounded(dial, read, write time.Duration, retries int) (time.Duration, time.Duration, time.Duration, int) {
	orDefault := func(d time.Duration) time.Duration {
		if d == 0 {
			return time.Second
		}
		return d
	}
	if retries == 0 {
		retries = 1
	}
	return orDefault(dial), orDefault(read), orDefault(write), retries
}

// New keeps every key under prefix.
func New(rdb redis.UniversalClient, prefix string) *Store {
	return &Store{rdb: rdb, prefix: prefix}
}

// Shared is true: every replica sees the same tokens.
func (s *Store) Shared() bool { return true }

type grantJSON struct {
	Client   string `json:"cl"`
	Company  string `json:"co"`
	Plan     string `json:"pl,omitempty"`
	Scopes   string `json:"sc"`
	IssuedAt int64  `json:"iat"` // Unix milliseconds
	Expires  int64  `json:"exp"`
}

func (s *Store) lockoutKey(subject string) string { return s.prefix + "lockout:" + subject }
func (s *Store) tokenKey(hash []byte) string      { return s.prefix + "token:" + hex.EncodeToString(hash) }
func (s *Store) clientKey(id domain.ClientID, what string) string {
	return s.prefix + "client:" + string(id) + ":" + what
}

// saveScript keeps a token unless its client is revoked (0) or one of the
// lockout keys after the first three is set (minus the longest wait, in ms).
var saveScript = redis.NewScript(`
local wait = 0
for i = 4, #KEYS do
  local t = redis.call('PTTL', KEYS[i])
  if t > wait then wait = t end
end
if wait > 0 then return -wait end
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[5])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1`)

func (s *Store) Save(ctx context.Context, tokenHash []byte, g domain.Grant) error {
	_, err := s.SaveUnlocked(ctx, tokenHash, g)
	return err
}

func (s *Store) SaveUnlocked(ctx context.Context, tokenHash []byte, g domain.Grant, subjects ...string) (time.Duration, error) {
	ttl := time.Until(g.ExpiresAt).Milliseconds()
	if ttl <= 0 {
		return 0, nil // already expired: nothing to keep
	}
	value, err := json.Marshal(grantJSON{
		Client: string(g.ClientID), Company: g.CompanyID.String(), Plan: g.Plan.String(), Scopes: g.Scopes.String(),
		IssuedAt: g.IssuedAt.UnixMilli(), Expires: g.ExpiresAt.UnixMilli(),
	})
	if err != nil {
		return 0, err
	}
	keys := []string{s.tokenKey(tokenHash), s.clientKey(g.ClientID, "tokens"), s.clientKey(g.ClientID, "revoked")}
	for _, subject := range subjects {
		keys = append(keys, s.lockoutKey(subject))
	}
	saved, err := saveScript.Run(ctx, s.rdb, keys,
		value, ttl, g.ExpiresAt.UnixMilli(), time.Now().UnixMilli(), hex.EncodeToString(tokenHash)).Int64()
	switch {
	case err != nil:
		return 0, domain.Unavailable(fmt.Errorf("redis: save token: %w", err))
	case saved < 0:
		return time.Duration(-saved) * time.Millisecond, nil
	case saved == 0:
		return 0, domain.ErrNotFound
	}
	return 0, nil
}

func (s *Store) Lookup(ctx context.Context, tokenHash []byte) (domain.Grant, error) {
	raw, err := s.rdb.Get(ctx, s.tokenKey(tokenHash)).Result()
	if errors.Is(err, redis.Nil) {
		return domain.Grant{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.Grant{}, domain.Unavailable(fmt.Errorf("redis: look up token: %w", err))
	}
	return s.grants.decode(raw)
}

// authorizeScript looks a token up and counts one request of its client in
// the fixed window of its plan: the bearer check and the rate limit in one
// round trip. The plans' limits are written into its text (they are the
// server's configuration, the same on every call), so that a call sends
// only the time: KEYS are the token, the rate counters' and the usage
// counters' prefixes; ARGV[1] is now (ms).
type authorizeScript struct {
	limits ratelimit.Limits
	script *redis.Script
}

// plans is the order the script's table and RateLimits are read in.
var plans = [...]domain.Plan{domain.PlanBasic, domain.PlanPro, domain.PlanEnterprise}

func newAuthorizeScript(limits ratelimit.Limits) *authorizeScript {
	var table strings.Builder
	for i, p := range plans {
		if i > 0 {
			table.WriteString(", ")
		}
		fmt.Fprintf(&table, "[%q] = {%d, %d}", p.String(), limits[p].Limit, limits[p].Window.Milliseconds())
	}
	return &authorizeScript{limits: limits, script: redis.NewScript(`
local plans = {` + table.String() + `}
local v = redis.call('GET', KEYS[1])
if not v then return false end
local g = cjson.decode(v)
local plan = plans[g['pl'] or '` + domain.PlanBasic.String() + `'] or plans['` + domain.PlanBasic.String() + `']
local limit, window = plan[1], plan[2]
local now = tonumber(ARGV[1])
local slot = math.floor(now / window)
local key = KEYS[2] .. g['cl'] .. ':' .. slot
local n = redis.call('INCR', key)
if n == 1 then redis.call('PEXPIRE', key, window) end
local usage = KEYS[3] .. g['cl'] .. ':'
local day = usage .. math.floor(now / 86400000)
if redis.call('INCR', day) == 1 then redis.call('PEXPIRE', day, ` + strconv.FormatInt(usageMemory.Milliseconds(), 10) + `) end
redis.call('SET', usage .. 'last', now, 'PX', ` + strconv.FormatInt(lastUseMemory.Milliseconds(), 10) + `)
return {v, n, limit, window, window - (now % window)}`)}
}

// authorizeFor is the script of limits: the one last built when they are the same.
func (s *Store) authorizeFor(limits ratelimit.Limits) *redis.Script {
	if a := s.authorize.Load(); a != nil && sameLimits(a.limits, limits) {
		return a.script
	}
	a := newAuthorizeScript(limits)
	s.authorize.Store(a)
	return a.script
}

func sameLimits(a, b ratelimit.Limits) bool {
	for _, p := range plans {
		if a[p] != b[p] {
			return false
		}
	}
	return true
}

// Authorize is the bearer check and the rate count. A token this replica
// has seen before is one pipeline of plain commands: the GET of its grant,
// and the counts of the client it belongs to (a token's client and plan
// never change). Redis answers that in a fraction of the script's time —
// a script call's own cost is most of it. A token not seen before runs the
// script, which learns the client from the grant inside Redis.
//
// The GET decides, as in the script: a token gone from Redis (revoked,
// expired) is refused and forgotten here, and the pipeline that found it
// gone has counted one request of its client — at most one per replica
// and token, as the token was forgotten.
func (s *Store) Authorize(ctx context.Context, tokenHash []byte, limits ratelimit.Limits) (domain.Grant, ratelimit.State, error) {
	now := time.Now().UnixMilli()
	if g, ok := s.seen.get(string(tokenHash)); ok {
		// A window the pipeline cannot count in is left to the script.
		if limit := limits.Of(g.Plan); limit.Window.Milliseconds() > 0 {
			return s.authorizeSeen(ctx, tokenHash, g, limits, limit, now)
		}
	}
	return s.authorizeScript(ctx, tokenHash, limits, now)
}

// authorizeSeen counts as the script does, with the key names built here:
// a window's counter and a day's usage are created with their expiry
// (SET NX PX) before they are incremented.
func (s *Store) authorizeSeen(ctx context.Context, tokenHash []byte, seen domain.Grant, limits ratelimit.Limits, limit ratelimit.Limit, now int64) (domain.Grant, ratelimit.State, error) {
	window := limit.Window.Milliseconds()
	usage := s.prefix + "usage:" + string(seen.ClientID) + ":"
	rateKey := s.prefix + "rate:" + string(seen.ClientID) + ":" + strconv.FormatInt(now/window, 10)
	dayKey := usage + strconv.FormatInt(ratelimit.UsageDay(time.UnixMilli(now)), 10)
	p := s.rdb.Pipeline()
	get := p.Get(ctx, s.tokenKey(tokenHash))
	p.SetNX(ctx, rateKey, 0, limit.Window)
	n := p.Incr(ctx, rateKey)
	p.SetNX(ctx, dayKey, 0, usageMemory)
	p.Incr(ctx, dayKey)
	p.Set(ctx, usage+"last", now, lastUseMemory)
	_, err := p.Exec(ctx)
	if errors.Is(get.Err(), redis.Nil) {
		s.seen.forget(string(tokenHash))
		return domain.Grant{}, ratelimit.State{}, domain.ErrNotFound
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return domain.Grant{}, ratelimit.State{}, domain.Unavailable(fmt.Errorf("redis: authorize: %w", err))
	}
	g, err := s.grants.decode(get.Val())
	if err != nil {
		return domain.Grant{}, ratelimit.State{}, err
	}
	if g.ClientID != seen.ClientID || g.Plan != seen.Plan {
		// Not the grant this hash had (never so while a token's value is
		// written once): the counts above went to another client; the
		// script counts this request where it belongs.
		s.seen.forget(string(tokenHash))
		return s.authorizeScript(ctx, tokenHash, limits, now)
	}
	return g, ratelimit.State{Limit: limit.Limit, Window: limit.Window, Remaining: limit.Limit - int(n.Val()),
		Reset: time.Duration(window-now%window) * time.Millisecond}, nil
}

// usageMemory and lastUseMemory are how long a day's count and the last
// call are kept.
const (
	usageMemory   = 8 * 24 * time.Hour
	lastUseMemory = 90 * 24 * time.Hour
)

func (s *Store) authorizeScript(ctx context.Context, tokenHash []byte, limits ratelimit.Limits, now int64) (domain.Grant, ratelimit.State, error) {
	res, err := s.authorizeFor(limits).Run(ctx, s.rdb, []string{s.tokenKey(tokenHash), s.prefix + "rate:", s.prefix + "usage:"},
		now).Slice()
	if errors.Is(err, redis.Nil) {
		return domain.Grant{}, ratelimit.State{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.Grant{}, ratelimit.State{}, domain.Unavailable(fmt.Errorf("redis: authorize: %w", err))
	}
	if len(res) != 5 {
		return domain.Grant{}, ratelimit.State{}, fmt.Errorf("redis: authorize: %d values", len(res))
	}
	raw, _ := res[0].(string)
	g, err := s.grants.decode(raw)
	if err != nil {
		return domain.Grant{}, ratelimit.State{}, err
	}
	s.seen.put(string(tokenHash), domain.Grant{ClientID: g.ClientID, Plan: g.Plan}) // what a pipeline counts by
	n, limit, window, reset := res[1].(int64), res[2].(int64), res[3].(int64), res[4].(int64)
	return g, ratelimit.State{Limit: int(limit), Window: time.Duration(window) * time.Millisecond, Remaining: int(limit - n),
		Reset: time.Duration(reset) * time.Millisecond}, nil
}

// ForgetUsage deletes the client's day counters and last call in one round
// trip: the days Usage reads, and the one before them (a counter lives a
// day past the days it is read).
func (s *Store) ForgetUsage(ctx context.Context, client domain.ClientID) error {
	prefix := s.prefix + "usage:" + string(client) + ":"
	today := ratelimit.UsageDay(time.Now())
	keys := []string{prefix + "last"}
	for i := range int64(ratelimit.UsageDays) + 1 {
		keys = append(keys, prefix+strconv.FormatInt(today-i, 10))
	}
	if err := s.rdb.Del(ctx, keys...).Err(); err != nil {
		return domain.Unavailable(fmt.Errorf("redis: forget usage: %w", err))
	}
	return nil
}

// Usage reads the client's day counters and last call in one round trip.
func (s *Store) Usage(ctx context.Context, client domain.ClientID, now time.Time) (ratelimit.Usage, error) {
	prefix := s.prefix + "usage:" + string(client) + ":"
	today := ratelimit.UsageDay(now)
	keys := []string{prefix + "last"}
	for i := range int64(ratelimit.UsageDays) {
		keys = append(keys, prefix+strconv.FormatInt(today-i, 10))
	}
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return ratelimit.Usage{}, domain.Unavailable(fmt.Errorf("redis: usage: %w", err))
	}
	var u ratelimit.Usage
	if v, ok := vals[0].(string); ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			last := time.UnixMilli(ms).UTC()
			u.LastUse = &last
		}
	}
	for i, v := range vals[1:] {
		var n int64
		if str, ok := v.(string); ok {
			n, _ = strconv.ParseInt(str, 10, 64)
		}
		u.Days = append(u.Days, ratelimit.DayCalls{Day: time.Unix((today-int64(i))*86400, 0).UTC().Format(time.DateOnly), Calls: n})
	}
	return u, nil
}

// grantCache keeps decoded grants by the bytes Redis holds for them. A
// token's value never changes, so the same bytes are the same grant; the
// cache is read only with bytes Redis has just answered, so a revoked or
// expired token, gone from Redis, is never found through it.
type grantCache struct{ boundedMap[domain.Grant] }

// decode is decodeGrant of raw, from the cache when it has it; the
// scopes are the caller's own copy.
func (c *grantCache) decode(raw string) (domain.Grant, error) {
	g, ok := c.get(raw)
	if !ok {
		var err error
		if g, err = decodeGrant([]byte(raw)); err != nil {
			return domain.Grant{}, err
		}
		c.put(raw, g)
	}
	g.Scopes = slices.Clone(g.Scopes)
	return g, nil
}

// seenTokens are the grants of tokens this replica has authorized, by
// the token's hash: whose counts a pipeline increments. Never an answer
// on their own — the GET in the same pipeline decides.
type seenTokens struct{ boundedMap[domain.Grant] }

// boundedMap is a map for many readers, emptied when full: a replica's
// live tokens are a few thousand.
type boundedMap[V any] struct {
	mu sync.RWMutex
	m  map[string]V
}

const maxCachedGrants = 4096

func (b *boundedMap[V]) get(key string) (V, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	v, ok := b.m[key]
	return v, ok
}

func (b *boundedMap[V]) put(key string, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) >= maxCachedGrants {
		b.m = make(map[string]V, 64)
	}
	b.m[key] = v
}

func (b *boundedMap[V]) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, key)
}

func decodeGrant(raw []byte) (domain.Grant, error) {
	var v grantJSON
	if err := json.Unmarshal(raw, &v); err != nil {
		return domain.Grant{}, fmt.Errorf("redis: token value: %w", err)
	}
	company, err := domain.ParseCompanyID(v.Company)
	if err != nil {
		return domain.Grant{}, fmt.Errorf("redis: token value: %w", err)
	}
	scopes, err := domain.ParseScopes(v.Scopes)
	if err != nil {
		return domain.Grant{}, fmt.Errorf("redis: token value: %w", err)
	}
	plan := domain.PlanBasic
	if v.Plan != "" {
		if plan, err = domain.ParsePlan(v.Plan); err != nil {
			return domain.Grant{}, fmt.Errorf("redis: token value: %w", err)
		}
	}
	return domain.Grant{
		ClientID: domain.ClientID(v.Client), CompanyID: company, Plan: plan, Scopes: scopes,
		IssuedAt: time.UnixMilli(v.IssuedAt).UTC(), ExpiresAt: time.UnixMilli(v.Expires).UTC(),
	}, nil
}

func (s *Store) Revoke(ctx context.Context, tokenHash []byte) error {
	if err := s.rdb.Del(ctx, s.tokenKey(tokenHash)).Err(); err != nil {
		return domain.Unavailable(fmt.Errorf("redis: revoke token: %w", err))
	}
	return nil
}

var revokeClientScript = redis.NewScript(`
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
local hashes = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, h in ipairs(hashes) do redis.call('DEL', ARGV[1] .. h) end
redis.call('DEL', KEYS[1])
return #hashes`)

func (s *Store) RevokeClient(ctx context.Context, client domain.ClientID) error {
	keys := []string{s.clientKey(client, "tokens"), s.clientKey(client, "revoked")}
	if err := revokeClientScript.Run(ctx, s.rdb, keys, s.prefix+"token:", revocationMemory.Milliseconds()).Err(); err != nil {
		return domain.Unavailable(fmt.Errorf("redis: revoke client: %w", err))
	}
	return nil
}

func (s *Store) Lockout(ctx context.Context, subjects ...string) (time.Duration, error) {
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, subject := range subjects {
			p.PTTL(ctx, s.lockoutKey(subject))
		}
		return nil
	})
	if err != nil {
		return 0, domain.Unavailable(fmt.Errorf("redis: read lockout: %w", err))
	}
	var longest time.Duration
	for _, c := range cmds {
		longest = max(longest, c.(*redis.DurationCmd).Val()) // -2: no key, -1: no expiry (never set so)
	}
	return longest, nil
}

var failScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n >= tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  redis.call('DEL', KEYS[1])
  return tonumber(ARGV[3])
end
return 0`)

func (s *Store) Fail(ctx context.Context, subject string, p domain.LockoutPolicy) (time.Duration, error) {
	keys := []string{s.prefix + "attempts:" + subject, s.lockoutKey(subject)}
	ms, err := failScript.Run(ctx, s.rdb, keys, p.MaxFailures, p.Window.Milliseconds(), p.Lockout.Milliseconds()).Int64()
	if err != nil {
		return 0, domain.Unavailable(fmt.Errorf("redis: count failure: %w", err))
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// HealthCheck pings Redis for /readyz.
type HealthCheck struct{ RDB redis.UniversalClient }

func (HealthCheck) Name() string { return "token_store" }

func (h HealthCheck) Check(ctx context.Context) error { return h.RDB.Ping(ctx).Err() }
