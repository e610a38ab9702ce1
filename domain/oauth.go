package domain

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// ClientID names an OAuth client. It is public (it travels in Basic auth and
// token requests) and never contains a colon.
type ClientID string

// maxClientIDLength bounds what a token request may name as a client id.
const maxClientIDLength = 64

// NewClientID returns "pc_" and 128 random bits.
func NewClientID() (ClientID, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return ClientID("pc_" + base64.RawURLEncoding.EncodeToString(b)), nil
}

// Plausible reports whether id could have been issued: short and printable.
// Anything else is refused before a store is asked.
func (id ClientID) Plausible() bool {
	if id == "" || len(id) > maxClientIDLength {
		return false
	}
	return !strings.ContainsFunc(string(id), func(r rune) bool { return r <= ' ' || r > '~' || r == ':' })
}

// Client is an integrator's credential for one company.
type Client struct {
	ID        ClientID
	CompanyID CompanyID
	// Plan is the company's plan, read with the client: tokens carry it.
	Plan   Plan
	Name   string
	Scopes Scopes
	// SecretHash is the SHA-256 of the client secret; the secret is never kept.
	SecretHash []byte
	// PreviousSecretHash is the secret a rotation replaced, accepted beside
	// the new one until PreviousSecretUntil.
	PreviousSecretHash  []byte
	PreviousSecretUntil *time.Time
	// ExternalRef names the resource the client was declared by (a
	// Kubernetes object's UID); empty for one made on the command line.
	ExternalRef string
	// DeviceID binds the client to a device (docs/contract.md §14): it is
	// that device's credential for the bridge, and acts for it alone.
	DeviceID string
	// KeySetURL and KeySet are the client's public keys, by URL or inline
	// (a JWK Set): a client that has either signs in with a JWT it signs
	// (RFC 7523, SMART Backend Services), never with its secret.
	KeySetURL string
	KeySet    []byte
	CreatedAt time.Time
	RevokedAt *time.Time
	// CompanyDisabled is read with the client: a disabled company's clients get no tokens.
	CompanyDisabled bool
}

// NewClient validates a new client of company and gives it an id and a secret,
// which is returned once to be shown and otherwise kept only as its hash.
// No scopes means every scope of the catalogue.
func NewClient(company CompanyID, name string, scopes Scopes, now time.Time) (Client, Secret, error) {
	c := Client{CompanyID: company, CreatedAt: now.UTC()}
	if err := c.Rename(name, scopes); err != nil {
		return Client{}, "", err
	}
	id, err := NewClientID()
	if err != nil {
		return Client{}, "", err
	}
	secret, err := NewSecret()
	if err != nil {
		return Client{}, "", err
	}
	c.ID, c.SecretHash = id, secret.Hash()
	return c, secret, nil
}

// Rename validates and takes over a new name and scopes; no scopes means
// every scope of the catalogue. Tokens already issued keep their scopes.
func (c *Client) Rename(name string, scopes Scopes) error {
	name = strings.TrimSpace(name)
	if len(name) > 200 {
		return invalid("name", "must be at most 200 characters")
	}
	if len(scopes) == 0 {
		scopes = AllScopes()
	}
	c.Name, c.Scopes = name, scopes
	return nil
}

// Accepts reports whether secret is the client's at now: its current one,
// or the one a rotation replaced while its overlap lasts. Both are
// compared, in constant time, whatever the first answers.
func (c Client) Accepts(secret Secret, now time.Time) bool {
	if c.SignsAssertions() {
		return false
	}
	current := secret.Matches(c.SecretHash)
	previous := secret.Matches(c.PreviousSecretHash)
	return current || (previous && c.PreviousSecretUntil != nil && now.Before(*c.PreviousSecretUntil))
}

// Rotate takes over a new secret's hash; the one it replaces goes on
// working for overlap (none: it stops at once).
func (c *Client) Rotate(secret Secret, overlap time.Duration, now time.Time) {
	c.PreviousSecretHash, c.PreviousSecretUntil = nil, nil
	if overlap > 0 {
		until := now.Add(overlap).UTC()
		c.PreviousSecretHash, c.PreviousSecretUntil = c.SecretHash, &until
	}
	c.SecretHash = secret.Hash()
}

// DefaultSecretOverlap is how long a rotated client secret keeps working
// unless the rotation says otherwise.
const DefaultSecretOverlap = 24 * time.Hour

// MaxSecretOverlap is the longest a rotated client secret may keep working.
const MaxSecretOverlap = 7 * 24 * time.Hour

// SignsAssertions reports whether the client registered public keys: it
// then signs in with signed assertions only, never with a secret.
func (c Client) SignsAssertions() bool { return c.KeySetURL != "" || len(c.KeySet) > 0 }

// Active reports whether the client may still obtain and use tokens.
func (c Client) Active() bool { return c.RevokedAt == nil && !c.CompanyDisabled }

// Grant is what an access token stands for: a client of a company, its scopes
// and its lifetime. The token store keeps it under the token's hash.
type Grant struct {
	ClientID  ClientID
	CompanyID CompanyID
	// Plan is the company's plan when the token was issued; it sets the rate limit.
	Plan      Plan
	Scopes    Scopes
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// Require answers nil when the grant holds scope, else ErrForbidden naming it.
func (g Grant) Require(scope Scope) error {
	if g.Scopes.Contains(scope) {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrForbidden, scope)
}

// OAuthError is an error response of the token, revocation and introspection
// endpoints (RFC 6749 §5.2): a registered code and a description for people.
type OAuthError struct {
	Code        string
	Description string
}

func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }

// RFC 6749 §5.2 error codes.
const (
	OAuthInvalidRequest       = "invalid_request"
	OAuthInvalidClient        = "invalid_client"
	OAuthUnsupportedGrantType = "unsupported_grant_type"
	OAuthInvalidScope         = "invalid_scope"
)

// OAuthErrorf builds an *OAuthError.
func OAuthErrorf(code, format string, args ...any) *OAuthError {
	return &OAuthError{Code: code, Description: fmt.Sprintf(format, args...)}
}

// TooManyAttempts refuses a request while its subject (a client id, a company's
// upload secret) is locked out after repeated wrong secrets.
type TooManyAttempts struct {
	RetryAfter time.Duration
}

func (e *TooManyAttempts) Error() string {
	return fmt.Sprintf("too many failed attempts; retry after %s", e.RetryAfter)
}

// RetryAfterSeconds rounds up, so that a client that waits that long is let in.
func (e *TooManyAttempts) RetryAfterSeconds() int {
	s := int((e.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}

// LockoutPolicy slows down guessing: MaxFailures wrong secrets for one subject
// within Window lock it for Lockout, during which even a right secret is refused.
type LockoutPolicy struct {
	MaxFailures int
	Window      time.Duration
	Lockout     time.Duration
}
