package sqlstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
)

// A page of a feed is the one read that returns many rows: a full sync
// reads a million. Scanned through database/sql (a driver.Value per column,
// converted again into the destination) and bun's reflection, the rows
// cost 43 % of the server's CPU on a sync. On PostgreSQL, outside a
// transaction, the page's statement — built by bun like every other, under
// the tenancy rule — is run on the pool's pgx connection itself and each
// row's columns are scanned straight into their fields. In a transaction,
// and on SQLite, bun scans as before.
//
// A sync's page is a hot statement besides (prepared.go): when a list asks
// for nothing but a cursor, include_deleted and updated_since, its text
// holds the company as $1 and the values after it, and pgx prepares it
// once per connection (PostgreSQL then neither parses nor plans it again,
// and answers in binary). Its texts are bounded by construction: per
// section, three cursor forms (none, a change, a change and an id) × two
// of include_deleted × two of updated_since. Other filters (a customer, a
// payload field, a calendar) stay one-off texts, run in one round trip.

// preparedPage reports whether a page of lq is run as a prepared statement.
func preparedPage(ctx context.Context, db *bun.DB, lq domain.ListQuery) bool {
	if !hot(db) || lq.Customer != nil || len(lq.Fields) > 0 || lq.From > 0 || lq.Below > 0 || lq.Dump || lq.Calendar.Any() {
		return false
	}
	_, inTx := conn(ctx, db).(bun.Tx)
	return !inTx
}

// scanObjectRows appends the object rows q selects (tableOf's columns, in
// their order) to rows. With args, q is a prepared page of company (built
// from a tenant whose company is $1, by feedQuery with args), and its text
// ends with limit, the last placeholder.
func scanObjectRows(ctx context.Context, db *bun.DB, q *bun.SelectQuery, company domain.CompanyID, args *feedArgs, limit int,
	rows []objectRow) ([]objectRow, error) {
	if _, inTx := conn(ctx, db).(bun.Tx); args == nil && (inTx || db.Dialect().Name() != dialect.PG) {
		return rows, q.Scan(ctx, &rows)
	}
	text, err := q.AppendQuery(db.QueryGen(), nil)
	if err != nil {
		return rows, err
	}
	values := []any{pgx.QueryExecModeSimpleProtocol}
	if args != nil {
		text = append(append(text, " LIMIT "...), args.bind(int64(limit)).(bun.Safe)...)
		values = append([]any{pgx.QueryExecModeCacheStatement, pgtype.UUID{Bytes: company, Valid: true}}, args.values...)
	}
	ctx, done := observeHot(ctx, db, hotStatement{text: string(text), query: q})
	err = onPGX(ctx, db, func(c *pgx.Conn) error {
		rs, err := c.Query(ctx, string(text), values...)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var r objectRow
			if err := rs.Scan(&r.ID, &r.CustomerID, &r.Payload, &r.Version, &r.Change, &r.CreatedAt, &r.UpdatedAt, &r.DeletedAt); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return rs.Err()
	})
	done(err)
	return rows, err
}

// onPGX runs f on a connection of db's pool as pgx's own. A connection
// that f leaves broken is closed, and the pool drops it when it comes back
// (pgx's stdlib checks that before handing a connection out again).
func onPGX(ctx context.Context, db *bun.DB, f func(c *pgx.Conn) error) error {
	c, err := db.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	return c.Raw(func(dc any) error {
		pc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errNotPGX
		}
		return f(pc.Conn())
	})
}

var errNotPGX = errors.New("sqlstore: the PostgreSQL pool's connections are not pgx's")
