package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
)

// Hot statements (docs/contract.md §5): the few statements nearly every
// request runs — a company by id, an object of a section by id, the audit
// trail's append — are sent to PostgreSQL as prepared statements with
// their arguments apart, so that it parses and plans each once per
// connection instead of once per request. Everything else keeps the query
// builder, which writes its arguments into the text (sent in one round
// trip, never cached).
//
// A hot statement is built by the same builders as the rest, from a tenant
// whose company is the placeholder $1 (tenancy.go): it cannot leave the
// company out any more than they can. Its text is built once per key (a
// section's statement per section), so the texts a connection prepares
// are bounded by the keys: pgx's statement cache of 512 never evicts.
// SQLite has no parse cost worth a second path: it runs the builder's.

// PrepareHot turns the hot statements on (the default) or off; the
// benchmark compares the two in one run (PRAXIS_DB_PREPARE_HOT).
var PrepareHot atomic.Bool

func init() { PrepareHot.Store(true) }

// hotQuery is what builds a hot statement: a select of the tenant's, or
// its raw statement (a function of the company's).
type hotQuery interface {
	bun.Query
	String() string
}

// hotStatement is a statement's text and the query that built it (its
// table and text for the span).
type hotStatement struct {
	text  string
	query bun.Query
}

// hotBuilt holds each hot statement built, by key (a hotStatement): read
// by every request without a lock, written once per key.
var hotBuilt sync.Map

// hot reports whether db runs hot statements.
func hot(db *bun.DB) bool { return PrepareHot.Load() && db.Dialect().Name() == dialect.PG }

// scanHot runs the hot statement key of company — built the first time by
// build, from a tenant whose company is $1 and with args as $2, $3, … —
// and scans its one row into dest: sql.ErrNoRows when there is none.
func scanHot(ctx context.Context, db *bun.DB, key string, build func(tn tenant) hotQuery, company domain.CompanyID, args []any, dest ...any) error {
	built, ok := hotBuilt.Load(key)
	if !ok {
		q := build(hotTenant(db))
		built, _ = hotBuilt.LoadOrStore(key, hotStatement{text: q.String(), query: q})
	}
	st := built.(hotStatement)

	args = append([]any{pgx.QueryExecModeCacheStatement, pgtype.UUID{Bytes: company, Valid: true}}, args...)
	ctx, done := observeHot(ctx, db, st)
	var err error
	if tx, ok := conn(ctx, db).(bun.Tx); ok {
		var rows *sql.Rows
		if rows, err = tx.Tx.QueryContext(ctx, st.text, args...); err == nil {
			err = scanOne(ctx, db, rows, dest...)
		}
	} else {
		// Outside a transaction, on the pool's pgx connection itself, like
		// a feed's page (feed_rows.go): database/sql's conversions and
		// bun's reflective scan were an eighth of a GET's server CPU.
		err = onPGX(ctx, db, func(c *pgx.Conn) error {
			rows, err := c.Query(ctx, st.text, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			if !rows.Next() {
				if err := rows.Err(); err != nil {
					return err
				}
				return sql.ErrNoRows
			}
			if err := scanColumns(rows, dest...); err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		})
	}
	done(err)
	return err
}

// scanColumns scans a row into dest: into the fields of a struct its
// columns name (by their bun tags), or into dest's values in order.
func scanColumns(rows pgx.Rows, dest ...any) error {
	if len(dest) != 1 {
		return rows.Scan(dest...)
	}
	v := reflect.ValueOf(dest[0])
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return rows.Scan(dest...)
	}
	fields := columnFields(v.Elem().Type())
	if len(fields) == 0 { // a struct that is one value (a time.Time)
		return rows.Scan(dest...)
	}
	into := make([]any, len(rows.FieldDescriptions()))
	for i, fd := range rows.FieldDescriptions() {
		f, ok := fields[fd.Name]
		if !ok {
			return fmt.Errorf("sqlstore: column %q is no field of %s", fd.Name, v.Elem().Type())
		}
		into[i] = v.Elem().FieldByIndex(f).Addr().Interface()
	}
	return rows.Scan(into...)
}

// columnFieldsOf caches, by struct type, each bun-tagged field's index by its column.
var columnFieldsOf sync.Map // reflect.Type → map[string][]int

func columnFields(t reflect.Type) map[string][]int {
	if m, ok := columnFieldsOf.Load(t); ok {
		return m.(map[string][]int)
	}
	m := map[string][]int{}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("bun"), ",")
		if name != "" && f.IsExported() && !f.Anonymous {
			m[name] = f.Index
		}
	}
	columnFieldsOf.Store(t, m)
	return m
}

func scanOne(ctx context.Context, db *bun.DB, rows *sql.Rows, dest ...any) error {
	defer func() { _ = rows.Close() }()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := db.ScanRow(ctx, rows, dest...); err != nil {
		return err
	}
	return rows.Close()
}

// queryHooks are the query hooks Instrument added, by the database they
// were added to: a hot statement runs beside bun and reports to them itself.
var queryHooks sync.Map // *bun.DB → *queryHook

func observeHot(ctx context.Context, db *bun.DB, st hotStatement) (context.Context, func(error)) {
	h, ok := queryHooks.Load(db)
	if !ok {
		return ctx, func(error) {}
	}
	hook := h.(*queryHook)
	event := &bun.QueryEvent{DB: db, IQuery: st.query, Query: st.text, QueryTemplate: st.text, StartTime: time.Now()}
	ctx = hook.BeforeQuery(ctx, event)
	return ctx, func(err error) {
		event.Err = err
		hook.AfterQuery(ctx, event)
	}
}
