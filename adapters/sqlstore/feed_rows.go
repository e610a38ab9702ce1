package sqlstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// A page of a feed is the one read that returns many rows: a full sync
// reads a million. Scanned through database/sql (a driver.Value per column,
// converted again into the destination) and bun's reflection, the rows
// cost 43 % of the server's CPU on a sync. On PostgreSQL, outside a
// transaction, the page's statement — built by bun like every other, under
// the tenancy rule — is run on the pool's pgx connection itself and each
// row's columns are scanned straight into their fields (pgx's own
// conversions, the text of the simple protocol). In a transaction, and on
// SQLite, bun scans as before.

// scanObjectRows appends the object rows q selects (tableOf's columns, in
// their order) to rows.
func scanObjectRows(ctx context.Context, db *bun.DB, q *bun.SelectQuery, rows []objectRow) ([]objectRow, error) {
	if _, inTx := conn(ctx, db).(bun.Tx); inTx || db.Dialect().Name() != dialect.PG {
		return rows, q.Scan(ctx, &rows)
	}
	text, err := q.AppendQuery(db.QueryGen(), nil)
	if err != nil {
		return rows, err
	}
	ctx, done := observeHot(ctx, db, hotStatement{text: string(text), query: q})
	err = onPGX(ctx, db, func(c *pgx.Conn) error {
		rs, err := c.Query(ctx, string(text), pgx.QueryExecModeSimpleProtocol)
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
