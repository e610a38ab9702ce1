package porttest

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// practiceWithEverything stores a company with a patient, a record of every
// kind about it, a file, an OAuth client and a deprecated call.
func practiceWithEverything(t *testing.T, r RecordRepositories, name string) (domain.CompanyID, domain.CustomerID) {
	t.Helper()
	ctx := context.Background()
	c, _ := NewCompany(t, r.Repositories, name, 1<<20)
	f := recordFixture{r: r, company: c.ID, customer: NewCustomer(t, r.Repositories, c.ID, 0).ID}
	for _, k := range domain.Kinds() {
		if k.Slug != "customers" { // the patient is there
			f.insert(t, ctx, k)
		}
	}
	if err := r.Tx.InTx(ctx, func(ctx context.Context) error { return r.Files.Create(ctx, newFile(c.ID, f.customer, 10)) }); err != nil {
		t.Fatal(err)
	}
	client, _, err := domain.NewClient(c.ID, "Labor", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Clients.Create(ctx, client); err != nil {
		t.Fatal(err)
	}
	if err := r.Deprecated.Count(ctx, c.ID, client.ID, "GET /company", time.Now(), 2); err != nil {
		t.Fatal(err)
	}
	return c.ID, f.customer
}

// erasureEndsTheCompany: the schema walk finds the company's rows in many
// tables; a retention hold is kept and lifted; the erasure deletes every
// row of the company with its own row in one transaction (rolled back
// with its caller, nothing goes), keeps its record outside, leaves another
// company's rows as they were, and frees the customer numbers.
func erasureEndsTheCompany(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	r := newRepos(t)
	ctx := context.Background()
	a, customerA := practiceWithEverything(t, r, "A")
	b, _ := practiceWithEverything(t, r, "B")
	before, err := r.Erasures.Remaining(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, table := range []string{"companies", "customers", "records", "files", "oauth_clients", "deprecated_calls"} {
		if before[table] == 0 {
			t.Errorf("the schema walk found no row of the company in %s: %v", table, before)
		}
	}
	for _, n := range before {
		rows += n
	}
	t.Logf("the schema walk: %d tables, %d rows of the company: %v", len(before), rows, before)
	beforeB, err := r.Erasures.Remaining(ctx, b)
	if err != nil {
		t.Fatal(err)
	}

	if err := r.Companies.SetRetentionHold(ctx, a, "2031-12-31"); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Companies.Get(ctx, a); err != nil || got.RetentionHold != "2031-12-31" {
		t.Errorf("hold: %q, %v; want 2031-12-31", got.RetentionHold, err)
	}
	if got, _ := r.Companies.Get(ctx, b); got.RetentionHold != "" {
		t.Errorf("another company's hold: %q, want none", got.RetentionHold)
	}
	if err := r.Companies.SetRetentionHold(ctx, a, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Companies.Get(ctx, a); got.RetentionHold != "" {
		t.Errorf("a lifted hold reads %q", got.RetentionHold)
	}
	if err := r.Companies.SetRetentionHold(ctx, domain.NewCompanyID(), "2031-12-31"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("hold of an unknown company: %v, want ErrNotFound", err)
	}

	rec := domain.Erasure{Company: a, At: time.Now().UTC().Truncate(time.Second), By: "operator Huber",
		ExportSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	errLater := errors.New("a later step failed")
	err = r.Tx.InTx(ctx, func(ctx context.Context) error {
		if _, err := r.Erasures.EraseRows(ctx, rec); err != nil {
			return err
		}
		return errLater
	})
	if !errors.Is(err, errLater) {
		t.Fatalf("erasure in a failing transaction: %v", err)
	}
	if left, _ := r.Erasures.Remaining(ctx, a); !maps.Equal(left, before) {
		t.Errorf("a rolled back erasure changed rows: %v, want %v", left, before)
	}
	if _, err := r.Erasures.Get(ctx, a); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("a rolled back erasure kept its record: %v", err)
	}

	got, err := r.Erasures.EraseRows(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rows != rows {
		t.Errorf("erased %d rows, the walk counted %d", got.Rows, rows)
	}
	left, err := r.Erasures.Remaining(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != len(before) {
		t.Errorf("the walk after the erasure saw %d tables, before %d", len(left), len(before))
	}
	for table, n := range left {
		if n != 0 {
			t.Errorf("%s: %d rows of the erased company left", table, n)
		}
	}
	if afterB, _ := r.Erasures.Remaining(ctx, b); !maps.Equal(afterB, beforeB) {
		t.Errorf("another company's rows changed: %v, want %v", afterB, beforeB)
	}
	if _, err := r.Companies.Get(ctx, b); err != nil {
		t.Errorf("another company: %v", err)
	}
	kept, err := r.Erasures.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if !kept.At.Equal(rec.At) || kept.By != rec.By || kept.ExportSHA256 != rec.ExportSHA256 || kept.Rows != rows || kept.BlobsErasedAt != nil {
		t.Errorf("record %+v, want %+v with %d rows and objects pending", kept, rec, rows)
	}
	if _, err := r.Erasures.EraseRows(ctx, rec); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("erasing an erased company: %v, want ErrNotFound", err)
	}
	if err := r.Erasures.BlobsErased(ctx, a, 1, time.Time{}); err != nil { // one deleted, the others not yet
		t.Fatal(err)
	}
	if kept, _ := r.Erasures.Get(ctx, a); kept.Blobs != 1 || kept.BlobsErasedAt != nil {
		t.Errorf("objects erased: %d at %v, want 1 and some left", kept.Blobs, kept.BlobsErasedAt)
	}
	done := time.Now().UTC().Truncate(time.Second)
	if err := r.Erasures.BlobsErased(ctx, a, 2, done); err != nil {
		t.Fatal(err)
	}
	if kept, _ := r.Erasures.Get(ctx, a); kept.Blobs != 3 || kept.BlobsErasedAt == nil || !kept.BlobsErasedAt.Equal(done) {
		t.Errorf("objects erased: %d at %v, want 3 at %v", kept.Blobs, kept.BlobsErasedAt, done)
	}
	if _, err := r.Erasures.Get(ctx, b); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("record of a company never erased: %v", err)
	}
	if err := r.Erasures.BlobsErased(ctx, b, 1, done); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("objects erased of a company never erased: %v, want ErrNotFound", err)
	}
	// The erased company's customer numbers (unique across the service) are free again.
	c, _ := NewCompany(t, r.Repositories, "A again", 10)
	if again := NewCustomer(t, r.Repositories, c.ID, customerA); again.ID != customerA {
		t.Errorf("customer number %d again: %d", customerA, again.ID)
	}
}
