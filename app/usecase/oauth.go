package usecase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/domain/smart"
	"github.com/praxis-health/praxis/ports"
)

// maxTokenLength: anything longer than this cannot be a token we issued
// (43 characters); it is refused before it is hashed or looked up.
const maxTokenLength = 256

// OAuthSettings are the token lifetime and the lockout for wrong client secrets.
type OAuthSettings struct {
	TokenTTL   time.Duration
	Lockout    domain.LockoutPolicy
	RateLimits ratelimit.Limits
	// AllowPrivateKeySets lets a client's key set URL be plain http and
	// inside this network, as PRAXIS_WEBHOOK_ALLOW_PRIVATE lets webhooks.
	AllowPrivateKeySets bool
}

// OAuth issues, checks, revokes and describes access tokens of the
// client-credentials grant.
type OAuth struct {
	clients  ports.ClientRepository
	tokens   ports.TokenStore
	lockout  lockout
	limits   ratelimit.Limits
	known    *clientCache
	signed   *assertions
	tokenTTL time.Duration
	now      func() time.Time
}

var _ ports.Authorizer = (*OAuth)(nil)

// NewOAuth wires the OAuth use case.
func NewOAuth(clients ports.ClientRepository, tokens ports.TokenStore, attempts ports.AttemptCounter, ids ports.AssertionIDs, keys ports.KeySets, s OAuthSettings) *OAuth {
	limits := s.RateLimits
	if limits == nil {
		limits, _ = ratelimit.ParseLimits(ratelimit.DefaultLimits)
	}
	return &OAuth{clients: clients, tokens: tokens, lockout: lockout{attempts, s.Lockout}, limits: limits, known: newClientCache(),
		signed: &assertions{ids: ids, keys: keys, allowPrivate: s.AllowPrivateKeySets}, tokenTTL: s.TokenTTL, now: time.Now}
}

// IssueToken authenticates the client and issues a token for the requested
// scopes, or all of the client's when none are requested.
func (o *OAuth) IssueToken(ctx context.Context, req ports.TokenRequest) (ports.IssuedToken, error) {
	// The lockout is read with the save (one round trip); a wrong secret
	// reads it first, so a locked source is refused alike either way.
	client, err := o.tokenClient(ctx, req)
	if err != nil {
		return ports.IssuedToken{}, err
	}
	ttl := o.tokenTTL
	if req.Assertion != nil {
		ttl = min(ttl, smart.AssertionTokenTTL)
	}
	scopes := client.Scopes
	if req.Scope != nil {
		requested, err := smart.ParseRequestedScopes(*req.Scope)
		if err != nil {
			return ports.IssuedToken{}, domain.OAuthErrorf(domain.OAuthInvalidScope, "%s", validationMessage(err))
		}
		if missing, ok := client.Scopes.Missing(requested); ok {
			return ports.IssuedToken{}, domain.OAuthErrorf(domain.OAuthInvalidScope, "scope %s is not granted to this client", missing)
		}
		scopes = requested
	}
	token, err := domain.NewSecret()
	if err != nil {
		return ports.IssuedToken{}, err
	}
	now := o.now().UTC()
	grant := domain.Grant{ClientID: client.ID, CompanyID: client.CompanyID, Plan: client.Plan, Scopes: scopes, IssuedAt: now, ExpiresAt: now.Add(ttl)}
	switch wait, err := o.tokens.SaveUnlocked(ctx, token.Hash(), grant, o.lockout.subjects(clientSubject(client.ID), req.Client.Source)...); {
	case errors.Is(err, domain.ErrNotFound): // revoked: between the check and the save, or while cached
		o.known.forget(client.ID)
		return ports.IssuedToken{}, clientAuthFailed
	case err != nil:
		return ports.IssuedToken{}, fmt.Errorf("save token: %w", err)
	case wait > 0:
		return ports.IssuedToken{}, &domain.TooManyAttempts{RetryAfter: wait}
	}
	return ports.IssuedToken{AccessToken: string(token), ExpiresIn: ttl, Scopes: scopes}, nil
}

// tokenClient checks a token request's client by its secret or by its
// signed assertion. A failed assertion counts against the client and the
// source as a wrong secret does.
func (o *OAuth) tokenClient(ctx context.Context, req ports.TokenRequest) (domain.Client, error) {
	if req.Assertion == nil {
		return o.verifyClient(ctx, req.Client, false)
	}
	load := func(id domain.ClientID, fresh bool) (domain.Client, error) {
		if err := o.lockout.check(ctx, clientSubject(id), req.Client.Source); err != nil {
			return domain.Client{}, err
		}
		if fresh {
			o.known.forget(id)
		}
		client, err := o.client(ctx, id)
		if errors.Is(err, domain.ErrNotFound) || (err == nil && !client.Active()) {
			return domain.Client{}, clientAuthFailed
		}
		return client, err
	}
	client, err := o.signed.verify(ctx, load, *req.Assertion, req.Client.ID, o.now())
	var oe *domain.OAuthError
	if errors.As(err, &oe) && oe.Code == domain.OAuthInvalidClient {
		subject := clientSubject(req.Client.ID)
		if client.ID != "" {
			subject = clientSubject(client.ID)
		}
		o.lockout.fail(ctx, subject, req.Client.Source)
	}
	if err != nil {
		return domain.Client{}, err
	}
	return client, nil
}

// Authenticate is the bearer check and the rate count of a resource
// request: one token-store round trip. Only when the store is in-process
// (not shared with the admin command that revokes clients) is the client's
// state read from the database as well.
func (o *OAuth) Authenticate(ctx context.Context, token string) (domain.Grant, ratelimit.State, error) {
	if token == "" || len(token) > maxTokenLength {
		return domain.Grant{}, ratelimit.State{}, domain.ErrNotFound
	}
	grant, rate, err := o.tokens.Authorize(ctx, domain.Secret(token).Hash(), o.limits)
	if err != nil {
		return domain.Grant{}, ratelimit.State{}, err
	}
	if !o.now().Before(grant.ExpiresAt) {
		return domain.Grant{}, ratelimit.State{}, domain.ErrNotFound
	}
	if !o.tokens.Shared() {
		client, err := o.clients.Get(ctx, grant.ClientID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return domain.Grant{}, ratelimit.State{}, fmt.Errorf("load client: %w", err)
		}
		if err != nil || !client.Active() {
			return domain.Grant{}, ratelimit.State{}, errors.Join(domain.ErrNotFound, o.tokens.RevokeClient(ctx, grant.ClientID))
		}
	}
	return grant, rate, nil
}

// Revoke ends token if the requesting client owns it (RFC 7009).
func (o *OAuth) Revoke(ctx context.Context, cred ports.ClientCredentials, token string) error {
	hash, owned, err := o.ownToken(ctx, cred, token)
	if err != nil || !owned.Active {
		return err
	}
	return o.tokens.Revoke(ctx, hash)
}

// Introspect describes token if the requesting client owns it (RFC 7662).
func (o *OAuth) Introspect(ctx context.Context, cred ports.ClientCredentials, token string) (ports.Introspection, error) {
	_, owned, err := o.ownToken(ctx, cred, token)
	return owned, err
}

// ownToken authenticates the client and looks token up; Active is false for
// an unknown token and for another client's.
func (o *OAuth) ownToken(ctx context.Context, cred ports.ClientCredentials, token string) ([]byte, ports.Introspection, error) {
	client, err := o.authenticateClient(ctx, cred)
	if err != nil {
		return nil, ports.Introspection{}, err
	}
	if token == "" {
		return nil, ports.Introspection{}, domain.OAuthErrorf(domain.OAuthInvalidRequest, "the token parameter is required")
	}
	hash, grant, err := o.liveGrant(ctx, token)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return hash, ports.Introspection{}, nil
	case err != nil:
		return nil, ports.Introspection{}, fmt.Errorf("look up token: %w", err)
	case grant.ClientID != client.ID:
		return hash, ports.Introspection{}, nil
	}
	return hash, ports.Introspection{Active: true, Grant: grant}, nil
}

// liveGrant looks a presented token up by its hash: domain.ErrNotFound for
// one that is unknown, expired, or too long to be one we issued (which is
// refused before it is hashed). The hash is nil for such a token.
func (o *OAuth) liveGrant(ctx context.Context, token string) ([]byte, domain.Grant, error) {
	if token == "" || len(token) > maxTokenLength {
		return nil, domain.Grant{}, domain.ErrNotFound
	}
	hash := domain.Secret(token).Hash()
	grant, err := o.tokens.Lookup(ctx, hash)
	if err != nil {
		return hash, domain.Grant{}, err
	}
	if !o.now().Before(grant.ExpiresAt) {
		return hash, domain.Grant{}, domain.ErrNotFound
	}
	return hash, grant, nil
}

// clientAuthFailed is the one answer to every failed client authentication,
// so that it does not tell an unknown client from a wrong secret.
var clientAuthFailed = domain.OAuthErrorf(domain.OAuthInvalidClient, "client authentication failed")

// authenticateClient checks the client's secret in constant time, refusing
// while the source is locked out after repeated wrong secrets.
func (o *OAuth) authenticateClient(ctx context.Context, cred ports.ClientCredentials) (domain.Client, error) {
	return o.verifyClient(ctx, cred, true)
}

// verifyClient checks the client's secret in constant time. With lockFirst
// a locked source is refused before its secret is read; without, the
// caller reads the lockout with what it does next, and a wrong secret
// reads it here: a locked source is refused whatever secret it sends.
// A wrong secret from a source not locked is counted.
func (o *OAuth) verifyClient(ctx context.Context, cred ports.ClientCredentials, lockFirst bool) (domain.Client, error) {
	if !cred.ID.Plausible() || cred.Secret == "" {
		return domain.Client{}, clientAuthFailed
	}
	subject := clientSubject(cred.ID)
	if lockFirst {
		if err := o.lockout.check(ctx, subject, cred.Source); err != nil {
			return domain.Client{}, err
		}
	}
	client, err := o.client(ctx, cred.ID)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return domain.Client{}, fmt.Errorf("load client: %w", err)
	}
	if err == nil && client.Active() && !client.Accepts(domain.Secret(cred.Secret), o.now()) && o.known.forget(cred.ID) {
		// The cached client may predate a rotation: read it again once.
		client, err = o.client(ctx, cred.ID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return domain.Client{}, fmt.Errorf("load client: %w", err)
		}
	}
	if err != nil || !client.Active() || !client.Accepts(domain.Secret(cred.Secret), o.now()) {
		if !lockFirst {
			if err := o.lockout.check(ctx, subject, cred.Source); err != nil {
				return domain.Client{}, err
			}
		}
		o.lockout.fail(ctx, subject, cred.Source)
		return domain.Client{}, clientAuthFailed
	}
	return client, nil
}

// clientSubject is what the lockout counts a client's wrong secrets under.
func clientSubject(id domain.ClientID) string { return "client:" + string(id) }

// client reads a client, from a brief in-process cache when the token store
// is shared: a token request then costs no database read for a known client.
// Revocation stays immediate on every replica: RevokeClient sets a marker in
// the shared store, and Save refuses every token of a marked client, cached
// or not. In process (embedded mode) nothing is cached: the admin command
// that revokes cannot reach this memory, the database is the truth.
func (o *OAuth) client(ctx context.Context, id domain.ClientID) (domain.Client, error) {
	if !o.tokens.Shared() {
		return o.clients.Get(ctx, id)
	}
	if c, ok := o.known.get(id, o.now()); ok {
		return c, nil
	}
	c, err := o.clients.Get(ctx, id)
	if err == nil && c.Active() {
		o.known.put(c, o.now())
	}
	return c, err
}

// lockout slows down guessing secrets. Wrong secrets are counted per source
// address and per subject and source, never per subject alone: a source that
// guesses is refused for a while, the subject's owner elsewhere never is.
// A locked source is refused whatever secret it sends, and its wrong
// secrets are not counted (RFC 6749 §2.3.1's brute-force protection). When
// the counter store cannot be reached, the check fails open for that
// request: throttling is a defence against guessing 256-bit secrets, not
// the door itself.
type lockout struct {
	attempts ports.AttemptCounter
	policy   domain.LockoutPolicy
}

// sourceFactor widens the per-source limit: one address may be a practice's
// NAT with several devices and clients behind it.
const sourceFactor = 5

// subjects are the lockout's keys of subject from source, as
// AttemptCounter.Lockout reads them.
func (l lockout) subjects(subject, source string) []string {
	keys := l.keys(subject, source)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.key
	}
	return out
}

func (l lockout) keys(subject, source string) []struct {
	key    string
	policy domain.LockoutPolicy
} {
	wide := l.policy
	wide.MaxFailures *= sourceFactor
	return []struct {
		key    string
		policy domain.LockoutPolicy
	}{{"source:" + source, wide}, {subject + "@" + source, l.policy}}
}

// check refuses with *domain.TooManyAttempts while the source, or the
// subject from this source, is locked out.
func (l lockout) check(ctx context.Context, subject, source string) error {
	wait, err := l.attempts.Lockout(ctx, l.subjects(subject, source)...) // one round trip
	if err != nil {
		slog.WarnContext(ctx, "throttling unavailable, failing open", "error", err.Error())
		return nil
	}
	if wait > 0 {
		return &domain.TooManyAttempts{RetryAfter: wait}
	}
	return nil
}

// fail counts a wrong secret; the request that fails is still answered on
// its merits, the lockout applies to the requests after it.
func (l lockout) fail(ctx context.Context, subject, source string) {
	for _, k := range l.keys(subject, source) {
		if _, err := l.attempts.Fail(ctx, k.key, k.policy); err != nil {
			slog.WarnContext(ctx, "throttling unavailable, failing open", "error", err.Error())
			return
		}
	}
}

// validationMessage is the message of a *domain.ValidationError, else the error text.
func validationMessage(err error) string {
	var v *domain.ValidationError
	if errors.As(err, &v) {
		return v.Message
	}
	return err.Error()
}

// Companies serves the company profile of the token's company.
type Companies struct{ companies ports.CompanyRepository }

var _ ports.CompanyProfiles = (*Companies)(nil)

// NewCompanies wires the company profile use case.
func NewCompanies(companies ports.CompanyRepository) *Companies {
	return &Companies{companies: companies}
}

// Profile returns the company; nothing else is reachable from here.
func (c *Companies) Profile(ctx context.Context, company domain.CompanyID) (domain.Company, error) {
	return c.companies.Get(ctx, company)
}
