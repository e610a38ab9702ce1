package sqlstore

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// observedRows keeps an object's observed rows in record_observed
// (domain.HookObserved): written with it, gone with its delete. A batch of
// new objects (the import's Put) is written by one INSERT.
type observedRows struct{}

// observedRow is a row of record_observed.
type observedRow struct {
	bun.BaseModel `bun:"table:record_observed"`

	CompanyID     uuid.UUID `bun:"company_id"`
	RecordID      uuid.UUID `bun:"record_id"`
	Row           int       `bun:"row_no"`
	Code          string    `bun:"code"`
	ObservedFrom  *int64    `bun:"observed_from"`
	ObservedUntil *int64    `bun:"observed_until"`
}

func (h observedRows) Written(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, id string, payload []byte) error {
	if err := h.Deleted(ctx, db, company, kind, id); err != nil {
		return err
	}
	return h.InsertedAll(ctx, db, company, kind, []ports.StoredObject{{ID: id, Payload: payload}})
}

// InsertedAll writes the observed rows of a batch of new objects.
func (observedRows) InsertedAll(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, objs []ports.StoredObject) error {
	rows := make([]observedRow, 0, len(objs))
	for _, o := range objs {
		id := uuid.MustParse(o.ID)
		for _, r := range domain.ObservedOf(kind, o.Payload) {
			row := observedRow{CompanyID: uuid.UUID(company), RecordID: id, Row: r.Row, Code: r.Code}
			if !r.From.IsZero() {
				row.ObservedFrom, row.ObservedUntil = ptr(r.From.UnixMilli()), ptr(r.Until.UnixMilli())
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := db.NewInsert().Model(&rows).Exec(ctx)
	return translate(err)
}

func (observedRows) Deleted(ctx context.Context, db bun.IDB, company domain.CompanyID, _ *domain.Kind, id string) error {
	_, err := tenantOf(db, company).Delete("record_observed").Where("record_id = ?", uuid.MustParse(id)).Exec(ctx)
	return translate(err)
}
