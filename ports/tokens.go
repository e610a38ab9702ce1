package ports

import (
	"context"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
)

// TokenStore keeps live access tokens, each under the SHA-256 of the token
// (never the token itself), until it expires. Implementations: Redis, shared
// by every replica, and in-process for the embedded mode.
type TokenStore interface {
	// Save keeps grant under tokenHash until grant.ExpiresAt. It returns
	// domain.ErrNotFound when the grant's client has been revoked meanwhile,
	// so that no token outlives its client's revocation.
	Save(ctx context.Context, tokenHash []byte, grant domain.Grant) error
	// SaveUnlocked is Save and AttemptCounter.Lockout of subjects in one
	// round trip: while one of subjects is locked it saves nothing and
	// answers how long the longest stays locked (zero: saved). Token
	// issuance pays one round trip, not two.
	SaveUnlocked(ctx context.Context, tokenHash []byte, grant domain.Grant, subjects ...string) (time.Duration, error)
	// Lookup returns the grant of a live token: domain.ErrNotFound for an
	// unknown, expired or revoked one. It costs at most one round trip.
	Lookup(ctx context.Context, tokenHash []byte) (domain.Grant, error)
	// Authorize is the bearer check of a resource request in one round trip:
	// the token's grant, and one request counted against its client's limit
	// (by the grant's plan) in the current window, shared by every replica.
	// domain.ErrNotFound for an unknown, expired or revoked token.
	Authorize(ctx context.Context, tokenHash []byte, limits ratelimit.Limits) (domain.Grant, ratelimit.State, error)
	// Usage answers the client's calls per day (counted by Authorize, kept
	// ratelimit.UsageDays days) and its last call, as of now.
	Usage(ctx context.Context, client domain.ClientID, now time.Time) (ratelimit.Usage, error)
	// ForgetUsage deletes the client's call counts (its days and its last
	// call), when its company is erased. Its rate-limit windows end with
	// their window.
	ForgetUsage(ctx context.Context, client domain.ClientID) error
	// Revoke ends one token; an unknown one is no error.
	Revoke(ctx context.Context, tokenHash []byte) error
	// RevokeClient ends every live token of the client at once and refuses
	// new ones, without scanning other clients' tokens.
	RevokeClient(ctx context.Context, client domain.ClientID) error
	// Shared reports whether every process sees the same tokens (Redis). An
	// in-process store is not shared: an admin command run beside the server
	// cannot reach it, so the server also checks the client's state itself.
	Shared() bool
}

// AttemptCounter counts failed secrets per subject (a client id, a company's
// upload secret) in the token store, so that every replica sees the same count.
type AttemptCounter interface {
	// Lockout returns how long the longest-locked of subjects stays locked
	// (zero when none is), in one round trip.
	Lockout(ctx context.Context, subjects ...string) (time.Duration, error)
	// Fail counts one failure of subject under policy and returns the lockout
	// now in force: non-zero once policy.MaxFailures failures fell in one window.
	Fail(ctx context.Context, subject string, policy domain.LockoutPolicy) (time.Duration, error)
}

// ClientRepository keeps OAuth clients.
type ClientRepository interface {
	Create(ctx context.Context, c domain.Client) error
	// Get finds a client by its id alone: it is how a token request names its
	// company, so this one lookup cannot carry a company. domain.ErrNotFound
	// when there is no such client.
	Get(ctx context.Context, id domain.ClientID) (domain.Client, error)
	// Revoke marks the client revoked; domain.ErrNotFound for an unknown id.
	Revoke(ctx context.Context, id domain.ClientID, at time.Time) error
	// FindByExternalRef finds the company's client declared by ref;
	// domain.ErrNotFound when the company has none.
	FindByExternalRef(ctx context.Context, company domain.CompanyID, ref string) (domain.Client, error)
	// Update stores c's name, scopes and secret hash; c must be of company.
	Update(ctx context.Context, company domain.CompanyID, c domain.Client) error
	// List answers the company's clients, revoked ones too, oldest first.
	List(ctx context.Context, company domain.CompanyID) ([]domain.Client, error)
	// ActiveIDs lists the company's clients that are not revoked.
	ActiveIDs(ctx context.Context, company domain.CompanyID) ([]domain.ClientID, error)
}

// Tombstones are the durable memory of what has ended: a revoked token, a
// revoked client, a settings session signed out. Redis replicates
// asynchronously, so a failover can lose a deletion and bring a revoked
// token back; every replica keeps the tombstones of the database in memory
// and refuses what they name, whatever Redis answers (docs/contract.md §5,
// "Failover"). Keys are SHA-256 digests of what they name; nothing in them
// names a company, a patient or a secret.
type Tombstones interface {
	// Bury keeps key until until.
	Bury(ctx context.Context, key [32]byte, until time.Time) error
	// Since answers the tombstones buried at or after t that are still in
	// force at now.
	Since(ctx context.Context, t, now time.Time) ([]Tombstone, error)
	// Prune removes the tombstones no longer in force at now.
	Prune(ctx context.Context, now time.Time) (int, error)
}

// Tombstone is one key and how long it is kept.
type Tombstone struct {
	Key   [32]byte
	Until time.Time
}
