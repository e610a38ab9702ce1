package sqlstore

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
)

// feedQuery turns a company-scoped select of table into one page of its
// feed (docs/contract.md §4): the filters, the keyset after the cursor, only
// settled changes, in (change, id) order, one row more than the page to
// tell whether more follow. idArg reads a cursor's id as the table compares
// it. With args, the values are placeholders after the company's $1 and
// args collects them; scanObjectRows then ends the text with the limit.
func feedQuery(q *bun.SelectQuery, table string, lq domain.ListQuery, idArg func(string) (any, bool), args *feedArgs) (*bun.SelectQuery, error) {
	if lq.Customer != nil {
		q = q.Where(table+".customer_id = ?", args.bind(int64(*lq.Customer)))
	}
	for _, f := range slices.Sorted(maps.Keys(lq.Fields)) {
		q = q.Where(jsonField(q.DB(), f)+" = ?", args.bind(lq.Fields[f]))
	}
	if !lq.IncludeDeleted {
		q = q.Where(table + ".deleted_at IS NULL")
	}
	if lq.UpdatedSince != nil {
		q = q.Where(table+".updated_at >= ?", args.bind(lq.UpdatedSince.UTC()))
	}
	if lq.From > 0 {
		q = q.Where(table+".change >= ?", args.bind(lq.From))
	}
	if lq.Below > 0 {
		q = q.Where(table+".change < ?", args.bind(lq.Below))
	}
	if len(lq.Sort) > 0 {
		return sortedPage(q, table, lq, idArg)
	}
	if lq.After != nil {
		if lq.After.ID == "" {
			q = q.Where(table+".change > ?", args.bind(lq.After.Change))
		} else {
			arg, ok := idArg(lq.After.ID)
			if !ok {
				return nil, domain.FieldErrors{{Field: "cursor", Message: "is not a cursor of this section"}}.Err()
			}
			q = q.Where("("+table+".change, "+table+".id) > (?, ?)", args.bind(lq.After.Change), args.bind(arg))
		}
	}
	// Order by the table's own id column, not a text alias of the select
	// list: the index serves that order, so a page deep in the feed costs
	// what the first one does.
	// A search answers what is committed now, however the feed holds back
	// (docs/contract.md §15): whoever asks whether a caller is a patient
	// must find the one written a moment ago.
	if !lq.Dump && len(lq.Search) == 0 {
		q = settledChanges(q)
	}
	q = q.OrderExpr(table + ".change, " + table + ".id")
	if args != nil { // bun writes a limit only as a number: scanObjectRows ends the text with its placeholder
		return q, nil
	}
	return q.Limit(int64(lq.Limit + 1)), nil
}

// feedArgs are a prepared page's values, $2 on ($1 is the company's).
// A nil *feedArgs writes each value into the text.
type feedArgs struct{ values []any }

func (a *feedArgs) bind(v any) any {
	if a == nil {
		return v
	}
	a.values = append(a.values, v)
	return bun.Safe("$" + strconv.Itoa(len(a.values)+1))
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

// sortKeys are the expressions a sorted search orders by (domain.SortBy):
// the index's columns, compared bytewise on both backends (COLLATE "C",
// SQLite's BINARY) as domain.SortKeysOf spells a row's keys; a missing
// birth date is "", before every date.
var sortKeys = map[domain.SortKey]string{
	domain.SortFamily: "customers.search_family", domain.SortGiven: "customers.search_given",
	domain.SortBirthDate: "COALESCE(customers.birth_date, '')", domain.SortLastUpdated: "customers.change",
}

// sortedPage orders a search by its keys, then the customer's number in
// the direction of the last key, and starts after the cursor's keys and
// number: a keyset over them (docs/contract.md §15), of what is committed
// now (a search: not held back as the feed is). When every key goes one
// way the keyset is one row comparison, which an index of the keys
// (customers_sort_name_idx for last and first name) reads as a range; keys
// that go both ways spell it out: k1 after v1, or k1 = v1 and (k2 after
// v2, or … the number after).
func sortedPage(q *bun.SelectQuery, table string, lq domain.ListQuery, idArg func(string) (any, bool)) (*bun.SelectQuery, error) {
	last := lq.Sort[len(lq.Sort)-1].Desc
	direction := func(desc bool) (after, order string) {
		if desc {
			return "<", " DESC"
		}
		return ">", ""
	}
	if lq.After != nil {
		id, ok := idArg(lq.After.ID)
		if !ok || len(lq.After.Keys) != len(lq.Sort) {
			return nil, domain.FieldErrors{{Field: "cursor", Message: "is not a cursor of this section"}}.Err()
		}
		keys, values := make([]string, len(lq.Sort)), make([]any, len(lq.Sort))
		uniform := true
		for i, s := range lq.Sort {
			keys[i], values[i] = sortKeys[s.Key], lq.After.Keys[i]
			uniform = uniform && s.Desc == last
			if s.Key == domain.SortLastUpdated {
				n, err := strconv.ParseInt(lq.After.Keys[i], 10, 64)
				if err != nil {
					return nil, domain.FieldErrors{{Field: "cursor", Message: "is not a cursor of this section"}}.Err()
				}
				values[i] = n
			}
		}
		after, _ := direction(last)
		if uniform {
			q = q.Where("("+strings.Join(keys, ", ")+", "+table+".id) "+after+" (?)", bun.List(append(values, id)))
		} else {
			text, args := table+".id "+after+" ?", []any{id}
			for i := len(keys) - 1; i >= 0; i-- {
				after, _ := direction(lq.Sort[i].Desc)
				text = "(" + keys[i] + " " + after + " ? OR (" + keys[i] + " = ? AND " + text + "))"
				args = append([]any{values[i], values[i]}, args...)
			}
			q = q.Where(text, args...)
		}
	}
	for _, s := range lq.Sort {
		_, order := direction(s.Desc)
		q = q.OrderExpr(sortKeys[s.Key] + order)
	}
	_, order := direction(last)
	return q.OrderExpr(table + ".id" + order).Limit(int64(lq.Limit + 1)), nil
}
