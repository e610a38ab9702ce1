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
	"github.com/praxis-health/praxis/ports"
)

// Calendar reads the spans the record store keeps beside every appointment.
type Calendar struct{ db *bun.DB }

var _ ports.Calendar = (*Calendar)(nil)

// NewCalendar returns the calendar of db.
func NewCalendar(db *bun.DB) *Calendar { return &Calendar{db: db} }

// Busy lists the active spans of users that overlap [from, until): their
// user and times (what the slots need), nothing else.
func (c *Calendar) Busy(ctx context.Context, company domain.CompanyID, users []domain.UUID, from, until time.Time) ([]domain.AppointmentSpan, error) {
	if len(users) == 0 {
		return nil, nil
	}
	byID := make(map[uuid.UUID]domain.UUID, len(users))
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = string(u)
		if id, err := uuid.Parse(string(u)); err == nil {
			byID[id] = u
		}
	}
	// Read row by row into fixed-size values: no reflection, no allocation per row.
	rows, err := conn(ctx, c.db).QueryContext(ctx, "SELECT user_id, starts_at, blocks_until FROM appointment_spans "+
		"WHERE company_id = ? AND user_id IN (?) AND active AND starts_at < ? AND blocks_until > ?",
		uuid.UUID(company), bun.List(validIDs(ids)), until.Unix(), from.Unix())
	if err != nil {
		return nil, translate(err)
	}
	defer func() { _ = rows.Close() }()
	var out []domain.AppointmentSpan
	for rows.Next() {
		var user uuid.UUID
		var start, end int64
		if err := rows.Scan(&user, &start, &end); err != nil {
			return nil, translate(err)
		}
		out = append(out, domain.AppointmentSpan{User: byID[user], Start: time.Unix(start, 0), BlockedUntil: time.Unix(end, 0), Active: true})
	}
	return out, translate(rows.Err())
}

// Lock serializes the bookings of one user until the transaction ends. On
// PostgreSQL a transaction-scoped advisory lock; SQLite's immediate
// transactions are serialized already.
func (c *Calendar) Lock(ctx context.Context, company domain.CompanyID, user domain.UUID) error {
	db := conn(ctx, c.db)
	if db.Dialect().Name() != dialect.PG {
		return nil
	}
	_, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "calendar:"+company.String()+":"+string(user))
	return translate(err)
}

// putSpan keeps the span of a calendar kind's object in step with its
// payload, in the writing transaction: the end plus its service's buffer.
func putSpan(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, id string, payload []byte) error {
	if !kind.Calendar {
		return nil
	}
	var ref struct {
		ServiceID *string `json:"service_id"`
	}
	if err := json.Unmarshal(payload, &ref); err != nil {
		return err
	}
	buffer := 0
	if ref.ServiceID != nil && domain.ValidObjectID(*ref.ServiceID) {
		var svc []byte
		err := db.NewSelect().TableExpr("records").Column("payload").Where("company_id = ?", uuid.UUID(company)).
			Where("kind = 'services'").Where("id = ?", *ref.ServiceID).Scan(ctx, &svc)
		if err := translate(err); err != nil && !errors.Is(err, domain.ErrNotFound) {
			return err
		}
		var s struct {
			Buffer *int `json:"buffer_after_minutes"`
		}
		if len(svc) > 0 && json.Unmarshal(svc, &s) == nil && s.Buffer != nil {
			buffer = *s.Buffer
		}
	}
	span, err := domain.SpanOf(id, payload, buffer)
	if err != nil {
		return err
	}
	row := map[string]any{
		"company_id": uuid.UUID(company), "appointment_id": uuid.MustParse(id), "user_id": uuid.MustParse(string(span.User)),
		"location_id": uuid.MustParse(string(span.Location)), "starts_at": span.Start.Unix(), "blocks_until": span.BlockedUntil.Unix(),
		"active": span.Active, "online": span.Online,
	}
	_, err = db.NewInsert().Model(&row).TableExpr("appointment_spans").On("CONFLICT (company_id, appointment_id) DO UPDATE").
		Set("user_id = EXCLUDED.user_id, location_id = EXCLUDED.location_id, starts_at = EXCLUDED.starts_at").
		Set("blocks_until = EXCLUDED.blocks_until, active = EXCLUDED.active, online = EXCLUDED.online").Exec(ctx)
	return translate(err)
}

// calendarFilter narrows a feed query of appointments to the filter's spans.
func calendarFilter(q *bun.SelectQuery, company domain.CompanyID, f domain.CalendarFilter) *bun.SelectQuery {
	if !f.Any() {
		return q
	}
	sub := q.NewSelect().TableExpr("appointment_spans").Column("appointment_id").Where("company_id = ?", uuid.UUID(company))
	if f.User != nil {
		sub = sub.Where("user_id = ?", string(*f.User))
	}
	if f.Location != nil {
		sub = sub.Where("location_id = ?", string(*f.Location))
	}
	if f.StartsFrom != nil {
		sub = sub.Where("starts_at >= ?", f.StartsFrom.Unix())
	}
	if f.StartsBefore != nil {
		sub = sub.Where("starts_at < ?", f.StartsBefore.Unix())
	}
	return q.Where("records.id IN (?)", sub)
}
