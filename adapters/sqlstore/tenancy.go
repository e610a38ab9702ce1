package sqlstore

import (
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
)

// tenant is one company's part of the database. Every select, update and
// delete of a table that holds company_id starts here, so that no query can
// leave the company out (docs/ARCHITECTURE.md, "Tenancy"); tenancy_test.go
// refuses a query built any other way. Inserts carry company_id in their
// rows, and the composite foreign keys refuse a row that names another
// company's customer or record.
type tenant struct {
	db bun.IDB
	id uuid.UUID
	// placeholder, when set, stands for the company in the statement text:
	// a hot statement is built once with it and run with the company as
	// its first argument (prepared.go).
	placeholder bun.Safe
}

func tenantOf(db bun.IDB, company domain.CompanyID) tenant {
	return tenant{db: db, id: uuid.UUID(company)}
}

// hotTenant is the tenant of a hot statement (prepared.go): its company is
// the placeholder $1, which the runner — scanHot, or scanObjectRows for a
// prepared page — fills with the request's company.
func hotTenant(db bun.IDB) tenant { return tenant{db: db, placeholder: "$1"} }

// company is the company as a query's argument.
func (t tenant) company() any {
	if t.placeholder != "" {
		return t.placeholder
	}
	return t.id
}

// Select reads the company's rows of table.
func (t tenant) Select(table string) *bun.SelectQuery {
	return t.db.NewSelect().TableExpr(table).Where(table+".company_id = ?", t.company())
}

// SelectModel reads the company's rows of the table of model.
func (t tenant) SelectModel(model any) *bun.SelectQuery {
	return t.db.NewSelect().Model(model).Where("?TableAlias.company_id = ?", t.company())
}

// SelectByKey reads the company's rows of table by primary key. The company
// is compared as text, so that the primary key is the only index the planner
// can use: inside an import's one transaction the table grows far past its
// statistics, and an index led by the company would be scanned whole for
// every batch (quadratic: 160 ms a batch at 200,000 rows).
func (t tenant) SelectByKey(table string) *bun.SelectQuery {
	return t.db.NewSelect().TableExpr(table).Where("CAST("+table+".company_id AS TEXT) = ?", t.id.String())
}

// Update changes the company's rows of table.
func (t tenant) Update(table string) *bun.UpdateQuery {
	return t.db.NewUpdate().TableExpr(table).Where(table+".company_id = ?", t.company())
}

// UpdateModel changes the company's rows of the table of model.
func (t tenant) UpdateModel(model any) *bun.UpdateQuery {
	return t.db.NewUpdate().Model(model).Where("?TableAlias.company_id = ?", t.company())
}

// Delete removes the company's rows of table.
func (t tenant) Delete(table string) *bun.DeleteQuery {
	return t.db.NewDelete().TableExpr(table).Where(table+".company_id = ?", t.company())
}

// DeleteModel removes the company's rows of the table of model.
func (t tenant) DeleteModel(model any) *bun.DeleteQuery {
	return t.db.NewDelete().Model(model).Where("?TableAlias.company_id = ?", t.company())
}

// SelectOwn reads the company's own row of the companies table into model.
func (t tenant) SelectOwn(model any) *bun.SelectQuery {
	return t.db.NewSelect().Model(model).Where("?TableAlias.id = ?", t.company())
}

// UpdateOwn changes the company's own row of the companies table.
func (t tenant) UpdateOwn() *bun.UpdateQuery {
	return t.db.NewUpdate().Model((*companyRow)(nil)).Where("?TableAlias.id = ?", t.company())
}

// DeleteOwn deletes the company's own row of the companies table: the
// erasure's last statement, once no other row names the company.
func (t tenant) DeleteOwn() *bun.DeleteQuery {
	return t.db.NewDelete().Model((*companyRow)(nil)).Where("?TableAlias.id = ?", t.company())
}

// Raw is a statement of the company's that the builders cannot write (a
// chain of data-modifying CTEs): its arguments are indexed, ?0 being the
// company, and every table it reads or changes must be limited by ?0.
func (t tenant) Raw(query string, args ...any) *bun.RawQuery {
	return t.db.NewRaw(query, append([]any{t.company()}, args...)...)
}

// acrossCompanies is the one way around tenant: a query that must not be
// limited to one company, for the reason given (the change clock, a client
// found by its id before its company is known, the list of companies).
// tenancy_test.go holds the list of reasons it accepts.
func acrossCompanies(db bun.IDB, reason string) bun.IDB {
	_ = reason
	return db
}
