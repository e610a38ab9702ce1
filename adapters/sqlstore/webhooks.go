package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// WebhookEndpoints keeps the webhook endpoints, their delivery state and
// the delivery log (docs/contract.md §12).
type WebhookEndpoints struct{ db *bun.DB }

var _ ports.WebhookEndpoints = (*WebhookEndpoints)(nil)

// NewWebhookEndpoints returns the endpoints of db.
func NewWebhookEndpoints(db *bun.DB) *WebhookEndpoints { return &WebhookEndpoints{db: db} }

type endpointRow struct {
	bun.BaseModel `bun:"table:webhook_endpoints,alias:webhook_endpoints"`

	ID              uuid.UUID  `bun:"id,pk"`
	CompanyID       uuid.UUID  `bun:"company_id"`
	URL             string     `bun:"url"`
	Description     string     `bun:"description"`
	EventTypes      string     `bun:"event_types"`
	Enabled         bool       `bun:"enabled"`
	DisabledReason  string     `bun:"disabled_reason"`
	Secret          []byte     `bun:"secret"`
	PreviousSecret  []byte     `bun:"previous_secret"`
	PreviousUntil   *time.Time `bun:"previous_until"`
	PositionChange  int64      `bun:"position_change"`
	PositionSection string     `bun:"position_section"`
	PositionID      string     `bun:"position_id"`
	Failures        int        `bun:"failures"`
	FailingSince    *time.Time `bun:"failing_since"`
	NextAttemptAt   time.Time  `bun:"next_attempt_at"`
	Version         int64      `bun:"version"`
	LeaseOwner      *string    `bun:"lease_owner"`
	LeaseUntil      *time.Time `bun:"lease_until"`
	CreatedAt       time.Time  `bun:"created_at"`
	UpdatedAt       time.Time  `bun:"updated_at"`
}

func rowOfEndpoint(e webhook.Endpoint) (endpointRow, error) {
	types, err := json.Marshal(e.EventTypes)
	if err != nil {
		return endpointRow{}, err
	}
	return endpointRow{
		ID: e.ID, CompanyID: uuid.UUID(e.Company), URL: e.URL, Description: e.Description, EventTypes: string(types),
		Enabled: e.Enabled, DisabledReason: e.DisabledReason, Secret: e.Secret, PreviousSecret: e.Previous,
		PreviousUntil: utcPtr(e.PreviousUntil), PositionChange: e.Position.Change, PositionSection: e.Position.Section,
		PositionID: e.Position.ID, Failures: e.Failures, FailingSince: utcPtr(e.FailingSince),
		NextAttemptAt: e.NextAttempt.UTC(), Version: e.Version, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(),
	}, nil
}

func (r endpointRow) endpoint() webhook.Endpoint {
	var types webhook.EventTypes
	_ = json.Unmarshal([]byte(r.EventTypes), &types)
	return webhook.Endpoint{
		ID: r.ID, Company: domain.CompanyID(r.CompanyID), URL: r.URL, Description: r.Description, EventTypes: types,
		Enabled: r.Enabled, DisabledReason: r.DisabledReason, Secret: r.Secret, Previous: r.PreviousSecret,
		PreviousUntil: utcPtr(r.PreviousUntil),
		Position:      webhook.Position{Change: r.PositionChange, Section: r.PositionSection, ID: r.PositionID},
		Failures:      r.Failures, FailingSince: utcPtr(r.FailingSince), NextAttempt: r.NextAttemptAt.UTC(),
		Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
}

func endpointsOf(rows []endpointRow) []webhook.Endpoint {
	out := make([]webhook.Endpoint, len(rows))
	for i, r := range rows {
		out[i] = r.endpoint()
	}
	return out
}

func (s *WebhookEndpoints) Create(ctx context.Context, e webhook.Endpoint) error {
	row, err := rowOfEndpoint(e)
	if err != nil {
		return err
	}
	return translate(runInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		n, err := tenantOf(tx, e.Company).Select("webhook_endpoints").Count(ctx)
		if err != nil {
			return err
		}
		if n >= webhook.MaxEndpoints {
			return domain.ErrConflict
		}
		_, err = tx.NewInsert().Model(&row).Exec(ctx)
		return err
	}))
}

func (s *WebhookEndpoints) Get(ctx context.Context, company domain.CompanyID, id uuid.UUID) (webhook.Endpoint, error) {
	var row endpointRow
	if err := tenantOf(conn(ctx, s.db), company).SelectModel(&row).Where("id = ?", id).Scan(ctx); err != nil {
		return webhook.Endpoint{}, translate(err)
	}
	return row.endpoint(), nil
}

func (s *WebhookEndpoints) List(ctx context.Context, company domain.CompanyID) ([]webhook.Endpoint, error) {
	var rows []endpointRow
	if err := tenantOf(conn(ctx, s.db), company).SelectModel(&rows).OrderExpr("created_at, id").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	return endpointsOf(rows), nil
}

func (s *WebhookEndpoints) Change(ctx context.Context, company domain.CompanyID, id uuid.UUID, fn func(*webhook.Endpoint) error) (webhook.Endpoint, error) {
	var out webhook.Endpoint
	err := inTx(ctx, s.db, func(ctx context.Context, tx bun.IDB) error {
		var row endpointRow
		q := tenantOf(tx, company).SelectModel(&row).Where("id = ?", id)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return err
		}
		e := row.endpoint()
		if err := fn(&e); err != nil {
			return err
		}
		e.Version = row.Version + 1
		next, err := rowOfEndpoint(e)
		if err != nil {
			return err
		}
		next.LeaseOwner, next.LeaseUntil = row.LeaseOwner, row.LeaseUntil
		if _, err := tenantOf(tx, company).UpdateModel(&next).WherePK().Exec(ctx); err != nil {
			return err
		}
		out = e
		return nil
	})
	return out, translate(err)
}

func (s *WebhookEndpoints) Delete(ctx context.Context, company domain.CompanyID, id uuid.UUID) error {
	return translate(inTx(ctx, s.db, func(ctx context.Context, tx bun.IDB) error {
		if _, err := tenantOf(tx, company).Delete("webhook_deliveries").Where("endpoint_id = ?", id).Exec(ctx); err != nil {
			return err
		}
		return affectedOne(tenantOf(tx, company).Delete("webhook_endpoints").Where("id = ?", id).Exec(ctx))
	}))
}

func (s *WebhookEndpoints) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]webhook.Endpoint, error) {
	db := conn(ctx, s.db)
	due := acrossCompanies(db, "the dispatcher leases due endpoints of every company").NewSelect().TableExpr("webhook_endpoints").Column("id").
		Where("enabled").Where("next_attempt_at <= ?", now.UTC()).
		Where("(lease_until IS NULL OR lease_until < ?)", now.UTC()).OrderExpr("next_attempt_at").Limit(int64(limit))
	if db.Dialect().Name() == dialect.PG {
		due = due.For("UPDATE SKIP LOCKED")
	}
	var rows []endpointRow
	_, err := acrossCompanies(db, "the dispatcher leases due endpoints of every company").NewUpdate().Model((*endpointRow)(nil)).
		Set("lease_owner = ?", owner).Set("lease_until = ?", now.Add(lease).UTC()).
		Where("id IN (?)", due).Returning("*").Exec(ctx, &rows)
	if err != nil {
		return nil, translate(err)
	}
	return endpointsOf(rows), nil
}

func (s *WebhookEndpoints) Renew(ctx context.Context, e webhook.Endpoint, owner string, until time.Time) (webhook.Endpoint, error) {
	db := conn(ctx, s.db)
	var rows []endpointRow
	_, err := tenantOf(db, e.Company).UpdateModel((*endpointRow)(nil)).Set("lease_until = ?", until.UTC()).
		Where("id = ?", e.ID).Where("lease_owner = ?", owner).Returning("*").Exec(ctx, &rows)
	if err != nil {
		return webhook.Endpoint{}, translate(err)
	}
	if len(rows) == 0 {
		if _, err := s.Get(ctx, e.Company, e.ID); err != nil {
			return webhook.Endpoint{}, err
		}
		return webhook.Endpoint{}, ports.ErrLeaseLost
	}
	return rows[0].endpoint(), nil
}

func (s *WebhookEndpoints) Advance(ctx context.Context, e webhook.Endpoint, owner string, until time.Time, attempts []webhook.Attempt) error {
	changed := false
	err := runInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if tx.Dialect().Name() == dialect.PG {
			// A position lost with PostgreSQL itself is an event sent again
			// with its webhook-id, which receivers take once: no need to wait
			// for the disk.
			if _, err := acrossCompanies(tx, "a setting of the transaction names no table").
				ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
				return err
			}
		}
		held := affectedOne(tenantOf(tx, e.Company).Update("webhook_endpoints").Set("lease_until = ?", until.UTC()).
			Where("id = ?", e.ID).Where("lease_owner = ?", owner).Exec(ctx))
		if errors.Is(held, domain.ErrNotFound) {
			return ports.ErrLeaseLost
		} else if held != nil {
			return held
		}
		if len(attempts) > 0 {
			rows := make([]deliveryRow, len(attempts))
			for i, a := range attempts {
				rows[i] = rowOfAttempt(e.Company, a)
			}
			if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
				return err
			}
		}
		err := affectedOne(tenantOf(tx, e.Company).Update("webhook_endpoints").
			Set("position_change = ?", e.Position.Change).Set("position_section = ?", e.Position.Section).
			Set("position_id = ?", e.Position.ID).Set("failures = ?", e.Failures).
			Set("failing_since = ?", utcPtr(e.FailingSince)).Set("next_attempt_at = ?", e.NextAttempt.UTC()).
			Set("enabled = ?", e.Enabled).Set("disabled_reason = ?", e.DisabledReason).
			Where("id = ?", e.ID).Where("version = ?", e.Version).Exec(ctx))
		changed = errors.Is(err, domain.ErrNotFound)
		if changed {
			return nil // the attempts stay logged; the owner's change stands
		}
		return err
	})
	switch {
	case errors.Is(err, ports.ErrLeaseLost):
		return err
	case err != nil:
		return translate(err)
	case changed:
		return ports.ErrEndpointChanged
	}
	return nil
}

func (s *WebhookEndpoints) Release(ctx context.Context, e webhook.Endpoint, owner string) error {
	_, err := tenantOf(conn(ctx, s.db), e.Company).Update("webhook_endpoints").
		Set("lease_owner = NULL").Set("lease_until = NULL").Where("id = ?", e.ID).Where("lease_owner = ?", owner).Exec(ctx)
	return translate(err)
}

type deliveryRow struct {
	bun.BaseModel `bun:"table:webhook_deliveries,alias:webhook_deliveries"`

	ID              uuid.UUID `bun:"id,pk"`
	CompanyID       uuid.UUID `bun:"company_id"`
	EndpointID      uuid.UUID `bun:"endpoint_id"`
	MessageID       string    `bun:"message_id"`
	Type            string    `bun:"type"`
	PositionChange  int64     `bun:"position_change"`
	PositionSection string    `bun:"position_section"`
	PositionID      string    `bun:"position_id"`
	At              time.Time `bun:"at"`
	Status          int       `bun:"status"`
	Error           string    `bun:"error"`
	DurationUS      int64     `bun:"duration_us"`
	Outcome         string    `bun:"outcome"`
}

func rowOfAttempt(company domain.CompanyID, a webhook.Attempt) deliveryRow {
	return deliveryRow{
		ID: a.ID, CompanyID: uuid.UUID(company), EndpointID: a.Endpoint, MessageID: a.MessageID, Type: a.Type,
		PositionChange: a.Position.Change, PositionSection: a.Position.Section, PositionID: a.Position.ID,
		At: a.At.UTC(), Status: a.Status, Error: a.Error, DurationUS: a.Duration.Microseconds(), Outcome: a.Outcome.String(),
	}
}

func (r deliveryRow) attempt() webhook.Attempt {
	return webhook.Attempt{
		ID: r.ID, Endpoint: r.EndpointID, MessageID: r.MessageID, Type: r.Type,
		Position: webhook.Position{Change: r.PositionChange, Section: r.PositionSection, ID: r.PositionID},
		At:       r.At.UTC(), Status: r.Status, Error: r.Error, Duration: time.Duration(r.DurationUS) * time.Microsecond,
		Outcome: webhook.ParseOutcome(r.Outcome),
	}
}

func (s *WebhookEndpoints) Deliveries(ctx context.Context, company domain.CompanyID, endpoint uuid.UUID, before uuid.UUID, limit int) ([]webhook.Attempt, bool, error) {
	var rows []deliveryRow
	q := tenantOf(conn(ctx, s.db), company).SelectModel(&rows).Where("endpoint_id = ?", endpoint)
	if before != uuid.Nil {
		q = q.Where("id < ?", before)
	}
	if err := q.OrderExpr("id DESC").Limit(int64(limit + 1)).Scan(ctx); err != nil {
		return nil, false, translate(err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]webhook.Attempt, len(rows))
	for i, r := range rows {
		out[i] = r.attempt()
	}
	return out, more, nil
}

func (s *WebhookEndpoints) SweepDeliveries(ctx context.Context, before time.Time) (int64, error) {
	res, err := acrossCompanies(conn(ctx, s.db), "the delivery log is swept for every company at once").NewDelete().
		TableExpr("webhook_deliveries").Where("at < ?", before.UTC()).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

func (s *WebhookEndpoints) Backlog(ctx context.Context, now time.Time) (ports.WebhookBacklog, error) {
	db := conn(ctx, s.db)
	var states []struct {
		Enabled bool `bun:"enabled"`
		Failing bool `bun:"failing"`
		N       int  `bun:"n"`
	}
	err := acrossCompanies(db, "the metrics count the endpoints of every company").NewSelect().TableExpr("webhook_endpoints").
		ColumnExpr("enabled, failing_since IS NOT NULL AS failing, count(*) AS n").GroupExpr("enabled, failing_since IS NOT NULL").Scan(ctx, &states)
	if err != nil {
		return ports.WebhookBacklog{}, translate(err)
	}
	var b ports.WebhookBacklog
	for _, st := range states {
		switch {
		case !st.Enabled:
			b.Disabled += st.N
		case st.Failing:
			b.Failing += st.N
		default:
			b.Delivering += st.N
		}
	}
	var oldest []endpointRow
	err = acrossCompanies(db, "the metrics count the endpoints of every company").NewSelect().Model(&oldest).Column("next_attempt_at").
		Where("enabled").Where("next_attempt_at <= ?", now.UTC()).OrderExpr("next_attempt_at").Limit(1).Scan(ctx)
	if err != nil {
		return ports.WebhookBacklog{}, translate(err)
	}
	if len(oldest) > 0 {
		b.OldestDue = oldest[0].NextAttemptAt
	}
	return b, nil
}
