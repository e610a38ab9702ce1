package sqlstore_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

// TestHotStatementsNameTheCompany runs every hot statement on PostgreSQL
// and reads the texts built: each holds the company as $1 in its table's
// company condition, and there is one per statement kind (the company, an
// object of each section), however many companies and ids were asked for,
// so the statements prepared on one connection stay as few.
func TestHotStatementsNameTheCompany(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := sqlstore.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: what it prepared is what one connection holds
	companies, records := sqlstore.NewCompanyRepository(db), sqlstore.NewRecordStore(db)
	for i := range 50 {
		company := domain.CompanyID(uuid.New())
		if _, err := companies.Get(ctx, company); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("an unknown company: %v", err)
		}
		for _, k := range domain.Kinds() {
			id := uuid.NewString()
			if k.NumericIDs() {
				id = strconv.Itoa(i + 1)
			}
			if _, err := records.Get(ctx, company, k, id, false); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("%s of an unknown company: %v", k.Slug, err)
			}
		}
	}
	texts := sqlstore.HotTexts()
	// The audit trail's append is hot too; it runs here when another test of
	// this package appended first.
	if n := len(texts); n != 1+len(domain.Kinds()) && n != 2+len(domain.Kinds()) {
		t.Errorf("%d hot statements, want %d (the company, an object of each section, perhaps the audit append)", n, 1+len(domain.Kinds()))
	}
	for key, text := range texts {
		switch {
		case key == "company" && strings.Contains(text, `FROM "companies" AS "company_row" WHERE ("company_row".id = $1)`),
			key == "audit append" && strings.HasPrefix(text, "SELECT audit_append($1, "),
			strings.HasPrefix(key, "object:") && strings.Contains(text, `.company_id = $1`):
		default:
			t.Errorf("hot statement %s does not name the company as $1: %s", key, text)
		}
	}
	var prepared int
	if err := db.NewRaw("SELECT count(*) FROM pg_prepared_statements").Scan(ctx, &prepared); err != nil {
		t.Fatal(err)
	}
	if prepared > 1+len(domain.Kinds()) || prepared == 0 {
		t.Errorf("%d statements prepared on the connection after %d requests, want at most the %d hot statements", prepared, 50*(1+len(domain.Kinds())), len(texts))
	}
	t.Logf("%d hot statements; %d prepared on one connection after %d requests", len(texts), prepared, 50*(1+len(domain.Kinds())))
}
