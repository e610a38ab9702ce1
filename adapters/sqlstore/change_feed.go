package sqlstore

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// ChangeFeed is one company's feed across the tables a webhook tells of,
// for the dispatcher: customers, the records of every kind, and files,
// merged by position (change, section, id). Like every list it serves only
// settled changes (changes.go), so a change that commits late is never
// passed over.
type ChangeFeed struct{ db *bun.DB }

var _ ports.ChangeFeed = (*ChangeFeed)(nil)

// NewChangeFeed returns the feed of db.
func NewChangeFeed(db *bun.DB) *ChangeFeed { return &ChangeFeed{db: db} }

// feedTable is one table of the feed: how it names its section and reads
// its rows' status.
type feedTable struct {
	name     string
	section  string // an SQL expression
	customer string
	status   func(dialect.Name) string
}

var feedTables = []feedTable{
	{name: "customers", section: "'customers'", customer: "NULL", status: func(dialect.Name) string { return "NULL" }},
	{name: "records", section: "records.kind", customer: "records.customer_id", status: func(d dialect.Name) string {
		if d == dialect.PG {
			return "records.payload->>'status'"
		}
		return "json_extract(records.payload, '$.status')"
	}},
	{name: "files", section: "'files'", customer: "files.customer_id", status: func(dialect.Name) string { return "NULL" }},
}

type feedRow struct {
	Change     int64      `bun:"change"`
	Section    string     `bun:"section"`
	ID         string     `bun:"id"`
	CustomerID *int64     `bun:"customer_id"`
	Version    int64      `bun:"version"`
	Status     *string    `bun:"status"`
	CreatedAt  time.Time  `bun:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at"`
	DeletedAt  *time.Time `bun:"deleted_at"`
}

// text compares as Go compares strings, byte by byte, whatever the
// database's collation.
func text(d dialect.Name, expr string) string {
	if d == dialect.PG {
		return "CAST(" + expr + " AS TEXT) COLLATE \"C\""
	}
	return "CAST(" + expr + " AS TEXT)"
}

// After reads each table's next rows past p and merges them: a page is at
// most limit entries of the three in position order.
func (f *ChangeFeed) After(ctx context.Context, company domain.CompanyID, p webhook.Position, limit int) ([]webhook.Change, error) {
	db := conn(ctx, f.db)
	d := db.Dialect().Name()
	var all []feedRow
	for _, t := range feedTables {
		section, id := text(d, t.section), text(d, t.name+".id")
		var rows []feedRow
		q := tenantOf(db, company).Select(t.name).
			ColumnExpr(t.name+".change, "+section+" AS section, "+id+" AS id").
			ColumnExpr(t.customer+" AS customer_id, "+t.status(d)+" AS status").
			ColumnExpr(t.name+".version, "+t.name+".created_at, "+t.name+".updated_at, "+t.name+".deleted_at").
			Where(t.name+".change >= ?", p.Change).
			Where("NOT ("+t.name+".change = ? AND ("+section+", "+id+") <= (?, ?))", p.Change, p.Section, p.ID)
		q = settledChanges(q).OrderExpr(t.name + ".change, section, id").Limit(int64(limit))
		if err := q.Scan(ctx, &rows); err != nil {
			return nil, translate(err)
		}
		all = append(all, rows...)
	}
	out := make([]webhook.Change, len(all))
	for i, r := range all {
		c := webhook.Change{
			Position: webhook.Position{Change: r.Change, Section: r.Section, ID: r.ID}, Version: r.Version,
			Deleted: r.DeletedAt != nil, Created: r.DeletedAt == nil && r.CreatedAt.Equal(r.UpdatedAt),
			Cancelled: r.Status != nil && *r.Status == string(domain.StatusCancelled), At: r.UpdatedAt.UTC(),
		}
		if r.CustomerID != nil {
			id := domain.CustomerID(*r.CustomerID)
			c.CustomerID = &id
		}
		out[i] = c
	}
	slices.SortFunc(out, func(a, b webhook.Change) int {
		switch {
		case a.Less(b.Position):
			return -1
		case b.Less(a.Position):
			return 1
		}
		return 0
	})
	return out[:min(len(out), limit)], nil
}

// endOfChange is a position after every object written at change.
func endOfChange(change int64) webhook.Position {
	return webhook.Position{Change: change, Section: "~"}
}

func (f *ChangeFeed) Head(ctx context.Context, company domain.CompanyID) (webhook.Position, error) {
	return f.edge(ctx, company, "max", nil)
}

func (f *ChangeFeed) Since(ctx context.Context, company domain.CompanyID, t time.Time) (webhook.Position, error) {
	return f.edge(ctx, company, "min", &t)
}

// edge is the end of the feed (max), or just before its first change
// written at or after since (min).
func (f *ChangeFeed) edge(ctx context.Context, company domain.CompanyID, agg string, since *time.Time) (webhook.Position, error) {
	db := conn(ctx, f.db)
	var found []int64
	for _, t := range feedTables {
		var v *string // SQLite answers an aggregate of an INTEGER column as it likes
		q := tenantOf(db, company).Select(t.name).ColumnExpr("CAST(" + agg + "(" + t.name + ".change) AS TEXT)")
		if since != nil {
			q = q.Where(t.name+".updated_at >= ?", since.UTC())
		}
		if err := settledChanges(q).Scan(ctx, &v); err != nil {
			return webhook.Position{}, translate(err)
		}
		if v != nil {
			n, err := strconv.ParseInt(*v, 10, 64)
			if err != nil {
				return webhook.Position{}, err
			}
			found = append(found, n)
		}
	}
	if since == nil {
		if len(found) == 0 {
			return endOfChange(0), nil
		}
		return endOfChange(slices.Max(found)), nil
	}
	if len(found) == 0 {
		return f.Head(ctx, company)
	}
	return endOfChange(slices.Min(found) - 1), nil
}
