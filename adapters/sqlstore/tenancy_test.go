package sqlstore

import (
	"database/sql"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/praxis-health/praxis/domain"
)

// The queries that may reach past one company, and why. A new one is a
// reviewed change of this list, not a line slipped into a repository.
var acceptedAcrossCompanies = []string{
	"the change clock is one for all companies",
	"the customer id sequence is one for all companies",
	"an advisory lock names no table",
	"a token request names its client before its company is known",
	"a client is revoked by its id, which is unique across companies",
	"an upload tells another company's customer from none",
	"an operator's resource names its company by reference",
	"the list of companies",
	"the operator lists every company's deprecated calls",
	"the dispatcher leases due endpoints of every company",
	"a setting of the transaction names no table",
	"the delivery log is swept for every company at once",
	"single sign-on names a person by a verified address before the company is known",
	"the metrics count the endpoints of every company",
	"the metrics read how far the sync feed is held back, one horizon for all companies",
	"ended tokens and sessions are one list for all companies, named by digests alone",
	"a replica takes the oldest waiting export of any company",
	"every replica sweeps the expired exports of every company",
	"the search index's backfill reads every company's unindexed customers",
	"the schema walk reads the catalogue, which names no company",
	"the planner's statistics are one for all companies",
	"an erasure record outlives its company: it is found by the erased company's id",
}

// builders start a query that reads, changes or deletes rows. Inserts are
// not among them: their rows carry company_id, and the composite foreign
// keys refuse one that names another company's customer or record.
var builders = []string{"NewSelect", "NewUpdate", "NewDelete", "NewRaw", "NewMerge", "QueryContext", "QueryRowContext", "ExecContext"}

// TestEveryQueryStartsFromTheCompany reads the store's source: a select,
// update, delete or raw statement starts from tenantOf (tenancy.go), or from
// acrossCompanies with one of the accepted reasons.
func TestEveryQueryStartsFromTheCompany(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	scoped, across, hotRunner := 0, map[string]bool{}, 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "tenancy.go" {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			// scanHot and scanObjectRows run statements built from
			// hotTenant, whose company is $1, and pass the company as $1:
			// TestHotStatementsNameTheCompany reads every text prepared.
			if fn, ok := n.(*ast.FuncDecl); ok && (name == "prepared.go" && fn.Name.Name == "scanHot" || name == "feed_rows.go" && fn.Name.Name == "scanObjectRows") {
				hotRunner++
				return false
			}
			// A tenant is made by tenancy.go's functions only.
			if lit, ok := n.(*ast.CompositeLit); ok {
				if id, ok := lit.Type.(*ast.Ident); ok && id.Name == "tenant" {
					t.Errorf("%s: a tenant made by hand: take it from tenantOf (or hotTenant for a hot statement)", fset.Position(lit.Pos()))
				}
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if fn, ok := call.Fun.(*ast.Ident); ok && fn.Name == "tenantOf" {
				scoped++
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !slices.Contains(builders, sel.Sel.Name) {
				return true
			}
			reason, ok := acrossCompaniesReason(sel.X)
			switch {
			case !ok:
				t.Errorf("%s: %s starts a query without the company: start it from tenantOf(db, company)", fset.Position(call.Pos()), sel.Sel.Name)
			case !slices.Contains(acceptedAcrossCompanies, reason):
				t.Errorf("%s: acrossCompanies for a reason this test does not accept: %q", fset.Position(call.Pos()), reason)
			default:
				across[reason] = true
			}
			return true
		})
	}
	if scoped < 20 || hotRunner != 2 {
		t.Fatalf("found %d queries from tenantOf and %d runners of hot statements: the test reads the wrong files", scoped, hotRunner)
	}
	for _, reason := range acceptedAcrossCompanies {
		if !across[reason] {
			t.Errorf("accepted reason %q is used nowhere: take it off the list", reason)
		}
	}
}

// acrossCompaniesReason tells whether x is acrossCompanies(db, "reason").
func acrossCompaniesReason(x ast.Expr) (string, bool) {
	call, ok := x.(*ast.CallExpr)
	if !ok || len(call.Args) != 2 {
		return "", false
	}
	if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "acrossCompanies" {
		return "", false
	}
	lit, ok := call.Args[1].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	reason, err := strconv.Unquote(lit.Value)
	return reason, err == nil
}

// TestTenantQueriesNameTheCompany checks what tenantOf builds: each query
// holds the company's condition on the table it reads or changes.
func TestTenantQueriesNameTheCompany(t *testing.T) {
	sqlite, err := sql.Open("sqlite", ":memory:") // opened lazily: the test only writes queries
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []*bun.DB{
		bun.NewDB(sql.OpenDB(pgdriver.NewConnector()), pgdialect.New()),
		bun.NewDB(sqlite, sqlitedialect.New()),
	} {
		tn := tenantOf(db, domain.CompanyID{1})
		for name, query := range map[string]interface{ String() string }{
			"select":        tn.Select("records"),
			"select model":  tn.SelectModel((*fileRow)(nil)),
			"select by key": tn.SelectByKey("customers"),
			"update":        tn.Update("records").Set("payload = '{}'"),
			"update model":  tn.UpdateModel((*clientRow)(nil)).Set("name = ''"),
			"delete":        tn.Delete("appointment_spans"),
			"delete model":  tn.DeleteModel((*idempotencyRow)(nil)),
			"select own":    tn.SelectOwn((*companyRow)(nil)),
			"update own":    tn.UpdateOwn().Set("name = ''"),
			"delete own":    tn.DeleteOwn(),
		} {
			sql := query.String()
			if !strings.Contains(sql, "01000000-0000-0000-0000-000000000000") {
				t.Errorf("%s: %s\nholds no company", name, sql)
			}
			if !strings.Contains(sql, "company_id") && !strings.Contains(name, "own") {
				t.Errorf("%s: %s\ndoes not compare company_id", name, sql)
			}
		}
	}
}
