package sqlstore

import (
	"maps"
	"slices"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
)

// feedQuery turns a company-scoped select of table into one page of its
// feed (docs/contract.md §4): the filters, the keyset after the cursor, only
// settled changes, in (change, id) order, one row more than the page to
// tell whether more follow. idArg reads a cursor's id as the table compares it.
func feedQuery(q *bun.SelectQuery, table string, lq domain.ListQuery, idArg func(string) (any, bool)) (*bun.SelectQuery, error) {
	if lq.Customer != nil {
		q = q.Where(table+".customer_id = ?", int64(*lq.Customer))
	}
	for _, f := range slices.Sorted(maps.Keys(lq.Fields)) {
		q = q.Where(jsonField(q.DB(), f)+" = ?", lq.Fields[f])
	}
	if !lq.IncludeDeleted {
		q = q.Where(table + ".deleted_at IS NULL")
	}
	if lq.UpdatedSince != nil {
		q = q.Where(table+".updated_at >= ?", lq.UpdatedSince.UTC())
	}
	if lq.From > 0 {
		q = q.Where(table+".change >= ?", lq.From)
	}
	if lq.Below > 0 {
		q = q.Where(table+".change < ?", lq.Below)
	}
	if lq.After != nil {
		if lq.After.ID == "" {
			q = q.Where(table+".change > ?", lq.After.Change)
		} else {
			arg, ok := idArg(lq.After.ID)
			if !ok {
				return nil, domain.FieldErrors{{Field: "cursor", Message: "is not a cursor of this section"}}.Err()
			}
			q = q.Where("("+table+".change, "+table+".id) > (?, ?)", lq.After.Change, arg)
		}
	}
	// Order by the table's own id column, not a text alias of the select
	// list: the index serves that order, so a page deep in the feed costs
	// what the first one does.
	if !lq.Dump {
		q = settledChanges(q)
	}
	return q.OrderExpr(table + ".change, " + table + ".id").Limit(int64(lq.Limit + 1)), nil
}

// trimPage cuts the extra row of a feed query and tells where the page ended:
// at its last row, or where the request's cursor was when it is empty.
func trimPage[T any](rows []T, lq domain.ListQuery, cursorOf func(T) domain.Cursor) ([]T, domain.Cursor, bool) {
	var next domain.Cursor
	if lq.After != nil {
		next = *lq.After
	}
	more := len(rows) > lq.Limit
	if more {
		rows = rows[:lq.Limit]
	}
	if len(rows) > 0 {
		next = cursorOf(rows[len(rows)-1])
	}
	return rows, next, more
}
