package sqlstore

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// Erasures is the bun ports.Erasures. Which tables hold a company's rows is
// read from the schema itself, not listed here: a table a later migration
// adds is erased, and counted by the proof, without a change of this file.
type Erasures struct{ db *bun.DB }

var _ ports.Erasures = (*Erasures)(nil)

// NewErasures returns the erasures of db.
func NewErasures(db *bun.DB) *Erasures { return &Erasures{db: db} }

type erasureRow struct {
	bun.BaseModel `bun:"table:company_erasures"`

	Company       uuid.UUID  `bun:"company,pk"`
	ErasedAt      time.Time  `bun:"erased_at"`
	ErasedBy      string     `bun:"erased_by"`
	ExportSHA256  *string    `bun:"export_sha256"`
	RowsErased    int64      `bun:"rows_erased"`
	AuditSeq      int64      `bun:"audit_seq"`
	AuditHash     string     `bun:"audit_hash"`
	BlobsErased   int64      `bun:"blobs_erased"`
	BlobsErasedAt *time.Time `bun:"blobs_erased_at"`
}

func (r erasureRow) toDomain() domain.Erasure {
	e := domain.Erasure{Company: domain.CompanyID(r.Company), At: r.ErasedAt.UTC(), By: r.ErasedBy, Rows: r.RowsErased,
		AuditSeq: r.AuditSeq, AuditHash: r.AuditHash, Blobs: r.BlobsErased, BlobsErasedAt: utcPtr(r.BlobsErasedAt)}
	if r.ExportSHA256 != nil {
		e.ExportSHA256 = *r.ExportSHA256
	}
	return e
}

// tenantTables answers the tables with a company_id column, each after
// every table whose foreign keys reference it: deleted in this order, no
// row is ever deleted before a row that references it.
func tenantTables(ctx context.Context, db bun.IDB) ([]string, error) {
	catalogue := func(query string, dest any) error {
		return acrossCompanies(db, "the schema walk reads the catalogue, which names no company").NewRaw(query).Scan(ctx, dest)
	}
	var tables []string
	var edges []struct{ Child, Parent string }
	if db.Dialect().Name() == dialect.SQLite {
		if err := catalogue(`SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
			WHERE m.type = 'table' AND p.name = 'company_id' ORDER BY m.name`, &tables); err != nil {
			return nil, err
		}
		if err := catalogue(`SELECT m.name AS child, f."table" AS parent FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
			WHERE m.type = 'table'`, &edges); err != nil {
			return nil, err
		}
	} else {
		if err := catalogue(`SELECT c.table_name FROM information_schema.columns c
			JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
			WHERE c.table_schema = current_schema() AND c.column_name = 'company_id' AND t.table_type = 'BASE TABLE'
			ORDER BY c.table_name`, &tables); err != nil {
			return nil, err
		}
		if err := catalogue(`SELECT ch.relname AS child, pa.relname AS parent FROM pg_constraint c
			JOIN pg_class ch ON ch.oid = c.conrelid JOIN pg_class pa ON pa.oid = c.confrelid
			JOIN pg_namespace n ON n.oid = ch.relnamespace
			WHERE c.contype = 'f' AND n.nspname = current_schema()`, &edges); err != nil {
			return nil, err
		}
	}
	// Kahn's order, children first: a table goes once no table left
	// references it (a table's references to itself are one statement's).
	referencedBy := map[string][]string{}
	for _, e := range edges {
		if e.Child != e.Parent && slices.Contains(tables, e.Child) {
			referencedBy[e.Parent] = append(referencedBy[e.Parent], e.Child)
		}
	}
	var order []string
	done := map[string]bool{}
	for len(order) < len(tables) {
		progressed := false
		for _, t := range tables {
			if done[t] || slices.ContainsFunc(referencedBy[t], func(child string) bool { return !done[child] }) {
				continue
			}
			order, done[t], progressed = append(order, t), true, true
		}
		if !progressed {
			return nil, fmt.Errorf("the foreign keys between the company's tables form a cycle: %v", tables)
		}
	}
	return order, nil
}

func (e *Erasures) EraseRows(ctx context.Context, rec domain.Erasure) (domain.Erasure, error) {
	err := inTx(ctx, e.db, func(ctx context.Context, tx bun.IDB) error {
		// The company's own row first, locked: a second erasure waits here,
		// then finds nothing to erase.
		own := tenantOf(tx, rec.Company)
		var company companyRow
		lock := own.SelectOwn(&company)
		if tx.Dialect().Name() == dialect.PG {
			lock = lock.For("UPDATE")
		}
		if err := lock.Scan(ctx); err != nil {
			return translate(err)
		}
		var head auditHeadRow
		switch err := own.SelectModel(&head).Scan(ctx); {
		case err == nil:
			rec.AuditSeq, rec.AuditHash = head.Seq, hex.EncodeToString(head.Hash)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		tables, err := tenantTables(ctx, tx)
		if err != nil {
			return err
		}
		rec.Rows = 0
		for _, table := range tables {
			res, err := own.Delete(table).Exec(ctx)
			if err != nil {
				return fmt.Errorf("erase %s: %w", table, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			rec.Rows += n
		}
		res, err := own.DeleteOwn().Exec(ctx)
		if err := affectedOne(res, err); err != nil {
			return err
		}
		rec.Rows++
		row := erasureRow{Company: uuid.UUID(rec.Company), ErasedAt: rec.At.UTC(), ErasedBy: rec.By, ExportSHA256: optional(rec.ExportSHA256),
			RowsErased: rec.Rows, AuditSeq: rec.AuditSeq, AuditHash: rec.AuditHash}
		_, err = tx.NewInsert().Model(&row).Exec(ctx)
		return translate(err)
	})
	if err != nil {
		return domain.Erasure{}, translate(err)
	}
	return rec, nil
}

func (e *Erasures) Get(ctx context.Context, company domain.CompanyID) (domain.Erasure, error) {
	var row erasureRow
	err := acrossCompanies(conn(ctx, e.db), "an erasure record outlives its company: it is found by the erased company's id").
		NewSelect().Model(&row).Where("company = ?", uuid.UUID(company)).Scan(ctx)
	if err != nil {
		return domain.Erasure{}, translate(err)
	}
	return row.toDomain(), nil
}

func (e *Erasures) BlobsErased(ctx context.Context, company domain.CompanyID, n int64, at time.Time) error {
	q := acrossCompanies(conn(ctx, e.db), "an erasure record outlives its company: it is found by the erased company's id").
		NewUpdate().Model((*erasureRow)(nil)).Set("blobs_erased = blobs_erased + ?", n).Where("company = ?", uuid.UUID(company))
	if !at.IsZero() {
		q = q.Set("blobs_erased_at = ?", at.UTC())
	}
	return affectedOne(q.Exec(ctx))
}

func (e *Erasures) Remaining(ctx context.Context, company domain.CompanyID) (map[string]int64, error) {
	db := conn(ctx, e.db)
	tables, err := tenantTables(ctx, db)
	if err != nil {
		return nil, err
	}
	own := tenantOf(db, company)
	left := make(map[string]int64, len(tables)+1)
	for _, table := range tables {
		n, err := own.Select(table).Count(ctx)
		if err != nil {
			return nil, fmt.Errorf("count %s: %w", table, err)
		}
		left[table] = int64(n)
	}
	n, err := own.SelectOwn((*companyRow)(nil)).Count(ctx)
	if err != nil {
		return nil, err
	}
	left["companies"] = int64(n)
	return left, nil
}
