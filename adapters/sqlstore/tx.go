package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
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
	return t.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return fn(context.WithValue(ctx, txKey{}, tx))
	})
}

// conn is the transaction of ctx if there is one, else the database: every
// repository method works inside and outside a transaction.
func conn(ctx context.Context, db *bun.DB) bun.IDB {
	if tx, ok := ctx.Value(txKey{}).(bun.Tx); ok {
		return tx
	}
	return db
}

// errDanglingReference is a foreign key the schema refused: the use cases
// check references first, so this is the schema's own tenancy guard speaking.
var errDanglingReference = &domain.ValidationError{Field: "customer_id", Message: "names no customer of this company"}

// translate maps driver errors to domain errors, once for all repositories.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return domain.ErrNotFound
	}
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		switch pgErr.Field('C') {
		case "23505":
			return domain.ErrConflict
		case "23503":
			return errDanglingReference
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
	}
	return err
}
