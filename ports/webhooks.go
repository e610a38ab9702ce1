package ports

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
)

// ErrLeaseLost: another dispatcher drives the endpoint now; nothing was stored.
var ErrLeaseLost = errors.New("webhook endpoint: lease lost")

// ErrEndpointChanged: its owner changed the endpoint (a replay, a new
// address) since the dispatcher read it; the attempts were logged, the
// position was not moved, and the caller reads the endpoint again.
var ErrEndpointChanged = errors.New("webhook endpoint: changed by its owner")

// WebhookEndpoints keeps the companies' webhook endpoints, where each one's
// delivery stands, and the delivery log (docs/contract.md §12).
type WebhookEndpoints interface {
	// Create stores a new endpoint; more than webhook.MaxEndpoints in one
	// company is domain.ErrConflict.
	Create(ctx context.Context, e webhook.Endpoint) error
	Get(ctx context.Context, company domain.CompanyID, id uuid.UUID) (webhook.Endpoint, error)
	List(ctx context.Context, company domain.CompanyID) ([]webhook.Endpoint, error)
	// Change reads the endpoint for update, lets fn change it, and stores
	// it with its version moved on: a dispatcher driving it notices.
	Change(ctx context.Context, company domain.CompanyID, id uuid.UUID, fn func(*webhook.Endpoint) error) (webhook.Endpoint, error)
	Delete(ctx context.Context, company domain.CompanyID, id uuid.UUID) error

	// Claim leases up to limit enabled endpoints of any company that are
	// due at now and that no other dispatcher holds, to owner until now+lease.
	Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]webhook.Endpoint, error)
	// Renew extends owner's lease and answers the endpoint as stored:
	// ErrLeaseLost when owner no longer holds it, domain.ErrNotFound when
	// it was deleted.
	Renew(ctx context.Context, e webhook.Endpoint, owner string, until time.Time) (webhook.Endpoint, error)
	// Advance logs the attempts made, stores e's delivery state (position,
	// failures, next attempt, enabled) and extends the lease to until, if
	// owner holds the lease (else ErrLeaseLost, nothing stored). If e's
	// version is no longer the stored one, only the attempts are logged:
	// ErrEndpointChanged.
	Advance(ctx context.Context, e webhook.Endpoint, owner string, until time.Time, attempts []webhook.Attempt) error
	// Release gives the lease up.
	Release(ctx context.Context, e webhook.Endpoint, owner string) error

	// Deliveries answers the endpoint's delivery log, newest first, before
	// the attempt id given (uuid.Nil for the newest).
	Deliveries(ctx context.Context, company domain.CompanyID, endpoint uuid.UUID, before uuid.UUID, limit int) ([]webhook.Attempt, bool, error)
	// SweepDeliveries drops attempts older than before, of every company.
	SweepDeliveries(ctx context.Context, before time.Time) (int64, error)
	// Backlog is where delivery stands over every company at now, for the
	// metrics: no company, endpoint or address is in it.
	Backlog(ctx context.Context, now time.Time) (WebhookBacklog, error)
}

// WebhookBacklog counts the endpoints by state: enabled and delivering,
// enabled and failing (retrying with backoff), disabled. OldestDue is the
// next attempt of the enabled endpoint that has been due longest, zero when
// none is due: a dispatcher keeping up holds it within a poll of now.
type WebhookBacklog struct {
	Delivering, Failing, Disabled int
	OldestDue                     time.Time
}

// ChangeFeed is the company's change feed across the sections a webhook
// can tell of (customers, the record kinds, files), in position order,
// holding back changes an open transaction may still undercut.
type ChangeFeed interface {
	// After answers up to limit changes after p.
	After(ctx context.Context, company domain.CompanyID, p webhook.Position, limit int) ([]webhook.Change, error)
	// Head is the position of the company's last settled change.
	Head(ctx context.Context, company domain.CompanyID) (webhook.Position, error)
	// Since is the position just before the first change written at or after t.
	Since(ctx context.Context, company domain.CompanyID, t time.Time) (webhook.Position, error)
}

// Delivery is one request to a receiver.
type Delivery struct {
	URL     string
	Headers webhook.Headers
	Body    []byte
}

// DeliveryResult is what the receiver answered: its status (0 for no
// answer, then Err says why) and the Retry-After it asked for.
type DeliveryResult struct {
	Status     int
	RetryAfter time.Duration
	Err        error
}

// Deliverer sends events out of this network, safely: only to addresses
// the operator allows, with a time limit, never following a redirect.
type Deliverer interface {
	Deliver(ctx context.Context, d Delivery) DeliveryResult
}

// Webhooks is what the API asks of the endpoints (the driving port).
type Webhooks interface {
	Create(ctx context.Context, grant domain.Grant, in WebhookInput) (webhook.Endpoint, webhook.Secret, error)
	Get(ctx context.Context, grant domain.Grant, id uuid.UUID) (webhook.Endpoint, error)
	List(ctx context.Context, grant domain.Grant) ([]webhook.Endpoint, error)
	// Update and Delete refuse with a *domain.StaleVersion when the
	// endpoint is no longer at the version w names; w's Idempotency-Key
	// replays the first answer of a retry.
	Update(ctx context.Context, grant domain.Grant, id uuid.UUID, in WebhookInput, w Write) (Written[webhook.View], error)
	Delete(ctx context.Context, grant domain.Grant, id uuid.UUID, w Write) (Written[webhook.View], error)
	RotateSecret(ctx context.Context, grant domain.Grant, id uuid.UUID, overlap time.Duration) (webhook.Endpoint, webhook.Secret, error)
	// Replay moves the endpoint back, if it is still at the version ifMatch names.
	Replay(ctx context.Context, grant domain.Grant, id uuid.UUID, from ReplayFrom, ifMatch domain.Precondition) (webhook.Endpoint, error)
	Deliveries(ctx context.Context, grant domain.Grant, id uuid.UUID, before uuid.UUID, limit int) ([]webhook.Attempt, bool, error)
	// Ping sends the endpoint one signed test event now and answers the attempt.
	Ping(ctx context.Context, grant domain.Grant, id uuid.UUID) (webhook.Attempt, error)
}

// WebhookInput is a create's or a PATCH's fields; nil leaves one as it is.
type WebhookInput struct {
	URL         *string
	Description *string
	EventTypes  []string
	Enabled     *bool
}

// ReplayFrom is where a replay starts: a sync cursor (from its change on)
// or a time (from the first change written at or after it).
type ReplayFrom struct {
	Cursor *domain.Cursor
	Since  *time.Time
}
