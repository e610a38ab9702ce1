package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// AuditLog keeps the audit chains (docs/contract.md §11).
type AuditLog struct{ db *bun.DB }

var _ ports.AuditLog = (*AuditLog)(nil)

// NewAuditLog returns the audit log of db.
func NewAuditLog(db *bun.DB) *AuditLog { return &AuditLog{db: db} }

type auditHeadRow struct {
	bun.BaseModel `bun:"table:audit_heads,alias:audit_heads"`

	CompanyID uuid.UUID `bun:"company_id,pk"`
	Seq       int64     `bun:"seq"`
	Hash      []byte    `bun:"hash"`
	FloorSeq  int64     `bun:"floor_seq"`
	FloorHash []byte    `bun:"floor_hash"`
}

type auditEventRow struct {
	bun.BaseModel `bun:"table:audit_events,alias:audit_events"`

	CompanyID uuid.UUID `bun:"company_id,pk"`
	Seq       int64     `bun:"seq,pk"`
	At        time.Time `bun:"at"`
	AgentID   string    `bun:"agent_id"`
	Payload   []byte    `bun:"payload"`
	PrevHash  []byte    `bun:"prev_hash"`
	Hash      []byte    `bun:"hash"`
}

type auditCustomerRow struct {
	bun.BaseModel `bun:"table:audit_event_customers"`

	CompanyID  uuid.UUID `bun:"company_id,pk"`
	CustomerID int64     `bun:"customer_id,pk"`
	Seq        int64     `bun:"seq,pk"`
}

// Append locks the company's head, seals the events after it, and moves it:
// concurrent appends of one company wait for each other, so its chain has
// no fork; other companies' appends do not wait.
func (l *AuditLog) Append(ctx context.Context, company domain.CompanyID, events []audit.Event) error {
	if len(events) == 0 {
		return nil
	}
	db := conn(ctx, l.db)
	if _, ok := db.(bun.Tx); !ok {
		return errors.New("audit: Append runs in a transaction")
	}
	tn := tenantOf(db, company)
	head := auditHeadRow{CompanyID: uuid.UUID(company), Hash: []byte{}, FloorHash: []byte{}}
	lockHead := func() error {
		q := tn.SelectModel(&head)
		if db.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		return translate(q.Scan(ctx))
	}
	err := lockHead()
	if errors.Is(err, domain.ErrNotFound) { // the company's first event: its head begins
		if _, err := db.NewInsert().Model(&head).On("CONFLICT (company_id) DO NOTHING").Exec(ctx); err != nil {
			return translate(err)
		}
		err = lockHead()
	}
	if err != nil {
		return err
	}
	link := audit.Link{Seq: head.Seq, Hash: head.Hash}
	rows := make([]auditEventRow, len(events))
	var customers []auditCustomerRow
	for i, e := range events {
		sealed := audit.Seal(company, link, e.Canonical())
		link = sealed.Link()
		rows[i] = auditEventRow{CompanyID: uuid.UUID(company), Seq: sealed.Seq, At: e.Time.UTC(), AgentID: e.Agent.ID,
			Payload: sealed.Payload, PrevHash: orEmpty(sealed.PrevHash), Hash: sealed.Hash}
		seen := map[domain.CustomerID]bool{}
		for _, c := range e.CustomerIDs {
			if !seen[c] {
				seen[c] = true
				customers = append(customers, auditCustomerRow{CompanyID: uuid.UUID(company), CustomerID: int64(c), Seq: sealed.Seq})
			}
		}
	}
	if _, err := db.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return translate(err)
	}
	if len(customers) > 0 {
		if _, err := db.NewInsert().Model(&customers).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	_, err = tn.UpdateModel((*auditHeadRow)(nil)).Set("seq = ?", link.Seq).Set("hash = ?", link.Hash).Exec(ctx)
	return translate(err)
}

func orEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func (l *AuditLog) List(ctx context.Context, company domain.CompanyID, q audit.Query) (audit.Page, error) {
	var rows []auditEventRow
	sel := tenantOf(conn(ctx, l.db), company).SelectModel(&rows).Column("seq", "payload")
	if q.Customer != nil {
		sel = sel.Where("audit_events.seq IN (?)", tenantOf(conn(ctx, l.db), company).Select("audit_event_customers").
			Column("seq").Where("customer_id = ?", int64(*q.Customer)).Where("seq > ?", q.After))
	}
	if q.Agent != "" {
		sel = sel.Where("agent_id = ?", q.Agent)
	}
	if q.From != nil {
		sel = sel.Where("at >= ?", q.From.UTC())
	}
	if q.To != nil {
		sel = sel.Where("at < ?", q.To.UTC())
	}
	err := sel.Where("audit_events.seq > ?", q.After).OrderExpr("audit_events.seq").Limit(int64(q.Limit) + 1).Scan(ctx)
	if err != nil {
		return audit.Page{}, translate(err)
	}
	page := audit.Page{Last: q.After, HasMore: len(rows) > q.Limit}
	if page.HasMore {
		rows = rows[:q.Limit]
	}
	for _, r := range rows {
		page.Events = append(page.Events, r.Payload)
		page.Last = r.Seq
	}
	return page, nil
}

// walkBatch is how many events Walk reads at a time.
const walkBatch = 1000

func (l *AuditLog) Chain(ctx context.Context, company domain.CompanyID) (audit.Link, audit.Link, error) {
	var head auditHeadRow
	if err := tenantOf(conn(ctx, l.db), company).SelectModel(&head).Scan(ctx); err != nil {
		if errors.Is(translate(err), domain.ErrNotFound) {
			return audit.Link{}, audit.Link{}, nil // nothing recorded yet
		}
		return audit.Link{}, audit.Link{}, translate(err)
	}
	return audit.Link{Seq: head.FloorSeq, Hash: nilIfEmpty(head.FloorHash)}, audit.Link{Seq: head.Seq, Hash: nilIfEmpty(head.Hash)}, nil
}

func (l *AuditLog) Walk(ctx context.Context, company domain.CompanyID, upTo int64, fn func(audit.Sealed) error) error {
	after := int64(-1)
	for {
		var rows []auditEventRow
		err := tenantOf(conn(ctx, l.db), company).SelectModel(&rows).Where("seq > ?", after).Where("seq <= ?", upTo).
			OrderExpr("seq").Limit(walkBatch).Scan(ctx)
		if err != nil {
			return translate(err)
		}
		for _, r := range rows {
			if err := fn(audit.Sealed{Company: company, Seq: r.Seq, Payload: r.Payload, PrevHash: nilIfEmpty(r.PrevHash), Hash: r.Hash}); err != nil {
				return err
			}
			after = r.Seq
		}
		if len(rows) < walkBatch {
			return nil
		}
	}
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Sweep deletes whole leading events older than before and leaves, in the
// head, the last deleted event's link as the checkpoint verification
// starts from.
func (l *AuditLog) Sweep(ctx context.Context, company domain.CompanyID, before time.Time) (int64, error) {
	db := conn(ctx, l.db)
	tn := tenantOf(db, company)
	var last auditEventRow
	// The chain is cut after the last old event that every earlier one
	// precedes: events are sealed in time order, so that is the newest old one.
	err := tn.SelectModel(&last).Column("seq", "hash").Where("at < ?", before.UTC()).OrderExpr("seq DESC").Limit(1).Scan(ctx)
	if errors.Is(translate(err), domain.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, translate(err)
	}
	if _, err := tn.Delete("audit_event_customers").Where("seq <= ?", last.Seq).Exec(ctx); err != nil {
		return 0, translate(err)
	}
	res, err := tn.DeleteModel((*auditEventRow)(nil)).Where("seq <= ?", last.Seq).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	if _, err := tn.UpdateModel((*auditHeadRow)(nil)).Set("floor_seq = ?", last.Seq).Set("floor_hash = ?", last.Hash).Exec(ctx); err != nil {
		return 0, translate(err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
