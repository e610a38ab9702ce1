package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/slots"
	"github.com/praxis-health/praxis/ports"
)

// Calendar reads the spans the record store keeps beside every appointment.
type Calendar struct{ db *bun.DB }

var _ ports.Calendar = (*Calendar)(nil)

// NewCalendar returns the calendar of db.
func NewCalendar(db *bun.DB) *Calendar { return &Calendar{db: db} }

// Busy appends the active spans of users that overlap [from, until) to
// dst, sorted by user, then start: their user and times (what the slots
// need), nothing else.
func (c *Calendar) Busy(ctx context.Context, company domain.CompanyID, users []domain.UUID, from, until time.Time, dst []slots.Busy) ([]slots.Busy, error) {
	if len(users) == 0 {
		return dst, nil
	}
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = string(u)
	}
	ids = validIDs(ids)
	// Each row names its user by its index in ids (CASE user_id WHEN … THEN
	// i): three integers to read, no UUID to parse. Rows are read one by one
	// into fixed-size values: no reflection, no allocation of ours per row.
	var which strings.Builder
	args := make([]any, 0, len(ids))
	which.WriteString("CASE user_id")
	for i, id := range ids {
		fmt.Fprintf(&which, " WHEN ? THEN %d", i)
		args = append(args, id)
	}
	which.WriteString(" END")
	rows, err := tenantOf(conn(ctx, c.db), company).Select("appointment_spans").
		ColumnExpr(which.String(), args...).Column("starts_at", "blocks_until").
		Where("user_id IN (?)", bun.List(ids)).Where("active").Where("starts_at < ?", until.Unix()).Where("blocks_until > ?", from.Unix()).
		OrderExpr("user_id, starts_at").Rows(ctx)
	if err != nil {
		return dst, translate(err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var i int
		var span slots.Busy
		if err := rows.Scan(&i, &span.From, &span.Until); err != nil {
			return dst, translate(err)
		}
		span.User = domain.UUID(ids[i])
		dst = append(dst, span)
	}
	return dst, translate(rows.Err())
}

// Blocking answers the active appointments of user that block part of [from, until).
func (c *Calendar) Blocking(ctx context.Context, company domain.CompanyID, user domain.UUID, from, until time.Time) ([]string, error) {
	if !domain.ValidObjectID(string(user)) {
		return nil, nil
	}
	var ids []uuid.UUID
	err := tenantOf(conn(ctx, c.db), company).Select("appointment_spans").Column("appointment_id").
		Where("user_id = ?", uuid.MustParse(string(user))).Where("active").
		Where("starts_at < ?", until.Unix()).Where("blocks_until > ?", from.Unix()).
		OrderExpr("starts_at, appointment_id").Scan(ctx, &ids)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out, nil
}

// Lock serializes the bookings of one user until the transaction ends. On
// PostgreSQL a transaction-scoped advisory lock; SQLite's immediate
// transactions are serialized already.
func (c *Calendar) Lock(ctx context.Context, company domain.CompanyID, user domain.UUID) error {
	db := conn(ctx, c.db)
	if db.Dialect().Name() != dialect.PG {
		return nil
	}
	_, err := acrossCompanies(db, "an advisory lock names no table").ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "calendar:"+company.String()+":"+string(user))
	return translate(err)
}

// putSpan keeps the span of a calendar kind's object in step with its
// payload, in the writing transaction: the end plus its service's buffer.
// calendarSpan keeps an appointment's busy span in appointment_spans
// (domain.HookCalendarSpan): written with it, gone with its delete.
type calendarSpan struct{}

func (calendarSpan) Written(ctx context.Context, db bun.IDB, company domain.CompanyID, _ *domain.Kind, id string, payload []byte) error {
	var ref struct {
		ServiceID *string `json:"service_id"`
	}
	if err := json.Unmarshal(payload, &ref); err != nil {
		return err
	}
	buffer := 0
	if ref.ServiceID != nil && domain.ValidObjectID(*ref.ServiceID) {
		var svc []byte
		err := tenantOf(db, company).Select("records").Column("payload").
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
	busy := slots.BusyOf(span)
	row := map[string]any{
		"company_id": uuid.UUID(company), "appointment_id": uuid.MustParse(id), "user_id": uuid.MustParse(string(span.User)),
		"location_id": uuid.MustParse(string(span.Location)), "starts_at": busy.From, "blocks_until": busy.Until,
		"active": span.Active, "online": span.Online,
	}
	_, err = db.NewInsert().Model(&row).TableExpr("appointment_spans").On("CONFLICT (company_id, appointment_id) DO UPDATE").
		Set("user_id = EXCLUDED.user_id, location_id = EXCLUDED.location_id, starts_at = EXCLUDED.starts_at").
		Set("blocks_until = EXCLUDED.blocks_until, active = EXCLUDED.active, online = EXCLUDED.online").Exec(ctx)
	return translate(err)
}

// Deleted frees the time of a deleted appointment: nothing it blocked stays busy.
func (calendarSpan) Deleted(ctx context.Context, db bun.IDB, company domain.CompanyID, _ *domain.Kind, id string) error {
	_, err := tenantOf(db, company).Delete("appointment_spans").Where("appointment_id = ?", uuid.MustParse(id)).Exec(ctx)
	return translate(err)
}

// calendarFilter narrows a feed query of appointments to the filter's spans.
func calendarFilter(q *bun.SelectQuery, tn tenant, f domain.CalendarFilter) *bun.SelectQuery {
	if !f.Any() {
		return q
	}
	sub := tn.Select("appointment_spans").Column("appointment_id")
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
