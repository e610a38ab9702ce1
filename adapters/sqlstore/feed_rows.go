package sqlstore

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	if !hot(db) || lq.Customer != nil || len(lq.Fields) > 0 || len(lq.Where) > 0 || lq.From > 0 || lq.Below > 0 || lq.Dump || lq.Calendar.Any() ||
		lq.Searches() {
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
		if binaryPage(rs.FieldDescriptions()) {
			rows, err = decodePage(rs, rows)
			return err
		}
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

// A prepared page comes back in binary (pgx asks for it where a type has
// one): its numbers and times are read straight from the wire, and its
// ids and payloads are copied into one buffer each for the whole page —
// a sync's page of 500 rows is then a handful of allocations, not
// thousands (the collector's work had been a fifth to a third of the
// server's CPU on a sync).

// binaryPage reports whether a page's columns are tableOf's in the wire
// formats decodePage reads: the id as text, the customer as int8 (or the
// customers' NULL, typed text), the payload as json, version and change
// as binary int8, the times as binary timestamptz.
func binaryPage(fds []pgconn.FieldDescription) bool {
	if len(fds) != 8 || fds[0].DataTypeOID != pgtype.TextOID || fds[2].DataTypeOID != pgtype.JSONOID {
		return false
	}
	if c := fds[1]; c.DataTypeOID != pgtype.TextOID && (c.DataTypeOID != pgtype.Int8OID || c.Format != pgtype.BinaryFormatCode) {
		return false
	}
	for i, oid := range []uint32{pgtype.Int8OID, pgtype.Int8OID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID} {
		if c := fds[3+i]; c.DataTypeOID != oid || c.Format != pgtype.BinaryFormatCode {
			return false
		}
	}
	return true
}

// decodePage appends a binaryPage's rows to rows. A payload's capacity ends
// where it does, so that an append to one never writes over the next.
func decodePage(rs pgx.Rows, rows []objectRow) ([]objectRow, error) {
	first := len(rows)
	var ids, payloads []byte
	var ends [][2]int // each row's end in ids and in payloads
	numbers := make([]int64, 0, cap(rows)-first)
	customers := rs.FieldDescriptions()[1].DataTypeOID == pgtype.Int8OID // else text: NULL in every row
	for rs.Next() {
		raw := rs.RawValues()
		var r objectRow
		if ids == nil { // the first row's sizes, for the page's rows to come: the buffers grow once
			rest := max(cap(rows)-len(rows), 1)
			ids, payloads = make([]byte, 0, rest*len(raw[0])), make([]byte, 0, rest*(len(raw[2])+len(raw[2])/4))
		}
		ids, payloads = append(ids, raw[0]...), append(payloads, raw[2]...)
		ends = append(ends, [2]int{len(ids), len(payloads)})
		if raw[1] != nil {
			if !customers {
				return rows, errWireFormat
			}
			n, err := wireInt8(raw[1])
			if err != nil {
				return rows, err
			}
			numbers = append(numbers, n)
			r.CustomerID = &numbers[len(numbers)-1]
		}
		var err error
		if r.Version, err = wireInt8(raw[3]); err != nil {
			return rows, err
		}
		if r.Change, err = wireInt8(raw[4]); err != nil {
			return rows, err
		}
		if r.CreatedAt, err = wireTime(raw[5]); err != nil {
			return rows, err
		}
		if r.UpdatedAt, err = wireTime(raw[6]); err != nil {
			return rows, err
		}
		if raw[7] != nil {
			deleted, err := wireTime(raw[7])
			if err != nil {
				return rows, err
			}
			r.DeletedAt = &deleted
		}
		rows = append(rows, r)
	}
	if err := rs.Err(); err != nil {
		return rows, err
	}
	wirePages.Add(1)
	allIDs := string(ids)
	var id, payload int
	for i, end := range ends {
		r := &rows[first+i]
		r.ID, r.Payload = allIDs[id:end[0]], payloads[payload:end[1]:end[1]]
		id, payload = end[0], end[1]
	}
	return rows, nil
}

// wireInt8 reads a binary int8.
func wireInt8(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, errWireFormat
	}
	return int64(binary.BigEndian.Uint64(b)), nil //nolint:gosec // int8 on the wire is two's complement: its bits are the value
}

// wireTime reads a binary timestamptz: microseconds since 2000-01-01 UTC.
func wireTime(b []byte) (time.Time, error) {
	us, err := wireInt8(b)
	if err != nil || us == math.MaxInt64 || us == math.MinInt64 { // ±infinity: no time of ours
		return time.Time{}, errWireFormat
	}
	return time.UnixMicro(us + postgresEpoch).UTC(), nil
}

// postgresEpoch is 2000-01-01 UTC in Unix microseconds.
const postgresEpoch = 946_684_800_000_000

// wirePages counts the pages decodePage read (a test's evidence that
// prepared pages take this way).
var wirePages atomic.Int64

var errWireFormat = errors.New("sqlstore: a page's value is not in the wire format its type has")

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
