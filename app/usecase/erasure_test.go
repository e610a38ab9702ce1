package usecase_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/adapters/blobstore"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
	"github.com/praxis-health/praxis/test/testenv"
)

// failingDeletes is a blob store whose deletions fail after the first few.
type failingDeletes struct {
	ports.BlobStore
	left int
}

func (f *failingDeletes) Delete(ctx context.Context, company domain.CompanyID, name string) error {
	if f.left == 0 {
		return domain.Unavailable(errors.New("the blob store went away"))
	}
	f.left--
	return f.BlobStore.Delete(ctx, company, name)
}

// TestEraseCompany: a retention hold refuses the erasure and changes
// nothing; the erasure ends the company's tokens, rows and objects; a
// failure halfway through the objects leaves a record that says so, and
// running the erasure again finishes it; once done, running it again
// answers the same record; another company keeps everything.
func TestEraseCompany(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	ctx := context.Background()
	blobs := blobstore.New(env.Bucket)
	practice := func(name string) (domain.CompanyID, domain.ClientID, string) {
		c, _, err := env.Admin.CreateCompany(ctx, usecase.NewCompanyInput{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Admin.CreateCustomer(ctx, usecase.NewCustomerInput{Company: c.ID, FirstName: "Anna", LastName: "Berger"}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b", "c"} {
			w, err := blobs.NewWriter(ctx, c.ID, name, "text/plain")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte("Befund " + name)); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		client, secret, err := env.Admin.CreateClient(ctx, usecase.NewClientInput{Company: c.ID, Name: "Labor"})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := env.OAuth.IssueToken(ctx, ports.TokenRequest{Client: ports.ClientCredentials{ID: client.ID, Secret: string(secret)}})
		if err != nil {
			t.Fatal(err)
		}
		return c.ID, client.ID, tok.AccessToken
	}
	objects := func(c domain.CompanyID) int {
		n := 0
		if err := blobs.Walk(ctx, c, func(ports.BlobInfo) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, clientA, tokenA := practice("Praxis A")
	b, clientB, tokenB := practice("Praxis B")
	if _, _, err := env.OAuth.Authenticate(ctx, tokenB); err != nil { // one call of B's today
		t.Fatal(err)
	}
	in := ports.EraseInput{By: "operator Huber"}

	// Held until the end of today in the practice's zone: refused, nothing changed.
	vienna, err := time.LoadLocation(domain.DefaultTimeZone)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Admin.SetRetentionHold(ctx, a, string(domain.DateOf(time.Now(), vienna))); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Admin.EraseCompany(ctx, a, in); !errors.Is(err, domain.ErrRetentionHold) || !strings.Contains(err.Error(), "held until") {
		t.Fatalf("erasure under a hold: %v, want ErrRetentionHold naming the day", err)
	}
	if _, _, err := env.OAuth.Authenticate(ctx, tokenA); err != nil {
		t.Errorf("a refused erasure ended a token: %v", err)
	}
	if c, err := env.Companies.Get(ctx, a); err != nil || c.Disabled() || objects(a) != 3 {
		t.Errorf("a refused erasure changed the company: %+v, %v, %d objects", c, err, objects(a))
	}
	if _, err := env.Admin.SetRetentionHold(ctx, a, "2026-02-30"); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("a hold on no day: %v, want invalid", err)
	}
	if _, err := env.Admin.SetRetentionHold(ctx, a, "2020-01-31"); err != nil { // passed: no hold in force
		t.Fatal(err)
	}

	// Another process's import of the practice holds its lease: refused,
	// nothing changed; once it is released, the erasure takes the lease.
	leases := sqlstore.NewCompanyLeases(env.DB)
	now := time.Now()
	held := domain.CompanyLease{Company: a, Holder: "praxis-7 pid 41 9f3c", Purpose: "import", AcquiredAt: now, ExpiresAt: now.Add(time.Minute)}
	if _, taken, err := leases.Take(ctx, held, now); err != nil || !taken {
		t.Fatalf("the import's lease: %v %v", taken, err)
	}
	var busy *usecase.CompanyBusyError
	if _, err := env.Admin.EraseCompany(ctx, a, in); !errors.As(err, &busy) || !strings.Contains(err.Error(), "another import of company "+a.String()) {
		t.Fatalf("erasure while an import runs: %v, want it refused naming the import", err)
	}
	if c, err := env.Companies.Get(ctx, a); err != nil || c.Disabled() || objects(a) != 3 {
		t.Errorf("a refused erasure changed the company: %+v, %v, %d objects", c, err, objects(a))
	}
	if _, _, err := env.OAuth.Authenticate(ctx, tokenA); err != nil {
		t.Errorf("a refused erasure ended a token: %v", err)
	}
	if err := leases.Release(ctx, a, held.Holder); err != nil {
		t.Fatal(err)
	}

	// The blob store fails after the first object: the rows are gone, the
	// record says objects remain, the error says to run it again.
	_, err = env.AdminOver(&failingDeletes{BlobStore: blobs, left: 1}).EraseCompany(ctx, a, in)
	if err == nil || !strings.Contains(err.Error(), "run the erasure again") {
		t.Fatalf("erasure with a failing blob store: %v", err)
	}
	if _, err := env.Companies.Get(ctx, a); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the company's row after its rows were erased: %v", err)
	}
	if objects(a) != 2 {
		t.Errorf("%d objects left, want 2", objects(a))
	}
	if _, _, err := env.OAuth.Authenticate(ctx, tokenA); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the erased company's token: %v, want ErrNotFound", err)
	}

	report, err := env.Admin.EraseCompany(ctx, a, in)
	if err != nil {
		t.Fatalf("erasure run again: %v", err)
	}
	e := report.Erasure
	if e.Company != a || e.By != "operator Huber" || e.Rows == 0 || e.Blobs != 3 || e.BlobsErasedAt == nil || report.Objects != 0 || objects(a) != 0 {
		t.Errorf("report %+v, %d objects in the store", report, objects(a))
	}
	if e.AuditSeq == 0 || len(e.AuditHash) != 64 {
		t.Errorf("audit head %d %q: the operator's patient was an event", e.AuditSeq, e.AuditHash)
	}
	for table, n := range report.Remaining {
		if n != 0 {
			t.Errorf("%s: %d rows left", table, n)
		}
	}
	again, err := env.Admin.EraseCompany(ctx, a, ports.EraseInput{By: "someone else"})
	if err != nil || again.Erasure.By != e.By || again.Erasure.Blobs != 3 || !again.Erasure.At.Equal(e.At) {
		t.Errorf("erasing an erased company: %+v, %v; want the first record", again.Erasure, err)
	}

	for client, want := range map[domain.ClientID]int64{clientA: 0, clientB: 1} {
		if u, err := env.Tokens.Usage(ctx, client, time.Now()); err != nil || u.Today() != want {
			t.Errorf("calls of client %s today: %d, %v; want %d (the erased company's forgotten)", client, u.Today(), err, want)
		}
	}
	if objects(b) != 3 {
		t.Errorf("another company's objects: %d, want 3", objects(b))
	}
	if _, _, err := env.OAuth.Authenticate(ctx, tokenB); err != nil {
		t.Errorf("another company's token: %v", err)
	}
	if _, err := env.Admin.EraseCompany(ctx, domain.NewCompanyID(), in); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("erasing an unknown company: %v, want ErrNotFound", err)
	}
}
