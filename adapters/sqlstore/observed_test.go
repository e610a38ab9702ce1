package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/gdt"
	"github.com/praxis-health/praxis/ports"
	"github.com/praxis-health/praxis/ports/porttest"
	"github.com/praxis-health/praxis/test/testenv"
)

func TestObservedBackfillWritesWhatTheStoreWritesSQLite(t *testing.T) {
	t.Parallel()
	observedBackfill(t, "sqlite:"+filepath.Join(t.TempDir(), "praxis.db"))
}

func TestObservedBackfillWritesWhatTheStoreWritesPostgres(t *testing.T) {
	t.Parallel()
	observedBackfill(t, testenv.PostgresURL(t))
}

// observedBackfill: the migration that brought the observed rows fills
// them for what was stored before it, in SQL; run again over a company's
// measurements, lab results and GDT results whose rows are taken away, it
// writes exactly what the store writes with every write (domain.ObservedOf,
// domain.ExaminedSpan): times with offsets, dates, results without a code,
// a lab result not collected, a device's day without its time.
func observedBackfill(t *testing.T, url string) {
	ctx := context.Background()
	db := migrated(t, url)
	repos := repositoriesOn(db)
	records := sqlstore.NewRecordStore(db)
	company, _ := porttest.NewCompany(t, repos, "Praxis", 1000)
	customer := porttest.NewCustomer(t, repos, company.ID, 0).ID
	put := func(slug string, payloads ...string) {
		objs := make([]ports.StoredObject, len(payloads))
		for i, p := range payloads {
			objs[i] = ports.StoredObject{ID: domain.NewObjectID(), Customer: &customer, Payload: []byte(fmt.Sprintf(p, customer))}
		}
		if err := repos.Tx.InTx(ctx, func(ctx context.Context) error {
			return records.Put(ctx, company.ID, domain.KindOf(slug), objs, nil, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
	}
	put("measurements",
		`{"customer_id":%d,"measured_at":"2026-03-10T10:00:00+01:00","type":"pulse","loinc_code":"8867-4"}`,
		`{"customer_id":%d,"measured_at":"2026-03-11T23:59:59-05:00","type":"other"}`)
	put("lab-results",
		`{"customer_id":%d,"collected_at":"2026-03-10T07:30:00Z","reported_at":"2026-03-11T09:00:00Z","results":[{"name":"Hb","loinc_code":"718-7"},{"name":"CRP"}]}`,
		`{"customer_id":%d,"collected_at":null,"reported_at":"2026-03-11T09:00:00Z","results":[{"name":"Hb","loinc_code":"718-7"}]}`,
		`{"customer_id":%d,"reported_at":"2026-03-11T09:00:00Z","results":[]}`)
	at, on := "2026-03-12T14:05:00+01:00", "2026-03-13"
	for _, info := range []*gdt.Info{{RecordType: "6310", ExaminedOn: &on, ExaminedAt: &at}, {RecordType: "6310", ExaminedOn: &on}, {RecordType: "6310"}, nil} {
		id := domain.NewFileID()
		f := domain.File{ID: id, CompanyID: company.ID, CustomerID: customer, Name: "result.gdt", ContentType: "text/plain", Size: 1,
			SHA256: []byte("0123456789abcdef0123456789abcdef"), StorageKey: id.String(), Source: domain.SourceGDT, GDT: info,
			CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
		if err := repos.Tx.InTx(ctx, func(ctx context.Context) error { return repos.Files.Create(ctx, f) }); err != nil {
			t.Fatal(err)
		}
	}
	written := observedState(t, db, company.ID)
	if n := strings.Count(written, "\n"); n != 2+5+1+4 {
		t.Fatalf("the store wrote %d rows, want 12:\n%s", n, written)
	}
	// Taken away, then the migration's statements that fill them.
	for _, q := range []*bun.DeleteQuery{db.NewDelete().Table("record_observed").Where("company_id = ?", uuid.UUID(company.ID))} {
		if _, err := q.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.NewUpdate().Table("files").Set("examined_from = NULL").Set("examined_until = NULL").Where("company_id = ?", uuid.UUID(company.ID)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	dir := "sqlite"
	if db.Dialect().Name() == dialect.PG {
		dir = "postgres"
	}
	up, err := os.ReadFile(filepath.Join("migrations", dir, "20261201000100_observed_rows.tx.up.sql"))
	if err != nil {
		t.Fatal(err)
	}
	filled := 0
	for _, statement := range strings.Split(string(up), "--bun:split") {
		if i := strings.Index(statement, "INSERT INTO"); i >= 0 || strings.Contains(statement, "UPDATE files") {
			if _, err := db.ExecContext(ctx, statement); err != nil {
				t.Fatalf("%v\n%s", err, statement)
			}
			filled++
		}
	}
	if filled != 4 {
		t.Fatalf("%d statements fill the rows, want 4", filled)
	}
	if backfilled := observedState(t, db, company.ID); backfilled != written {
		t.Errorf("the migration fills\n%s\nthe store writes\n%s", backfilled, written)
	}
}

// observedState is a company's observed rows and its files' examined
// times, a line each, in a fixed order.
func observedState(t *testing.T, db *bun.DB, company domain.CompanyID) string {
	t.Helper()
	var rows []struct {
		RecordID      string `bun:"record_id"`
		Row           int    `bun:"row_no"`
		Code          string `bun:"code"`
		ObservedFrom  *int64 `bun:"observed_from"`
		ObservedUntil *int64 `bun:"observed_until"`
	}
	if err := db.NewSelect().Table("record_observed").Column("record_id", "row_no", "code", "observed_from", "observed_until").
		Where("company_id = ?", uuid.UUID(company)).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	var files []struct {
		ID            string `bun:"id"`
		ExaminedFrom  *int64 `bun:"examined_from"`
		ExaminedUntil *int64 `bun:"examined_until"`
	}
	if err := db.NewSelect().Table("files").Column("id", "examined_from", "examined_until").
		Where("company_id = ?", uuid.UUID(company)).Scan(context.Background(), &files); err != nil {
		t.Fatal(err)
	}
	ms := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return time.UnixMilli(*p).UTC().Format(time.RFC3339Nano)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("record %s row %d code %q %s %s\n", r.RecordID, r.Row, r.Code, ms(r.ObservedFrom), ms(r.ObservedUntil)))
	}
	for _, f := range files {
		lines = append(lines, fmt.Sprintf("file %s %s %s\n", f.ID, ms(f.ExaminedFrom), ms(f.ExaminedUntil)))
	}
	slices.Sort(lines)
	return strings.Join(lines, "")
}
