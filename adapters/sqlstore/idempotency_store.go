package sqlstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// IdempotencyStore keeps Idempotency-Keys and their first answers in the
// transaction of the request's effect: a key is saved exactly when the effect is.
type IdempotencyStore struct{ db *bun.DB }

var _ ports.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns the store of db.
func NewIdempotencyStore(db *bun.DB) *IdempotencyStore { return &IdempotencyStore{db: db} }

type idempotencyRow struct {
	bun.BaseModel `bun:"table:idempotency_keys"`

	CompanyID   uuid.UUID `bun:"company_id,pk"`
	ClientID    string    `bun:"client_id,pk"`
	Key         string    `bun:"key,pk"`
	Fingerprint []byte    `bun:"fingerprint"`
	Status      int       `bun:"status"`
	Location    string    `bun:"location"`
	Body        []byte    `bun:"body"`
	CreatedAt   time.Time `bun:"created_at"`
}

// answer is the row's saved answer. The row keeps the outcome as its
// status (domain.Outcome.Status), as every earlier build wrote it, so that
// keys saved before a rolling upgrade replay after it, and back.
func (r *idempotencyRow) answer() (*ports.SavedWrite, error) {
	outcome, ok := domain.OutcomeOf(r.Status)
	if !ok {
		return nil, fmt.Errorf("idempotency key %q: saved status %d is no outcome", r.Key, r.Status)
	}
	return &ports.SavedWrite{Outcome: outcome, Location: r.Location, Value: r.Body}, nil
}

// Claim inserts the key; on PostgreSQL a concurrent claim of the same key
// waits on the primary key until this transaction ends, then finds the
// saved answer (or, if this one rolled back, claims the key itself).
func (s *IdempotencyStore) Claim(ctx context.Context, company domain.CompanyID, client domain.ClientID, key ports.IdempotencyKey, at time.Time) (*ports.SavedWrite, error) {
	db := conn(ctx, s.db)
	// A key past the window answers no more: it is claimed anew.
	_, err := tenantOf(db, company).DeleteModel((*idempotencyRow)(nil)).Where("client_id = ?", string(client)).
		Where("key = ?", key.Key).Where("created_at < ?", at.UTC().Add(-ports.IdempotencyWindow)).Exec(ctx)
	if err != nil {
		return nil, translate(err)
	}
	fingerprint := key.Fingerprint
	if fingerprint == nil {
		fingerprint = []byte{} // a key without one (the upload endpoints) matches any retry
	}
	row := idempotencyRow{CompanyID: uuid.UUID(company), ClientID: string(client), Key: key.Key, Fingerprint: fingerprint, Body: []byte{}, CreatedAt: at.UTC()}
	res, err := db.NewInsert().Model(&row).On("CONFLICT DO NOTHING").Exec(ctx)
	if err != nil {
		return nil, translate(err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil, nil
	}
	var saved idempotencyRow
	if err := tenantOf(db, company).SelectModel(&saved).Where("client_id = ?", row.ClientID).Where("key = ?", row.Key).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	if !bytes.Equal(saved.Fingerprint, key.Fingerprint) {
		return nil, domain.ErrIdempotencyKeyReused
	}
	return saved.answer()
}

func (s *IdempotencyStore) Find(ctx context.Context, company domain.CompanyID, client domain.ClientID, key ports.IdempotencyKey) (*ports.SavedWrite, error) {
	var saved idempotencyRow
	err := tenantOf(conn(ctx, s.db), company).SelectModel(&saved).Where("client_id = ?", string(client)).
		Where("key = ?", key.Key).Where("created_at >= ?", time.Now().UTC().Add(-ports.IdempotencyWindow)).Where("status > 0").Scan(ctx)
	if errors.Is(translate(err), domain.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err)
	}
	if !bytes.Equal(saved.Fingerprint, key.Fingerprint) {
		return nil, domain.ErrIdempotencyKeyReused
	}
	return saved.answer()
}

func (s *IdempotencyStore) Save(ctx context.Context, company domain.CompanyID, client domain.ClientID, key ports.IdempotencyKey, answer ports.SavedWrite) error {
	_, err := tenantOf(conn(ctx, s.db), company).UpdateModel((*idempotencyRow)(nil)).
		Set("status = ?", answer.Outcome.Status()).Set("location = ?", answer.Location).Set("body = ?", answer.Value).
		Where("client_id = ?", string(client)).Where("key = ?", key.Key).Exec(ctx)
	return translate(err)
}
