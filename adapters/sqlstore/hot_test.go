package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
	"github.com/praxis-health/praxis/test/testenv"
)

// TestHotStatementsNameTheCompany runs every hot statement on PostgreSQL
// and reads the texts built: each holds the company as $1 in its table's
// company condition, and there is one per statement kind (the company, an
// object of each section), however many companies and ids were asked for;
// a sync's pages are prepared too, a few shapes per section whatever their
// limit, cursor or company: the statements prepared on one connection stay
// as few.
func TestHotStatementsNameTheCompany(t *testing.T) {
	ctx, db := context.Background(), migrated(t, testenv.PostgresURL(t))
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
	// A sync's pages: every cursor form, several limits, include_deleted
	// and updated_since, of every section and many companies.
	since := time.Now().Add(-time.Hour)
	// per section: the cursor forms × include_deleted, and updated_since
	// with an id's cursor × include_deleted
	const pageShapes = 3*2 + 2
	for i := range 10 {
		company := domain.CompanyID(uuid.New())
		for _, k := range domain.Kinds() {
			id := uuid.NewString()
			if k.NumericIDs() {
				id = strconv.Itoa(i + 1)
			}
			for j, after := range []*domain.Cursor{nil, {Change: int64(i + 1)}, {Change: int64(i + 1), ID: id}} {
				lq := domain.ListQuery{Limit: 1 + i, After: after, IncludeDeleted: i%2 == 0}
				if j == 2 && i >= 5 {
					lq.UpdatedSince = &since
				}
				page, err := records.List(ctx, company, k, lq)
				if err != nil || len(page.Items) != 0 {
					t.Fatalf("a page of %s of an unknown company: %d objects, %v", k.Slug, len(page.Items), err)
				}
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
	var prepared []string
	if err := db.NewRaw("SELECT statement FROM pg_prepared_statements").Scan(ctx, &prepared); err != nil {
		t.Fatal(err)
	}
	bound := 1 + len(domain.Kinds())*(1+pageShapes)
	if len(prepared) > bound || len(prepared) == 0 {
		t.Errorf("%d statements prepared on the connection after %d requests, want at most %d (the company, an object and %d page shapes of each section)",
			len(prepared), 80*len(domain.Kinds())+50, bound, pageShapes)
	}
	pages := 0
	for _, text := range prepared {
		if strings.Contains(text, " ORDER BY ") {
			pages++
			if !strings.Contains(text, ".company_id = $1") || !strings.HasSuffix(text, " LIMIT $"+strconv.Itoa(strings.Count(text, "$"))) {
				t.Errorf("a prepared page does not name the company as $1 or end with its limit: %s", text)
			}
		}
	}
	if want := len(domain.Kinds()) * pageShapes; pages != want {
		t.Errorf("%d prepared pages, want %d (%d shapes of each section, however many limits, cursors and companies)", pages, want, pageShapes)
	}
	t.Logf("%d hot statements; %d prepared on one connection (%d pages) after %d requests", len(texts), len(prepared), pages, 80*len(domain.Kinds())+50)
}

// TestPreparedPageReadsWhatTheBuilderReads pages a section and the
// customers on PostgreSQL twice, as prepared pages read from the wire
// (feed_rows.go) and as the query builder's texts scanned by pgx, and
// wants the same objects: ids, customers (a number and none), payloads,
// versions, times, tombstones. Each prepared page's payloads are then
// appended to: no append writes over the next row's.
func TestPreparedPageReadsWhatTheBuilderReads(t *testing.T) {
	ctx, db := context.Background(), migrated(t, testenv.PostgresURL(t))
	repos := repositoriesOn(db)
	store, tx := sqlstore.NewRecordStore(db), sqlstore.NewTransactor(db)
	company, _, err := domain.NewCompany("Praxis Wire", "", domain.PlanPro, 1000, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := repos.Companies.Create(ctx, company); err != nil {
		t.Fatal(err)
	}
	patient, err := domain.NewCustomer(company.ID, 0, "Anna", "Berger", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if patient, err = repos.Customers.Create(ctx, patient); err != nil {
		t.Fatal(err)
	}
	notes := domain.KindOf("notes")
	for i := range 7 {
		id := domain.NewObjectID()
		payload := fmt.Sprintf(`{"customer_id":%d,"noted_on":"2026-03-1%d","text":"note %d"}`, patient.ID, i, i)
		if i%3 == 0 {
			payload = fmt.Sprintf(`{"noted_on":"2026-03-1%d","text":"without a patient %d"}`, i, i)
		}
		err := tx.InTx(ctx, func(ctx context.Context) error {
			_, err := store.Insert(ctx, company.ID, notes, ports.StoredObject{ID: id, Payload: []byte(payload), CreatedAt: time.Now()})
			return err
		})
		if err == nil && i == 4 {
			err = tx.InTx(ctx, func(ctx context.Context) error { return store.Delete(ctx, company.ID, notes, id, time.Now()) })
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	page := func(kind *domain.Kind, prepared bool, lq domain.ListQuery) []ports.StoredObject {
		t.Helper()
		sqlstore.PrepareHot.Store(prepared)
		defer sqlstore.PrepareHot.Store(true)
		var all []ports.StoredObject
		for {
			p, err := store.List(ctx, company.ID, kind, lq)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, p.Items...)
			if !p.HasMore {
				return all
			}
			lq.After = &p.Next
		}
	}
	for _, kind := range []*domain.Kind{notes, domain.KindOf("customers")} {
		lq := domain.ListQuery{Limit: 3, IncludeDeleted: true}
		before := sqlstore.WirePages()
		wire := page(kind, true, lq)
		if sqlstore.WirePages() == before {
			t.Fatalf("%s: no prepared page was read from the wire", kind.Slug)
		}
		built := page(kind, false, lq)
		if len(wire) == 0 || !reflect.DeepEqual(wire, built) {
			t.Fatalf("%s: the prepared pages read\n%+v\nthe builder's\n%+v", kind.Slug, wire, built)
		}
		for i := range wire {
			wire[i].Payload = append(wire[i].Payload, "!!!"...)
		}
		for i := range wire {
			if want := string(built[i].Payload) + "!!!"; string(wire[i].Payload) != want {
				t.Fatalf("%s: an append to one payload changed another: %s, want %s", kind.Slug, wire[i].Payload, want)
			}
		}
	}
}
