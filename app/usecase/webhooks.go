package usecase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// Webhooks manages a company's webhook endpoints (docs/contract.md §12):
// registration with a secret shown once, changes, rotation, replay and
// the delivery log. The Dispatcher delivers.
type Webhooks struct {
	writes       writeOnce
	store        ports.WebhookEndpoints
	feed         ports.ChangeFeed
	keys         *webhook.Keyring
	out          ports.Deliverer
	allowPrivate bool
	now          func() time.Time
}

var _ ports.Webhooks = (*Webhooks)(nil)

// NewWebhooks manages the endpoints of store; keys seals their secrets;
// allowPrivate lets endpoints name plain http and this network (tests).
// Changes and removals run in tx with their Idempotency-Keys (ids) and
// their audit events.
func NewWebhooks(store ports.WebhookEndpoints, feed ports.ChangeFeed, keys *webhook.Keyring, out ports.Deliverer, allowPrivate bool,
	ids ports.IdempotencyStore, tx ports.Transactor, audits *Auditor) *Webhooks {
	return &Webhooks{writes: writeOnce{keys: ids, tx: tx, audits: audits}, store: store, feed: feed, keys: keys, out: out,
		allowPrivate: allowPrivate, now: time.Now}
}

// Create registers an endpoint. Its delivery starts at the feed's end: it
// is told of the changes after its registration. The secret is answered
// here once and kept only sealed.
func (w *Webhooks) Create(ctx context.Context, grant domain.Grant, in ports.WebhookInput) (webhook.Endpoint, webhook.Secret, error) {
	if err := grant.Require(domain.ScopeWebhooksWrite); err != nil {
		return webhook.Endpoint{}, "", err
	}
	if w.keys == nil {
		return webhook.Endpoint{}, "", domain.ErrWebhooksDisabled
	}
	now := w.now().UTC().Truncate(time.Microsecond)
	e := webhook.Endpoint{ID: uuid.Must(uuid.NewV7()), Company: grant.CompanyID, Enabled: true, NextAttempt: now,
		Version: 1, CreatedAt: now, UpdatedAt: now}
	if in.URL == nil {
		in.URL = new(string)
	}
	if in.EventTypes == nil {
		in.EventTypes = []string{}
	}
	if err := w.apply(grant, &e, in); err != nil {
		return webhook.Endpoint{}, "", err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return webhook.Endpoint{}, "", err
	}
	if e.Secret, err = w.keys.Seal(e.ID, secret); err != nil {
		return webhook.Endpoint{}, "", err
	}
	if e.Position, err = w.feed.Head(ctx, grant.CompanyID); err != nil {
		return webhook.Endpoint{}, "", err
	}
	if err := w.store.Create(ctx, e); err != nil {
		if errors.Is(err, domain.ErrConflict) {
			return webhook.Endpoint{}, "", fmt.Errorf("%w: a company has at most %d webhook endpoints", domain.ErrConflict, webhook.MaxEndpoints)
		}
		return webhook.Endpoint{}, "", err
	}
	return e, secret, nil
}

// apply checks and sets the fields a create or a PATCH gives.
func (w *Webhooks) apply(grant domain.Grant, e *webhook.Endpoint, in ports.WebhookInput) error {
	var errs domain.FieldErrors
	if in.URL != nil {
		if u, err := webhook.CheckURL(*in.URL, w.allowPrivate); err != nil {
			errs = append(errs, fieldErrors(err)...)
		} else if len(u.String()) > 2000 {
			errs.Add("url", "is longer than 2000 characters")
		} else {
			e.URL = u.String()
		}
	}
	if in.Description != nil {
		if len([]rune(*in.Description)) > 200 || strings.ContainsAny(*in.Description, "\x00\n\r") {
			errs.Add("description", "is one line of at most 200 characters")
		}
		e.Description = *in.Description
	}
	if in.EventTypes != nil {
		types, err := webhook.ParseEventTypes(in.EventTypes)
		if err != nil {
			errs = append(errs, fieldErrors(err)...)
		}
		for i, t := range types {
			if scope, missing := grant.Scopes.Missing(webhook.ScopesFor(t)); missing {
				errs.Add(fmt.Sprintf("event_types[%d]", i), "needs the scope "+string(scope)+", which this client does not hold")
			}
		}
		e.EventTypes = types
	}
	if in.Enabled != nil && *in.Enabled != e.Enabled {
		e.Enabled = *in.Enabled
		e.DisabledReason = ""
		if e.Enabled {
			// Re-enabled: the next event is tried at once, afresh; the
			// position stays where delivery stopped.
			e.Failures, e.FailingSince, e.NextAttempt = 0, nil, w.now().UTC()
		}
	}
	return errs.Err()
}

// fieldErrors unpacks a validation error into its fields.
func fieldErrors(err error) domain.FieldErrors {
	if fe, ok := domain.AsFieldErrors(err); ok {
		return fe
	}
	return domain.FieldErrors{{Field: "", Message: err.Error()}}
}

func (w *Webhooks) Get(ctx context.Context, grant domain.Grant, id uuid.UUID) (webhook.Endpoint, error) {
	if err := grant.Require(domain.ScopeWebhooksRead); err != nil {
		return webhook.Endpoint{}, err
	}
	return w.store.Get(ctx, grant.CompanyID, id)
}

func (w *Webhooks) List(ctx context.Context, grant domain.Grant) ([]webhook.Endpoint, error) {
	if err := grant.Require(domain.ScopeWebhooksRead); err != nil {
		return nil, err
	}
	return w.store.List(ctx, grant.CompanyID)
}

// Update changes the fields in gives, if the endpoint is still at the
// version wr names.
func (w *Webhooks) Update(ctx context.Context, grant domain.Grant, id uuid.UUID, in ports.WebhookInput, wr ports.Write) (ports.Written[webhook.View], error) {
	if err := grant.Require(domain.ScopeWebhooksWrite); err != nil {
		return ports.Written[webhook.View]{}, err
	}
	now := w.now().UTC()
	return idempotently(ctx, &w.writes, grant, wr.Key, now, keptEndpoints, func(ctx context.Context) (ports.Written[webhook.View], error) {
		e, err := w.store.Change(ctx, grant.CompanyID, id, func(e *webhook.Endpoint) error {
			if err := wr.IfMatch.CheckVersion(e.Version); err != nil {
				return err
			}
			e.UpdatedAt = now
			return w.apply(grant, e, in)
		})
		if err != nil {
			return ports.Written[webhook.View]{}, err
		}
		return endpointAnswer(domain.OutcomeOK, e, now), nil
	})

}

// endpointAnswer is a change's answer with the endpoint as it now stands:
// never a secret, which only a create or a rotation answers, once.
func endpointAnswer(outcome domain.Outcome, e webhook.Endpoint, now time.Time) ports.Written[webhook.View] {
	return ports.Written[webhook.View]{Outcome: outcome, Location: "webhook-endpoints/" + e.ID.String(), Value: webhook.ViewOf(e, "", now)}
}

// Delete removes the endpoint and its delivery log, if it is still at the
// version wr names. The answer is 204, replayed to a retry of its key.
func (w *Webhooks) Delete(ctx context.Context, grant domain.Grant, id uuid.UUID, wr ports.Write) (ports.Written[webhook.View], error) {
	if err := grant.Require(domain.ScopeWebhooksWrite); err != nil {
		return ports.Written[webhook.View]{}, err
	}
	return idempotently(ctx, &w.writes, grant, wr.Key, w.now().UTC(), keptEndpoints, func(ctx context.Context) (ports.Written[webhook.View], error) {
		_, err := w.store.Change(ctx, grant.CompanyID, id, func(e *webhook.Endpoint) error { return wr.IfMatch.CheckVersion(e.Version) })
		if err != nil {
			return ports.Written[webhook.View]{}, err
		}
		if err := w.store.Delete(ctx, grant.CompanyID, id); err != nil {
			return ports.Written[webhook.View]{}, err
		}
		return ports.Written[webhook.View]{Outcome: domain.OutcomeNoContent}, nil
	})

}

// RotateSecret makes a new secret; the one it replaces goes on signing
// beside it for overlap, so that receivers can switch without a gap.
func (w *Webhooks) RotateSecret(ctx context.Context, grant domain.Grant, id uuid.UUID, overlap time.Duration) (webhook.Endpoint, webhook.Secret, error) {
	if err := grant.Require(domain.ScopeWebhooksWrite); err != nil {
		return webhook.Endpoint{}, "", err
	}
	if w.keys == nil {
		return webhook.Endpoint{}, "", domain.ErrWebhooksDisabled
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return webhook.Endpoint{}, "", err
	}
	e, err := w.store.Change(ctx, grant.CompanyID, id, func(e *webhook.Endpoint) error {
		sealed, err := w.keys.Seal(e.ID, secret)
		if err != nil {
			return err
		}
		now := w.now().UTC()
		until := now.Add(overlap)
		e.Previous, e.PreviousUntil, e.Secret, e.UpdatedAt = e.Secret, &until, sealed, now
		return nil
	})
	if err != nil {
		return webhook.Endpoint{}, "", err
	}
	return e, secret, nil
}

// Replay moves the endpoint's position back: every change from the cursor's
// change on, or written at or after the time, is delivered again, in order,
// each with the webhook-id it had.
func (w *Webhooks) Replay(ctx context.Context, grant domain.Grant, id uuid.UUID, from ports.ReplayFrom, ifMatch domain.Precondition) (webhook.Endpoint, error) {
	if err := grant.Require(domain.ScopeWebhooksWrite); err != nil {
		return webhook.Endpoint{}, err
	}
	var p webhook.Position
	switch {
	case from.Cursor != nil:
		p = webhook.Position{Change: max(from.Cursor.Change-1, 0), Section: "~"}
	case from.Since != nil:
		var err error
		if p, err = w.feed.Since(ctx, grant.CompanyID, *from.Since); err != nil {
			return webhook.Endpoint{}, err
		}
	}
	return w.store.Change(ctx, grant.CompanyID, id, func(e *webhook.Endpoint) error {
		if err := ifMatch.CheckVersion(e.Version); err != nil {
			return err
		}
		now := w.now().UTC()
		e.Position, e.Failures, e.FailingSince, e.NextAttempt, e.UpdatedAt = p, 0, nil, now, now
		return nil
	})
}

func (w *Webhooks) Deliveries(ctx context.Context, grant domain.Grant, id uuid.UUID, before uuid.UUID, limit int) ([]webhook.Attempt, bool, error) {
	if err := grant.Require(domain.ScopeWebhooksRead); err != nil {
		return nil, false, err
	}
	if _, err := w.store.Get(ctx, grant.CompanyID, id); err != nil {
		return nil, false, err
	}
	return w.store.Deliveries(ctx, grant.CompanyID, id, before, limit)
}

// TestEventType is the event a person sends from the settings pages to see
// that an endpoint answers; it is never part of the feed.
const TestEventType = "webhook.test"

// Ping sends the endpoint one signed test event now, outside its order,
// and answers the attempt; it is not retried and moves nothing.
func (w *Webhooks) Ping(ctx context.Context, grant domain.Grant, id uuid.UUID) (webhook.Attempt, error) {
	if err := grant.Require(domain.ScopeWebhooksWrite); err != nil {
		return webhook.Attempt{}, err
	}
	if w.keys == nil {
		return webhook.Attempt{}, domain.ErrWebhooksDisabled
	}
	e, err := w.store.Get(ctx, grant.CompanyID, id)
	if err != nil {
		return webhook.Attempt{}, err
	}
	now := w.now()
	body, err := webhook.Body(TestEventType, now, webhook.Data{Section: "webhook-endpoints", ID: e.ID.String()})
	if err != nil {
		return webhook.Attempt{}, err
	}
	var secrets []webhook.Secret
	for _, sealed := range e.Secrets(now) {
		s, err := w.keys.Open(e.ID, sealed)
		if err != nil {
			return webhook.Attempt{}, err
		}
		secrets = append(secrets, s)
	}
	msg := "msg_test_" + uuid.Must(uuid.NewV7()).String()
	h, err := webhook.Sign(msg, now, body, secrets...)
	if err != nil {
		return webhook.Attempt{}, err
	}
	start := time.Now()
	res := w.out.Deliver(ctx, ports.Delivery{URL: e.URL, Headers: h, Body: body})
	a := webhook.Attempt{ID: uuid.Must(uuid.NewV7()), Endpoint: e.ID, MessageID: msg, Type: TestEventType, At: now.UTC(),
		Status: res.Status, Duration: time.Since(start), Outcome: webhook.OutcomeOf(res.Status)}
	if res.Err != nil {
		a.Error = res.Err.Error()
	}
	return a, nil
}
