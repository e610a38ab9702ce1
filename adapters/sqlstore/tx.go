package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

type txKey struct{}

// Transactor runs functions in a transaction carried by the context.
type Transactor struct{ db *bun.DB }

var _ ports.Transactor = (*Transactor)(nil)

// NewTransactor returns the ports.Transactor of db.
func NewTransactor(db *bun.DB) *Transactor { return &Transactor{db: db} }

// InTx joins a transaction already in ctx, or begins one.
func (t *Transactor) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return fn(ctx)
	}
	return translate(runInTx(ctx, t.db, func(ctx context.Context, tx bun.Tx) error {
		return fn(context.WithValue(ctx, txKey{}, tx))
	}))
}

// inTx runs fn in the transaction of ctx if there is one, else in a
// transaction of its own: a store's multi-statement write joins the
// caller's transaction (SQLite has one connection: a second transaction
// beside the caller's would wait for it forever).
func inTx(ctx context.Context, db *bun.DB, fn func(ctx context.Context, tx bun.IDB) error) error {
	if tx, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return fn(ctx, tx)
	}
	return runInTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		return fn(context.WithValue(ctx, txKey{}, tx), tx)
	})
}

// commitWait bounds a COMMIT: the request's deadline does not (below).
const commitWait = 5 * time.Second

// runInTx runs fn in a transaction whose COMMIT the request cannot cancel
// (docs/contract.md §5, "Failover"). The statements in fn run under ctx, the
// request's deadline; the transaction itself is begun on a context without
// it, because the driver sends COMMIT (and database/sql decides between
// commit and rollback) on the context the transaction began with: a
// deadline or a client gone at that moment would leave the write's fate
// unknown for a reason of our own. Once fn has succeeded the COMMIT is sent
// and waited for, at most commitWait; a connection lost or that bound
// passed then is an outcome unknown, answered 503 (the client's retry with
// its Idempotency-Key finds the truth: its key was written in the same
// transaction, or nothing was).
func runInTx(ctx context.Context, db *bun.DB, fn func(ctx context.Context, tx bun.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err // nothing begun for a request that has ended
	}
	txCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	// BEGIN is bounded by the request's deadline like any statement: the
	// deadline cancels the transaction's context until BEGIN has returned.
	stop := context.AfterFunc(ctx, cancel)
	tx, err := db.BeginTx(txCtx, nil)
	if !stop() { // the deadline fell during BEGIN: the transaction is ended
		if err == nil {
			_ = tx.Rollback()
		}
		return errors.Join(err, ctx.Err())
	}
	if err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	bound := time.AfterFunc(commitWait, cancel)
	defer bound.Stop()
	err = tx.Commit()
	if err != nil && (txCtx.Err() != nil || lostConnection(err)) {
		return errCommitUnknown{err}
	}
	return err
}

// errCommitUnknown is a COMMIT that was not answered (the connection lost,
// or commitWait passed): the write may or may not be in the database. A
// COMMIT the database refused (a deferred constraint) is its own error.
type errCommitUnknown struct{ err error }

func (e errCommitUnknown) Error() string { return "commit outcome unknown: " + e.err.Error() }
func (e errCommitUnknown) Unwrap() error { return e.err }

// conn is the transaction of ctx if there is one, else the database: every
// repository method works inside and outside a transaction.
func conn(ctx context.Context, db *bun.DB) bun.IDB {
	if tx, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return tx
	}
	return db
}

// lostConnection reports a database that could not be reached or went away
// mid-request, or that refuses work for now (PostgreSQL classes 08, 53, 57P):
// the request may succeed later, so it is answered 503, not 500.
func lostConnection(err error) bool {
	var netErr net.Error
	var pgErr *pgconn.PgError
	var unknown errCommitUnknown
	switch {
	case errors.As(err, &unknown):
		return true
	case errors.As(err, &pgErr):
		// 25006: a write on a server that became a standby under us.
		code := pgErr.Code
		return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53") || strings.HasPrefix(code, "57P") || code == "25006"
	case pgconn.Timeout(err), pgconn.SafeToRetry(err):
		return true
	case errors.As(err, &netErr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return true
	}
	return false
}

// errDanglingReference is a foreign key the schema refused: the use cases
// check references first, so this is the schema's own tenancy guard speaking.
var errDanglingReference = &domain.ValidationError{Field: "customer_id", Message: "names no customer of this company"}

// translate maps driver errors to domain errors, once for all repositories.
func translate(err error) error {
	if err == nil || errors.Is(err, domain.ErrUnavailable) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return domain.ErrNotFound
	}
	if lostConnection(err) {
		return domain.Unavailable(err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return domain.ErrConflict
		case "23503":
			return errDanglingReference
		case "23P01": // exclusion_violation: only the calendar's no-double-booking constraint
			return domain.ErrSlotUnavailable
		}
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return domain.ErrConflict
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return errDanglingReference
		}
		switch liteErr.Code() & 0xff { // primary result codes
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			return domain.Unavailable(err)
		}
	}
	return err
}
