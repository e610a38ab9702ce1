package webhook

import (
	"encoding/json"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// View is an endpoint as the API answers it; Secret only when it is new.
type View struct {
	ID                      string     `json:"id"`
	URL                     string     `json:"url"`
	Description             string     `json:"description"`
	EventTypes              []string   `json:"event_types"`
	Enabled                 bool       `json:"enabled"`
	Status                  string     `json:"status"`
	DisabledReason          *string    `json:"disabled_reason"`
	Cursor                  string     `json:"cursor"`
	Failures                int        `json:"failures"`
	FailingSince            *time.Time `json:"failing_since"`
	NextAttemptAt           *time.Time `json:"next_attempt_at"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
	Secret                  string     `json:"secret,omitempty"`
	Version                 int64      `json:"version"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
}

// JSON is the view as the resource API answers a change of its endpoint,
// and as an Idempotency-Key keeps that answer: one encoding for both, so
// that a replay is the first answer byte for byte.
func (v View) JSON() ([]byte, error) {
	return json.Marshal(v) //nolint:gosec // G117: a view carries a secret only in the answer that shows it once; its JSON key is omitted when empty
}

// ViewOf is e's answer at now, with secret when one was just made.
func ViewOf(e Endpoint, secret Secret, now time.Time) View {
	v := View{
		ID: e.ID.String(), URL: e.URL, Description: e.Description, EventTypes: e.EventTypes, Enabled: e.Enabled,
		Status: string(e.Status()), Cursor: domain.Cursor{Change: e.Position.Change, ID: e.Position.ID}.Encode(),
		Failures: e.Failures, FailingSince: e.FailingSince, Secret: string(secret), Version: e.Version,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
	if e.DisabledReason != "" {
		v.DisabledReason = &e.DisabledReason
	}
	if e.Failures > 0 && e.Enabled {
		v.NextAttemptAt = &e.NextAttempt
	}
	if len(e.Previous) > 0 && e.PreviousUntil != nil && now.Before(*e.PreviousUntil) {
		v.PreviousSecretExpiresAt = e.PreviousUntil
	}
	return v
}
