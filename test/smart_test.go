// Holds docs/contract.md §3 OAuth: signed client assertions (SMART Backend Services).

package test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// signingKey is a client's private key with its kid and algorithm.
type signingKey struct {
	jwk jose.JSONWebKey
	alg jose.SignatureAlgorithm
}

func newRSAKey(t *testing.T, kid string) signingKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{jwk: jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: "RS384", Use: "sig"}, alg: jose.RS384}
}

func newECKey(t *testing.T, kid string) signingKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{jwk: jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: "ES384", Use: "sig"}, alg: jose.ES384}
}

// keySet is the public JWK Set of keys.
func keySet(t *testing.T, keys ...signingKey) []byte {
	t.Helper()
	var set jose.JSONWebKeySet
	for _, k := range keys {
		set.Keys = append(set.Keys, k.jwk.Public())
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assertion is a client assertion signed with key; change edits its claims first.
func assertion(t *testing.T, key signingKey, iss, aud string, change func(*jwt.Claims)) string {
	t.Helper()
	now := time.Now()
	claims := jwt.Claims{Issuer: iss, Subject: iss, Audience: jwt.Audience{aud}, Expiry: jwt.NewNumericDate(now.Add(4 * time.Minute)),
		IssuedAt: jwt.NewNumericDate(now), ID: uuid.NewString()}
	if change != nil {
		change(&claims)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: key.alg, Key: key.jwk}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// signIn asks for a token with a client assertion.
func (s *server) signIn(t *testing.T, jwtValue string, extra ...string) reply {
	t.Helper()
	return s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form(append([]string{"grant_type", "client_credentials",
		"client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", "client_assertion", jwtValue}, extra...)...))
}

// TestSignedClientAssertions: a client registered with its public keys —
// inline, or at a URL fetched under the webhooks' egress rules and fetched
// again for an unknown kid — signs in with RS384 and ES384 assertions, gets
// tokens of at most 300 s, and SMART's system scopes as the praxis scopes
// they mean; every bad assertion is 401 invalid_client, and an assertion's
// jti is never accepted twice, even after Redis forgot everything.
func TestSignedClientAssertions(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[len(backends)-1], "PRAXIS_WEBHOOK_ALLOW_PRIVATE=true")
	p := newPractice(t, s)
	aud := s.url + "/api/oauth/v2/token"

	// An inline key set.
	rsaKey := newRSAKey(t, "rsa-1")
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, keySet(t, rsaKey), 0o600); err != nil {
		t.Fatal(err)
	}
	var inline oauthClient
	s.praxis(t, &inline, "admin", "client", "create", "--company", p.company.ID, "--name", "Lab", "--jwks-file", file, "--json")
	if inline.Secret != "" {
		t.Errorf("a client with keys was given a secret")
	}

	// A key set at a URL, rotated later.
	ecKey, rotated := newECKey(t, "ec-1"), newECKey(t, "ec-2")
	var served atomic.Value
	served.Store(keySet(t, ecKey))
	var fetches atomic.Int32
	keys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(served.Load().([]byte))
	}))
	t.Cleanup(keys.Close)
	var byURL oauthClient
	s.praxis(t, &byURL, "admin", "client", "create", "--company", p.company.ID, "--name", "App", "--jwks-url", keys.URL, "--json")

	for _, c := range []struct {
		name   string
		key    signingKey
		client string
	}{{"RS384 inline", rsaKey, inline.ID}, {"ES384 by URL", ecKey, byURL.ID}} {
		r := s.signIn(t, assertion(t, c.key, c.client, aud, nil), "scope", "system/Patient.rs system/Appointment.read")
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
		tok := r.decode(t)
		if tok["expires_in"].(float64) > 300 || tok["scope"] != "customers:read appointments:read" {
			t.Errorf("%s: %s", c.name, r.body)
		}
		bearer := "Authorization: Bearer " + tok["access_token"].(string)
		if got := s.requestUndocumented(t, http.MethodGet, fhirBase+"Patient", "", "", bearer); got.status != http.StatusOK {
			t.Errorf("%s: FHIR with the token: %d %s", c.name, got.status, got.body)
		}
		if got := s.requestUndocumented(t, http.MethodGet, fhirBase+"Condition", "", "", bearer); got.status != http.StatusForbidden {
			t.Errorf("%s: a type outside the scopes: %d", c.name, got.status)
		}
	}

	// The URL's keys rotate: an unknown kid fetches the set again.
	served.Store(keySet(t, rotated))
	before := fetches.Load()
	time.Sleep(11 * time.Second) // past the refetch floor (10 s) of the first fetch
	if r := s.signIn(t, assertion(t, rotated, byURL.ID, aud, nil)); r.status != http.StatusOK || fetches.Load() == before {
		t.Errorf("after a rotation: %d %s (fetches %d → %d)", r.status, r.body, before, fetches.Load())
	}

	// Every bad assertion: 401 invalid_client, or 400 for a malformed request.
	otherKey := newRSAKey(t, "rsa-1")
	used := assertion(t, rsaKey, inline.ID, aud, nil)
	if r := s.signIn(t, used); r.status != http.StatusOK {
		t.Fatalf("first use: %d %s", r.status, r.body)
	}
	noneHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"rsa-1"}`))
	claims, _ := json.Marshal(map[string]any{"iss": inline.ID, "sub": inline.ID, "aud": aud, "exp": time.Now().Add(time.Minute).Unix(), "jti": uuid.NewString()})
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("a shared secret of thirty-two bytes!")}, (&jose.SignerOptions{}).WithHeader("kid", "rsa-1"))
	hsJWT, _ := jwt.Signed(hs).Claims(jwt.Claims{Issuer: inline.ID, Subject: inline.ID, Audience: jwt.Audience{aud}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Minute)), ID: uuid.NewString()}).Serialize()
	for _, c := range []struct {
		name   string
		jwt    string
		extra  []string
		status int
	}{
		{"a reused jti", used, nil, http.StatusUnauthorized},
		{"a wrong aud", assertion(t, rsaKey, inline.ID, s.url+"/api/oauth/v2/introspect", nil), nil, http.StatusUnauthorized},
		{"an old exp", assertion(t, rsaKey, inline.ID, aud, func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(time.Now().Add(-2 * time.Minute)) }), nil, http.StatusUnauthorized},
		{"an exp too far ahead", assertion(t, rsaKey, inline.ID, aud, func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(time.Now().Add(10 * time.Minute)) }), nil, http.StatusUnauthorized},
		{"no exp", assertion(t, rsaKey, inline.ID, aud, func(c *jwt.Claims) { c.Expiry = nil }), nil, http.StatusUnauthorized},
		{"no jti", assertion(t, rsaKey, inline.ID, aud, func(c *jwt.Claims) { c.ID = "" }), nil, http.StatusUnauthorized},
		{"sub not iss", assertion(t, rsaKey, inline.ID, aud, func(c *jwt.Claims) { c.Subject = byURL.ID }), nil, http.StatusUnauthorized},
		{"an unknown kid", assertion(t, newRSAKey(t, "rsa-9"), inline.ID, aud, nil), nil, http.StatusUnauthorized},
		{"a key of another client", assertion(t, ecKey, inline.ID, aud, nil), nil, http.StatusUnauthorized},
		{"another key under the kid", assertion(t, otherKey, inline.ID, aud, nil), nil, http.StatusUnauthorized},
		{"alg none", noneHeader + "." + base64.RawURLEncoding.EncodeToString(claims) + ".", nil, http.StatusUnauthorized},
		{"HS256", hsJWT, nil, http.StatusUnauthorized},
		{"an unknown client", assertion(t, rsaKey, "pc_unknown0000000000000", aud, nil), nil, http.StatusUnauthorized},
		{"a client of secrets", assertion(t, rsaKey, s.newClient(t, p.company, "").ID, aud, nil), nil, http.StatusUnauthorized},
		{"client_id of another client", assertion(t, rsaKey, inline.ID, aud, nil), []string{"client_id", byURL.ID}, http.StatusUnauthorized},
		{"not a JWT", "abc.def", nil, http.StatusUnauthorized},
		{"a secret beside", assertion(t, rsaKey, inline.ID, aud, nil), []string{"client_secret", "x"}, http.StatusBadRequest},
	} {
		r := s.signIn(t, c.jwt, c.extra...)
		want := map[int]string{http.StatusUnauthorized: "invalid_client", http.StatusBadRequest: "invalid_request"}[c.status]
		if r.status != c.status || r.decode(t)["error"] != want {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, want)
		}
	}
	wrongType := s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials",
		"client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:saml2-bearer", "client_assertion", used))
	if wrongType.status != http.StatusBadRequest {
		t.Errorf("another assertion type: %d %s", wrongType.status, wrongType.body)
	}
	if r := s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials", "client_id", inline.ID, "client_secret", "guess")); r.status != http.StatusUnauthorized {
		t.Errorf("a client with keys and a secret guessed: %d %s", r.status, r.body)
	}

	// Redis forgets everything (a failover to a replica that had not seen
	// the last writes could): the used assertions are still refused. (The
	// refusals above locked the inline client out from this address for a
	// while, as wrong secrets would: the other client signs in.)
	if r := s.signIn(t, assertion(t, rsaKey, inline.ID, aud, nil)); r.status != http.StatusTooManyRequests {
		t.Errorf("after %d refusals from one address: %d %s", 16, r.status, r.body)
	}
	fresh := assertion(t, rotated, byURL.ID, aud, nil)
	if r := s.signIn(t, fresh); r.status != http.StatusOK {
		t.Fatalf("fresh: %d %s", r.status, r.body)
	}
	forgetRedis(t, s)
	for _, jwtValue := range []string{fresh, used} {
		if r := s.signIn(t, jwtValue); r.status != http.StatusUnauthorized {
			t.Errorf("a used assertion after Redis forgot: %d %s", r.status, r.body)
		}
	}
}

// forgetRedis deletes every key of the server's Redis prefix.
func forgetRedis(t *testing.T, s *server) {
	t.Helper()
	var url, prefix string
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "PRAXIS_REDIS_URL="); ok {
			url = v
		}
		if v, ok := strings.CutPrefix(kv, "PRAXIS_REDIS_PREFIX="); ok {
			prefix = v
		}
	}
	if url == "" || prefix == "" {
		t.Fatal("the server has no Redis")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer func() { _ = c.Close() }()
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	n := 0
	for iter.Next(ctx) {
		if err := c.Del(ctx, iter.Val()).Err(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := iter.Err(); err != nil || n == 0 {
		t.Fatalf("forgot %d keys: %v", n, err)
	}
}
