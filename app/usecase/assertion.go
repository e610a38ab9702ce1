package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/smart"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// Signed client assertions (RFC 7523 as SMART Backend Services profiles
// it): the client signs a JWT with its private key; praxis checks it with
// the public keys the client registered, inline or at a URL.

// assertionLeeway is the clock skew allowed between a client and praxis.
const assertionLeeway = 30 * time.Second

// keySetTTL is how long a fetched key set is used; an unknown kid fetches
// it again, at most every keySetRefetch.
const (
	keySetTTL     = 5 * time.Minute
	keySetRefetch = 10 * time.Second
)

// assertions checks signed client assertions.
type assertions struct {
	ids          ports.AssertionIDs
	keys         ports.KeySets
	allowPrivate bool
	mu           sync.Mutex
	fetched      map[string]fetchedKeys
}

type fetchedKeys struct {
	set jose.JSONWebKeySet
	at  time.Time
}

// refused is how every failed assertion is answered: invalid_client with
// what was wrong (the client's own mistake; nothing about other clients).
func refused(format string, args ...any) error {
	return domain.OAuthErrorf(domain.OAuthInvalidClient, "the client assertion "+format, args...)
}

var signatureAlgorithms = func() []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(smart.AssertionAlgorithms))
	for i, a := range smart.AssertionAlgorithms {
		out[i] = jose.SignatureAlgorithm(a)
	}
	return out
}()

// CheckKeySet refuses a client's keys that cannot verify assertions: a URL
// outside the egress rules, or an inline set without a public signing key.
func CheckKeySet(url string, set []byte, allowPrivate bool) error {
	switch {
	case url != "" && len(set) > 0:
		return domain.FieldErrors{{Field: "jwks", Message: "give the keys by URL or inline, not both"}}.Err()
	case url != "":
		if _, err := webhook.CheckURL(url, allowPrivate); err != nil {
			return domain.FieldErrors{{Field: "jwks_url", Message: "must be an https URL outside this network"}}.Err()
		}
	case len(set) > 0:
		var keys jose.JSONWebKeySet
		if err := json.Unmarshal(set, &keys); err != nil || len(keys.Keys) == 0 {
			return domain.FieldErrors{{Field: "jwks", Message: "must be a JWK Set with at least one public key"}}.Err()
		}
		for _, k := range keys.Keys {
			if !k.IsPublic() || k.KeyID == "" {
				return domain.FieldErrors{{Field: "jwks", Message: "every key must be public and have a kid"}}.Err()
			}
		}
	}
	return nil
}

// verify checks a client assertion and returns its client (also with a
// refusal, once the client is known, for the lockout to count): signed by one
// of the client's keys (picked by kid), iss and sub the client, aud the
// token endpoint, exp in the future and at most five minutes ahead, jti
// never seen before for this client.
func (a *assertions) verify(ctx context.Context, load func(id domain.ClientID, fresh bool) (domain.Client, error), as ports.ClientAssertion, named domain.ClientID, now time.Time) (domain.Client, error) {
	tok, err := jwt.ParseSigned(as.JWT, signatureAlgorithms)
	if err != nil {
		return domain.Client{}, refused("is not a JWT signed with one of %v", smart.AssertionAlgorithms)
	}
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil || unverified.Issuer == "" || unverified.Subject != unverified.Issuer {
		return domain.Client{}, refused("must name the client as iss and sub")
	}
	id := domain.ClientID(unverified.Issuer)
	if named != "" && named != id {
		return domain.Client{}, refused("names another client than client_id")
	}
	client, err := load(id, false)
	if err != nil {
		return domain.Client{}, err
	}
	kid := tok.Headers[0].KeyID
	keyOf := func(client domain.Client) (any, error) {
		if client.KeySetURL == "" && len(client.KeySet) == 0 {
			return nil, refused("is not how this client signs in: it has no keys registered")
		}
		return a.key(ctx, client, kid, now)
	}
	key, err := keyOf(client)
	if err != nil && len(client.KeySet) > 0 && kid != "" {
		// A key the cached client does not hold may have been registered
		// since (a rotation in the settings or the operator): read it again.
		if client, err = load(id, true); err != nil {
			return domain.Client{}, err
		}
		key, err = keyOf(client)
	}
	if err != nil {
		return client, err
	}
	var claims jwt.Claims
	if err := tok.Claims(key, &claims); err != nil {
		return client, refused("is not signed by the key %q of this client", kid)
	}
	switch err := claims.ValidateWithLeeway(jwt.Expected{Issuer: string(id), Subject: string(id), AnyAudience: jwt.Audience{as.Audience}, Time: now}, assertionLeeway); {
	case errors.Is(err, jwt.ErrInvalidAudience):
		return client, refused("must name the token endpoint %s as aud", as.Audience)
	case errors.Is(err, jwt.ErrExpired):
		return client, refused("has expired")
	case err != nil:
		return client, refused("is not valid yet or names another client")
	}
	if claims.Expiry == nil {
		return client, refused("must have an exp")
	}
	exp := claims.Expiry.Time()
	if exp.After(now.Add(smart.MaxAssertionLifetime + assertionLeeway)) {
		return client, refused("must expire within %s", smart.MaxAssertionLifetime)
	}
	if claims.ID == "" || len(claims.ID) > 255 {
		return client, refused("must have a jti of at most 255 characters")
	}
	switch err := a.ids.Use(ctx, client.CompanyID, client.ID, claims.ID, exp.Add(assertionLeeway), now); {
	case errors.Is(err, domain.ErrConflict):
		return client, refused("was used before (its jti)")
	case err != nil:
		return client, fmt.Errorf("record the assertion: %w", err)
	}
	return client, nil
}

// key is the client's public key named kid: from its inline set, or from
// its URL's, fetched again when kid is unknown.
func (a *assertions) key(ctx context.Context, client domain.Client, kid string, now time.Time) (any, error) {
	if kid == "" {
		return nil, refused("must name its key (kid)")
	}
	if len(client.KeySet) > 0 {
		var set jose.JSONWebKeySet
		if err := json.Unmarshal(client.KeySet, &set); err != nil {
			return nil, fmt.Errorf("the client's key set: %w", err)
		}
		if keys := set.Key(kid); len(keys) == 1 && keys[0].IsPublic() {
			return keys[0].Key, nil
		}
		return nil, refused("names a key (kid) this client did not register")
	}
	for attempt := 0; attempt < 2; attempt++ {
		set, err := a.keySet(ctx, client.KeySetURL, attempt > 0, now)
		if err != nil {
			return nil, err
		}
		if keys := set.Key(kid); len(keys) == 1 && keys[0].IsPublic() {
			return keys[0].Key, nil
		}
	}
	return nil, refused("names a key (kid) that is not in the client's key set")
}

// keySet is the set at url: the cached one unless it is old, or unless
// again asks for a fresh one and the last fetch is not too recent.
func (a *assertions) keySet(ctx context.Context, url string, again bool, now time.Time) (jose.JSONWebKeySet, error) {
	a.mu.Lock()
	cached, ok := a.fetched[url]
	a.mu.Unlock()
	if ok && now.Sub(cached.at) < keySetTTL && (!again || now.Sub(cached.at) < keySetRefetch) {
		return cached.set, nil
	}
	if _, err := webhook.CheckURL(url, a.allowPrivate); err != nil {
		return jose.JSONWebKeySet{}, refused("cannot be checked: the client's key set URL is outside the egress rules")
	}
	raw, err := a.keys.Fetch(ctx, url)
	if err != nil {
		if ok { // the keys known a moment ago still verify
			return cached.set, nil
		}
		return jose.JSONWebKeySet{}, refused("cannot be checked: the client's key set could not be fetched")
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		return jose.JSONWebKeySet{}, refused("cannot be checked: the client's key set URL answers no JWK Set")
	}
	a.mu.Lock()
	if a.fetched == nil {
		a.fetched = map[string]fetchedKeys{}
	}
	a.fetched[url] = fetchedKeys{set: set, at: now}
	a.mu.Unlock()
	return set, nil
}
