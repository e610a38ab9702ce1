package sqlstore

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/release"
	"github.com/praxis-health/praxis/ports"
)

// DeprecatedCalls keeps the per-client counts of deprecated calls.
type DeprecatedCalls struct{ db *bun.DB }

var _ ports.DeprecatedCalls = (*DeprecatedCalls)(nil)

// NewDeprecatedCalls returns the counts of db.
func NewDeprecatedCalls(db *bun.DB) *DeprecatedCalls { return &DeprecatedCalls{db: db} }

type deprecatedCallRow struct {
	bun.BaseModel `bun:"table:deprecated_calls,alias:deprecated_calls"`

	CompanyID uuid.UUID `bun:"company_id,pk"`
	ClientID  string    `bun:"client_id,pk"`
	Operation string    `bun:"operation,pk"`
	Day       string    `bun:"day,pk"`
	Calls     int64     `bun:"calls"`
}

// Count adds in one statement, so concurrent counts never lose one.
func (s *DeprecatedCalls) Count(ctx context.Context, company domain.CompanyID, client domain.ClientID, operation string, day time.Time, calls int64) error {
	row := deprecatedCallRow{CompanyID: uuid.UUID(company), ClientID: string(client), Operation: operation,
		Day: day.UTC().Format(release.DateLayout), Calls: calls}
	_, err := conn(ctx, s.db).NewInsert().Model(&row).
		On("CONFLICT (company_id, client_id, operation, day) DO UPDATE").Set("calls = deprecated_calls.calls + EXCLUDED.calls").Exec(ctx)
	return translate(err)
}

func (s *DeprecatedCalls) List(ctx context.Context, company *domain.CompanyID) ([]release.Calls, error) {
	var rows []deprecatedCallRow
	var q *bun.SelectQuery
	if company != nil {
		q = tenantOf(conn(ctx, s.db), *company).SelectModel(&rows)
	} else {
		q = acrossCompanies(conn(ctx, s.db), "the operator lists every company's deprecated calls").NewSelect().Model(&rows)
	}
	if err := q.ColumnExpr("company_id, client_id, operation, CAST(day AS TEXT) AS day, calls").
		OrderExpr("day DESC, company_id, client_id, operation").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	out := make([]release.Calls, len(rows))
	for i, r := range rows {
		out[i] = release.Calls{CompanyID: domain.CompanyID(r.CompanyID), ClientID: domain.ClientID(r.ClientID),
			Operation: r.Operation, Day: r.Day, Calls: r.Calls}
	}
	return out, nil
}
