package ports

import (
	"context"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
)

// ClientCredentials are what a client presents at the token, revocation and
// introspection endpoints.
type ClientCredentials struct {
	ID     domain.ClientID
	Secret string
	// Source is the client's network address, which wrong secrets are counted against.
	Source string
}

// TokenRequest is a client-credentials grant (RFC 6749 §4.4.2). Scope is the
// requested scope list; nil when the request named none.
type TokenRequest struct {
	Client ClientCredentials
	Scope  *string
	// Assertion is a signed client assertion (RFC 7523) that authenticates
	// the client instead of a secret; nil for a client with a secret.
	Assertion *ClientAssertion
}

// ClientAssertion is a JWT the client signed with its key, and the token
// endpoint's URL as this request reached it: the audience it must name.
type ClientAssertion struct {
	JWT      string
	Audience string
}

// AssertionIDs keeps the id (jti) of every accepted client assertion until
// it expires, where no failover forgets it (the database).
type AssertionIDs interface {
	// Use records jti for client until then; domain.ErrConflict when the
	// client used it before.
	Use(ctx context.Context, company domain.CompanyID, client domain.ClientID, jti string, until, now time.Time) error
}

// KeySets fetches a client's JWK Set from the URL it registered, under the
// rules of every request praxis sends out of its network.
type KeySets interface {
	Fetch(ctx context.Context, url string) ([]byte, error)
}

// IssuedToken is the token response: the token is shown once, never stored.
type IssuedToken struct {
	AccessToken string
	ExpiresIn   time.Duration
	Scopes      domain.Scopes
}

// Introspection is the RFC 7662 answer: Grant is meaningful only when Active.
type Introspection struct {
	Active bool
	Grant  domain.Grant
}

// Authorizer is the driving port of the OAuth endpoints and the bearer guard.
// Refusals are *domain.OAuthError, *domain.TooManyAttempts, or domain.ErrNotFound
// from Authenticate.
type Authorizer interface {
	IssueToken(ctx context.Context, req TokenRequest) (IssuedToken, error)
	// Authenticate returns the grant of a live bearer token and the client's
	// rate budget after counting this request, or domain.ErrNotFound.
	Authenticate(ctx context.Context, token string) (domain.Grant, ratelimit.State, error)
	// Revoke ends a token of the requesting client; another client's token or
	// an unknown one is left alone without error (RFC 7009 §2.2).
	Revoke(ctx context.Context, client ClientCredentials, token string) error
	// Introspect describes a token of the requesting client; any other token is inactive.
	Introspect(ctx context.Context, client ClientCredentials, token string) (Introspection, error)
}

// CompanyProfiles is the driving port of GET resource/company.
type CompanyProfiles interface {
	Profile(ctx context.Context, company domain.CompanyID) (domain.Company, error)
}
