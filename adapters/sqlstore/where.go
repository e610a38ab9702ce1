package sqlstore

import (
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
)

// ListQuery.Where on the records and customers tables: conditions of the
// FHIR searches that are no patient search (the files' are in
// file_repository.go).

// recordWhere narrows a feed query of table (records, or customers: their
// last change only) to the objects that meet every condition: on their
// observed rows (a code and a date held by the same row), their payload's
// fields, their creation, their last change, their ids.
func recordWhere(q *bun.SelectQuery, tn tenant, table string, where []domain.Condition) (*bun.SelectQuery, error) {
	sub := tn.Select("record_observed").Column("record_id")
	observed := false
	for _, c := range where {
		switch {
		case c.Field == domain.SearchCode && c.Op == domain.OpEqual:
			if len(c.Values) == 0 {
				return q.Where("1 = 0"), nil
			}
			sub, observed = sub.Where("code IN (?)", bun.List(c.Values)), true
		case c.Field == domain.SearchObserved && c.Op == domain.OpInstants:
			sub, observed = observedRanges(sub, "observed_from", "observed_until", c.Instants), true
		case c.Field == domain.SearchPayload && c.Op == domain.OpEqual:
			text, args := payloadEqual(q.DB(), c)
			q = q.Where(text, args...)
		case c.Field == domain.SearchAny:
			q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
				q = q.Where("1 = 0")
				for _, a := range c.Any {
					if a.Field == domain.SearchPayload && a.Op == domain.OpEqual {
						text, args := payloadEqual(q.DB(), a)
						q = q.WhereOr(text, args...)
					}
				}
				return q
			})
		case c.Field == domain.SearchPayload && c.Op == domain.OpInstants:
			from, until := payloadSpan(q.DB(), c.Path)
			q = observedRanges(q, from, until, c.Instants)
		case c.Field == domain.SearchStored && c.Op == domain.OpInstants:
			q = instantPoints(q, table+".created_at", c.Instants)
		case c.Field == domain.SearchUpdated && c.Op == domain.OpInstants:
			from, until := secondSpan(q.DB(), table+".updated_at")
			q = observedRanges(q, from, until, c.Instants)
		case c.Field == domain.SearchID && c.Op == domain.OpEqual:
			ids := validIDs(c.Values)
			if len(ids) == 0 {
				return q.Where("1 = 0"), nil
			}
			q = q.Where(table+".id IN (?)", bun.List(ids))
		default:
			return q, fmt.Errorf("records have no condition %d on %q", c.Op, c.Field)
		}
	}
	if observed {
		q = q.Where(table+".id IN (?)", sub)
	}
	return q, nil
}

// payloadEqual is the test of a payload field against a condition's
// values: its text (a boolean true or false on both backends), or the
// condition's default where the field is absent; no value matches nothing.
func payloadEqual(db bun.IDB, c domain.Condition) (string, []any) {
	if len(c.Values) == 0 {
		return "1 = 0", nil
	}
	field := jsonField(db, c.Path)
	if db.Dialect().Name() != dialect.PG { // json_extract answers 1 and 0 for booleans
		field = "CASE json_type(payload, '$." + c.Path + "') WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE " + field + " END"
	}
	if c.Default != "" {
		return "COALESCE(" + field + ", ?) IN (?)", []any{c.Default, bun.List(c.Values)}
	}
	return field + " IN (?)", []any{bun.List(c.Values)}
}

// payloadSpan are SQL expressions of the range [from, until) in Unix
// milliseconds a payload field's date (YYYY-MM-DD: its day, UTC) or
// instant (RFC 3339 at the second, domain.DateTime: its second) spells;
// NULL where the field is absent. The field is ours, never a client's.
func payloadSpan(db bun.IDB, path string) (from, until string) {
	field := jsonField(db, path)
	length := "CASE WHEN length(" + field + ") = 10 THEN 86400000 ELSE 1000 END"
	if db.Dialect().Name() == dialect.PG {
		from = "(extract(epoch FROM (CASE WHEN length(" + field + ") = 10 THEN " + field + " || 'T00:00:00Z' ELSE " + field + " END)::timestamptz) * 1000)::bigint"
	} else {
		from = "(unixepoch(" + field + ") * 1000)"
	}
	return from, "(" + from + " + " + length + ")"
}

// instantPoints narrows q to the rows whose timestamp column, an instant
// taken as a point, meets any of values (rangeTest); no value matches
// nothing.
func instantPoints(q *bun.SelectQuery, col string, values []domain.InstantRange) *bun.SelectQuery {
	if len(values) == 0 {
		return q.Where("1 = 0")
	}
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		for _, r := range values {
			text, args := rangeTest(col, r.Prefix, r.From.UTC(), r.To.UTC())
			q = q.WhereOr(text, args...)
		}
		return q
	})
}

// secondSpan are SQL expressions of the range [from, until) in Unix
// milliseconds of the second a timestamp column's value lies in: the
// instant as the answers spell it (RFC 3339 at the second).
func secondSpan(db bun.IDB, col string) (from, until string) {
	if db.Dialect().Name() == dialect.PG {
		from = "(floor(extract(epoch FROM " + col + ")) * 1000)::bigint"
	} else {
		from = "(unixepoch(" + col + ") * 1000)"
	}
	return from, "(" + from + " + 1000)"
}

// observedRanges are alternatives of a date search value against a stored
// range [from, until) in Unix milliseconds, by FHIR's prefixes (R4
// §3.1.1.4.2: eq the range within the value's, gt ending after it, ge
// ending after its start, lt starting before it, le starting before its
// end, ne not within it). An unknown range (NULL) meets none; no value
// matches nothing.
func observedRanges(q *bun.SelectQuery, from, until string, values []domain.InstantRange) *bun.SelectQuery {
	if len(values) == 0 {
		return q.Where("1 = 0")
	}
	return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		for _, v := range values {
			f, t := v.From.UnixMilli(), v.To.UnixMilli()
			switch v.Prefix {
			case "gt":
				q = q.WhereOr(until+" > ?", t)
			case "ge":
				q = q.WhereOr(until+" > ?", f)
			case "lt":
				q = q.WhereOr(from+" < ?", f)
			case "le":
				q = q.WhereOr(from+" < ?", t)
			case "ne":
				q = q.WhereOr("("+from+" < ? OR "+until+" > ?)", f, t)
			default:
				q = q.WhereOr("("+from+" >= ? AND "+until+" <= ?)", f, t)
			}
		}
		return q
	})
}
