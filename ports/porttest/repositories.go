// Package porttest holds one contract suite per port. Every adapter of a port
// runs its suite; tenant isolation ("another company") is part of each.
package porttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/bulk"
	"github.com/praxis-health/praxis/domain/gdt"
	"github.com/praxis-health/praxis/ports"
)

// Repositories is what one database adapter provides.
type Repositories struct {
	Tx        ports.Transactor
	Companies ports.CompanyRepository
	Customers ports.CustomerRepository
	Files     ports.FileRepository
	Clients   ports.ClientRepository
	// Deprecated counts calls that used something deprecated.
	Deprecated ports.DeprecatedCalls
	// AssertionIDs keeps the ids of accepted client assertions.
	AssertionIDs ports.AssertionIDs
	// Exports keeps the FHIR Bulk Data export jobs.
	Exports ports.ExportJobs
	// Erasures ends a company's rows and keeps its record.
	Erasures ports.Erasures
}

// RunRepositorySuite checks a database adapter against the ports' contract.
// newRepos must return repositories on an empty, migrated database; each
// case starts from its own, and the cases run in parallel.
func RunRepositorySuite(t *testing.T, newRepos func(t *testing.T) Repositories) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, r Repositories)
	}{
		{"company round trip", companyRoundTrip},
		{"clients: round trip, revoke, another company", clientsRoundTrip},
		{"declared companies and clients: by reference, update, disable, another company", declaredTenants},
		{"upload secret rotation touches one company", uploadSecretRotation},
		{"customers: ids, explicit ids, another company", customerIDs},
		{"storage reservation is atomic and bounded by the quota", storageReservation},
		{"files: a failed transaction keeps nothing", filesFailedTransaction},
		{"files: round trip and another company", filesRoundTrip},
		{"files: conditions on their columns, paged, another company", filesConditions},
		{"companies are listed for maintenance", companiesListed},
		{"deprecated calls: per client and day, concurrent counts add up, another company sees none", deprecatedCallsCounted},
		{"assertion ids: once per client until they expire, concurrent uses one winner, another company refused", assertionIDsOnce},
		{"export jobs: bounded per client, claimed once, leases, files, cuts, deletion, expiry, another company", exportJobs},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newRepos(t))
		})
	}
}

// companyRoundTrip: company round trip.
func companyRoundTrip(t *testing.T, r Repositories) {
	ctx := context.Background()
	c, secret := NewCompany(t, r, "Praxis Dr. Huber", 1000)
	got, err := r.Companies.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != c.Name || got.TimeZone != c.TimeZone || got.Plan != c.Plan || got.StorageQuota != 1000 || got.StorageUsed != 0 {
		t.Errorf("got %+v, want %+v", got, c)
	}
	if !got.CreatedAt.Equal(c.CreatedAt.Truncate(time.Microsecond)) {
		t.Errorf("created_at %v, want %v", got.CreatedAt, c.CreatedAt)
	}
	if !got.AcceptsUploadSecret(string(secret)) || got.AcceptsUploadSecret(string(secret)+"x") {
		t.Error("stored secret hash does not verify the secret alone")
	}
	if err := r.Companies.Create(ctx, c); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("second create: %v, want ErrConflict", err)
	}
	if _, err := r.Companies.Get(ctx, domain.NewCompanyID()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown company: %v, want ErrNotFound", err)
	}
}

// clientsRoundTrip: clients: round trip, revoke, another company.
func clientsRoundTrip(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r, "A", 10)
	b, _ := NewCompany(t, r, "B", 10)
	readOnly, _ := domain.ParseScopes("company:read customers:read")
	clientA, secretA, err := domain.NewClient(a.ID, "Kalender", readOnly, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	clientB, _, _ := domain.NewClient(b.ID, "", nil, time.Now())
	for _, c := range []domain.Client{clientA, clientB} {
		if err := r.Clients.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Clients.Create(ctx, clientA); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("second create: %v, want ErrConflict", err)
	}
	got, err := r.Clients.Get(ctx, clientA.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CompanyID != a.ID || got.Name != "Kalender" || got.Scopes.String() != "company:read customers:read" || !got.Active() {
		t.Errorf("got %+v, want %+v", got, clientA)
	}
	if !secretA.Matches(got.SecretHash) {
		t.Error("stored hash does not verify the client secret")
	}
	if gotB, _ := r.Clients.Get(ctx, clientB.ID); len(gotB.Scopes) != len(domain.AllScopes()) || gotB.CompanyID != b.ID {
		t.Errorf("client without scopes: %+v, want every scope of company B", gotB)
	}
	if _, err := r.Clients.Get(ctx, "pc_unknown"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown client: %v, want ErrNotFound", err)
	}

	revokedAt := time.Now().Add(-time.Minute)
	if err := r.Clients.Revoke(ctx, clientA.ID, revokedAt); err != nil {
		t.Fatal(err)
	}
	if err := r.Clients.Revoke(ctx, clientA.ID, time.Now()); err != nil {
		t.Errorf("second revoke: %v", err)
	}
	got, _ = r.Clients.Get(ctx, clientA.ID)
	if got.Active() || !got.RevokedAt.Equal(revokedAt.UTC().Truncate(time.Microsecond)) {
		t.Errorf("revoked at %v, want the first revocation %v", got.RevokedAt, revokedAt)
	}
	if gotB, _ := r.Clients.Get(ctx, clientB.ID); !gotB.Active() {
		t.Error("revoking A's client revoked B's")
	}
	if err := r.Clients.Revoke(ctx, "pc_unknown", time.Now()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("revoke unknown: %v, want ErrNotFound", err)
	}
}

// declaredTenants: declared companies and clients: by reference, update, disable, another company.
func declaredTenants(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, _, _ := domain.NewCompany("A", "", domain.PlanBasic, 10, time.Now())
	a.ExternalRef = "uid-a"
	b, _ := NewCompany(t, r, "B", 10)
	if err := r.Companies.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	twin, _, _ := domain.NewCompany("A again", "", domain.PlanBasic, 10, time.Now())
	twin.ExternalRef = "uid-a"
	if err := r.Companies.Create(ctx, twin); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("second company with one reference: %v, want ErrConflict", err)
	}
	got, err := r.Companies.FindByExternalRef(ctx, "uid-a")
	if err != nil || got.ID != a.ID || got.ExternalRef != "uid-a" {
		t.Fatalf("by reference: %+v, %v; want company A", got, err)
	}
	for _, ref := range []string{"", "uid-b"} {
		if _, err := r.Companies.FindByExternalRef(ctx, ref); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("reference %q: %v, want ErrNotFound (company B has none)", ref, err)
		}
	}

	if err := got.Apply(domain.CompanySettings{Name: "A renamed", TimeZone: "Europe/Berlin", Plan: domain.PlanEnterprise, StorageQuota: 99}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := r.Companies.UpdateSettings(ctx, got); err != nil {
		t.Fatal(err)
	}
	got, _ = r.Companies.Get(ctx, a.ID)
	if got.Name != "A renamed" || got.TimeZone != "Europe/Berlin" || got.Plan != domain.PlanEnterprise || got.StorageQuota != 99 {
		t.Errorf("after update: %+v", got)
	}
	if gotB, _ := r.Companies.Get(ctx, b.ID); gotB.Name != "B" || gotB.StorageQuota != 10 {
		t.Errorf("updating A changed B: %+v", gotB)
	}

	client, _, _ := domain.NewClient(a.ID, "Lab", nil, time.Now())
	client.ExternalRef = "uid-client"
	other, _, _ := domain.NewClient(b.ID, "Other", nil, time.Now())
	other.ExternalRef = "uid-client" // the same reference in another company
	for _, c := range []domain.Client{client, other} {
		if err := r.Clients.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if found, err := r.Clients.FindByExternalRef(ctx, a.ID, "uid-client"); err != nil || found.ID != client.ID {
		t.Errorf("A's client by reference: %+v, %v", found, err)
	}
	if found, err := r.Clients.FindByExternalRef(ctx, b.ID, "uid-client"); err != nil || found.ID != other.ID {
		t.Errorf("B's client by reference: %+v, %v", found, err)
	}
	fresh, _ := domain.NewSecret()
	readOnly, _ := domain.ParseScopes("company:read")
	renamed := client
	_ = renamed.Rename("Lab 2", readOnly)
	old, _ := domain.NewSecret()
	renamed.SecretHash = old.Hash()
	renamed.Rotate(fresh, time.Hour, time.Now())
	if err := r.Clients.Update(ctx, b.ID, renamed); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("update of A's client as company B: %v, want ErrNotFound", err)
	}
	if err := r.Clients.Update(ctx, a.ID, renamed); err != nil {
		t.Fatal(err)
	}
	if found, _ := r.Clients.Get(ctx, client.ID); found.Name != "Lab 2" || found.Scopes.String() != "company:read" || !fresh.Matches(found.SecretHash) ||
		!found.Accepts(old, time.Now()) || found.Accepts(old, time.Now().Add(2*time.Hour)) {
		t.Errorf("after update: %+v", found)
	}
	if ids, err := r.Clients.ActiveIDs(ctx, a.ID); err != nil || len(ids) != 1 || ids[0] != client.ID {
		t.Errorf("A's active clients: %v, %v; want only %s", ids, err, client.ID)
	}
	if list, err := r.Clients.List(ctx, a.ID); err != nil || len(list) != 1 || list[0].ID != client.ID || list[0].Name != "Lab 2" {
		t.Errorf("A's clients: %+v, %v; want only %s", list, err, client.ID)
	}

	disabledAt := time.Now().Add(-time.Minute)
	if err := r.Companies.Disable(ctx, a.ID, disabledAt); err != nil {
		t.Fatal(err)
	}
	if err := r.Companies.Disable(ctx, a.ID, time.Now()); err != nil {
		t.Errorf("second disable: %v", err)
	}
	got, _ = r.Companies.Get(ctx, a.ID)
	if !got.Disabled() || !got.DisabledAt.Equal(disabledAt.UTC().Truncate(time.Microsecond)) {
		t.Errorf("disabled at %v, want the first time %v", got.DisabledAt, disabledAt)
	}
	if found, _ := r.Clients.Get(ctx, client.ID); found.Active() || !found.CompanyDisabled {
		t.Errorf("client of a disabled company is active: %+v", found)
	}
	if gotB, _ := r.Companies.Get(ctx, b.ID); gotB.Disabled() {
		t.Error("disabling A disabled B")
	}
	if found, _ := r.Clients.Get(ctx, other.ID); !found.Active() {
		t.Error("disabling A stopped B's client")
	}
	if err := r.Companies.Disable(ctx, domain.NewCompanyID(), time.Now()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("disable unknown: %v, want ErrNotFound", err)
	}
	if err := r.Companies.UpdateSettings(ctx, twin); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("update unknown: %v, want ErrNotFound", err)
	}
}

// uploadSecretRotation: upload secret rotation touches one company.
func uploadSecretRotation(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, secretA := NewCompany(t, r, "A", 10)
	b, secretB := NewCompany(t, r, "B", 10)
	fresh, _ := domain.NewSecret()
	if err := r.Companies.SetUploadSecretHash(ctx, a.ID, fresh.Hash()); err != nil {
		t.Fatal(err)
	}
	gotA, _ := r.Companies.Get(ctx, a.ID)
	gotB, _ := r.Companies.Get(ctx, b.ID)
	if gotA.AcceptsUploadSecret(string(secretA)) || !gotA.AcceptsUploadSecret(string(fresh)) {
		t.Error("company A still accepts its old secret or not its new one")
	}
	if !gotB.AcceptsUploadSecret(string(secretB)) {
		t.Error("rotating A changed B's secret")
	}
	if err := r.Companies.SetUploadSecretHash(ctx, domain.NewCompanyID(), fresh.Hash()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown company: %v, want ErrNotFound", err)
	}
}

// customerIDs: customers: ids, explicit ids, another company.
func customerIDs(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r, "A", 10)
	b, _ := NewCompany(t, r, "B", 10)
	first := NewCustomer(t, r, a.ID, 0)
	if first.ID <= 0 {
		t.Fatalf("assigned id %d", first.ID)
	}
	explicit := NewCustomer(t, r, a.ID, 5000)
	if explicit.ID != 5000 {
		t.Fatalf("explicit id: got %d", explicit.ID)
	}
	next := NewCustomer(t, r, b.ID, 0)
	if next.ID <= 5000 {
		t.Errorf("next assigned id %d must not reuse ids up to an explicit 5000", next.ID)
	}
	c, _ := domain.NewCustomer(b.ID, 5000, "X", "Y", "", time.Now())
	if _, err := r.Customers.Create(ctx, c); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("taken id: %v, want ErrConflict", err)
	}
	got, err := r.Customers.Get(ctx, a.ID, explicit.ID)
	if err != nil || got.Data.FirstName != "Anna" || got.Data.BirthDate == nil || *got.Data.BirthDate != "1980-02-29" {
		t.Errorf("get own customer: %+v, %v", got, err)
	}
	if _, err := r.Customers.Get(ctx, b.ID, explicit.ID); !errors.Is(err, domain.ErrOtherCompany) {
		t.Errorf("another company's customer: %v, want ErrOtherCompany", err)
	}
	if got, err := r.Customers.Get(ctx, b.ID, explicit.ID); err == nil || got.Data.FirstName != "" {
		t.Errorf("another company's customer leaked %+v", got)
	}
	if _, err := r.Customers.Get(ctx, a.ID, 999999); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("no such customer: %v, want ErrNotFound", err)
	}
}

// storageReservation: storage reservation is atomic and bounded by the quota.
func storageReservation(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r, "A", 300)
	b, _ := NewCompany(t, r, "B", 300)
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := r.Companies.ReserveStorage(ctx, a.ID, 100); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, domain.ErrInsufficientStorage):
				refused.Add(1)
			default:
				t.Errorf("reserve: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 3 || refused.Load() != 9 {
		t.Errorf("12 racing reservations of 100 in 300: %d granted, %d refused; want 3 and 9", ok.Load(), refused.Load())
	}
	gotA, _ := r.Companies.Get(ctx, a.ID)
	gotB, _ := r.Companies.Get(ctx, b.ID)
	if gotA.StorageUsed != 300 || gotB.StorageUsed != 0 {
		t.Errorf("used: A %d (want 300), B %d (want 0)", gotA.StorageUsed, gotB.StorageUsed)
	}
	if err := r.Companies.ReserveStorage(ctx, domain.NewCompanyID(), 1); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown company: %v, want ErrNotFound", err)
	}
}

// filesFailedTransaction: files: a failed transaction keeps nothing.
func filesFailedTransaction(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r, "A", 1000)
	cust := NewCustomer(t, r, a.ID, 0)
	boom := errors.New("boom")
	f := newFile(a.ID, cust.ID, 10)
	err := r.Tx.InTx(ctx, func(ctx context.Context) error {
		if err := r.Companies.ReserveStorage(ctx, a.ID, 10); err != nil {
			return err
		}
		if err := r.Files.Create(ctx, f); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx: %v", err)
	}
	got, _ := r.Companies.Get(ctx, a.ID)
	files, err := r.Files.Many(ctx, a.ID, []domain.FileID{f.ID})
	if err != nil || got.StorageUsed != 0 || len(files) != 0 {
		t.Errorf("after rollback: used %d, %d files; want 0, 0", got.StorageUsed, len(files))
	}
}

// filesRoundTrip: files: round trip and another company.
func filesRoundTrip(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r, "A", 1000)
	b, _ := NewCompany(t, r, "B", 1000)
	ca := NewCustomer(t, r, a.ID, 0)
	cb := NewCustomer(t, r, b.ID, 0)
	f1, f2 := newFile(a.ID, ca.ID, 11), newFile(a.ID, ca.ID, 22)
	f2.Category, f2.Description = "lab", ptrTo("Blutbild")
	if err := r.Tx.InTx(ctx, func(ctx context.Context) error { return r.Files.Create(ctx, f1, f2) }); err != nil {
		t.Fatal(err)
	}
	if err := r.Tx.InTx(ctx, func(ctx context.Context) error { return r.Files.Create(ctx, newFile(b.ID, cb.ID, 33)) }); err != nil {
		t.Fatal(err)
	}
	// The files feed: both of A's, in one change, nothing of B's; by customer; resumable.
	var page ports.FilePage
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if page, _ = r.Files.List(ctx, a.ID, domain.ListQuery{Limit: 10}); len(page.Files) == 2 {
			break
		}
	}
	if len(page.Files) != 2 || page.HasMore || page.Files[1].Category != "lab" && page.Files[0].Category != "lab" {
		t.Errorf("A's files feed: %+v", page)
	}
	if p, err := r.Files.List(ctx, a.ID, domain.ListQuery{Limit: 10, After: &page.Next}); err != nil || len(p.Files) != 0 {
		t.Errorf("resume: %+v %v", p, err)
	}
	if p, _ := r.Files.List(ctx, b.ID, domain.ListQuery{Limit: 10, Customer: &ca.ID}); len(p.Files) != 0 {
		t.Errorf("company B lists A's customer's files: %+v", p)
	}
	if p, _ := r.Files.List(ctx, a.ID, domain.ListQuery{Limit: 1}); len(p.Files) != 1 || !p.HasMore {
		t.Errorf("a page of one: %+v", p)
	}
	got, err := r.Files.Get(ctx, a.ID, f1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != f1.Name || got.Size != 11 || string(got.SHA256) != string(f1.SHA256) || got.Source != domain.SourceGDT ||
		got.ContentType != "application/pdf" || got.StorageKey != f1.StorageKey || got.CustomerID != ca.ID {
		t.Errorf("got %+v, want %+v", got, f1)
	}
	if many, err := r.Files.Many(ctx, a.ID, []domain.FileID{f2.ID, newFile(a.ID, ca.ID, 1).ID, f1.ID}); err != nil || len(many) != 2 || many[0].Version != 1 {
		t.Errorf("A's files by id: %+v %v", many, err)
	}
	if many, err := r.Files.Many(ctx, b.ID, []domain.FileID{f1.ID, f2.ID}); err != nil || len(many) != 0 {
		t.Errorf("A's files by id, asked by B: %+v %v", many, err)
	}
	if _, err := r.Files.Get(ctx, b.ID, f1.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's file: %v, want ErrNotFound", err)
	}
	if p, err := r.Files.List(ctx, a.ID, domain.ListQuery{Limit: 10, Customer: &ca.ID}); err != nil || len(p.Files) != 2 {
		t.Errorf("A's customer's files: %+v, %v; want 2", p, err)
	}
	if err := r.Files.Create(ctx, f1); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("duplicate file id: %v, want ErrConflict", err)
	}
	known, err := r.Files.KnownStorageKeys(ctx, a.ID, []string{f1.StorageKey, f2.StorageKey, "orphan"})
	if err != nil || len(known) != 2 || !known[f1.StorageKey] || !known[f2.StorageKey] {
		t.Errorf("known keys of A: %v, %v; want f1 and f2", known, err)
	}
	if known, _ := r.Files.KnownStorageKeys(ctx, b.ID, []string{f1.StorageKey}); len(known) != 0 {
		t.Errorf("company B knows A's key: %v", known)
	}
	if known, err := r.Files.KnownStorageKeys(ctx, a.ID, nil); err != nil || len(known) != 0 {
		t.Errorf("no keys: %v, %v", known, err)
	}
}

// companiesListed: companies are listed for maintenance.
func companiesListed(t *testing.T, r Repositories) {
	a, _ := NewCompany(t, r, "A", 1)
	b, _ := NewCompany(t, r, "B", 1)
	ids, err := r.Companies.ListIDs(context.Background())
	if err != nil || len(ids) != 2 || (ids[0] != a.ID && ids[1] != a.ID) || (ids[0] != b.ID && ids[1] != b.ID) {
		t.Errorf("ListIDs: %v, %v; want A and B", ids, err)
	}
}

// deprecatedCallsCounted: fifty concurrent counts
// are fifty; days and operations are kept apart; a company lists only its
// own, the operator (nil) every company's; a count for another company's
// client is refused by the schema.
func deprecatedCallsCounted(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, b, clientA, clientB := twoClients(t, r)
	const op = "GET /api/oauth/v2/resource/company"
	today := time.Date(2026, 11, 24, 23, 59, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if err := r.Deprecated.Count(ctx, a.ID, clientA.ID, op, today, 1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, err := range []error{
		r.Deprecated.Count(ctx, a.ID, clientA.ID, op, today.Add(time.Hour), 1),              // the next day
		r.Deprecated.Count(ctx, a.ID, clientA.ID, "GET /api/oauth/v2/resource/x", today, 1), // another operation
		r.Deprecated.Count(ctx, b.ID, clientB.ID, op, today, 7),                             // several at once
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Deprecated.Count(ctx, b.ID, clientA.ID, op, today, 1); err == nil {
		t.Error("a count naming another company's client was stored")
	}
	own, err := r.Deprecated.List(ctx, &a.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"2026-11-25 " + op: 1, "2026-11-24 " + op: 50, "2026-11-24 GET /api/oauth/v2/resource/x": 1}
	if len(own) != len(want) || own[0].Day != "2026-11-25" {
		t.Fatalf("company A lists %+v, want %v newest first", own, want)
	}
	for _, c := range own {
		if c.CompanyID != a.ID || c.ClientID != clientA.ID || want[c.Day+" "+c.Operation] != c.Calls {
			t.Errorf("company A lists %+v, want %v", c, want)
		}
	}
	all, err := r.Deprecated.List(ctx, nil)
	if err != nil || len(all) != 4 {
		t.Errorf("the operator lists %d counts (%v), want 4", len(all), err)
	}
	for _, c := range all {
		if c.CompanyID == b.ID && c.Calls != 7 {
			t.Errorf("company B's count of several at once: %d, want 7", c.Calls)
		}
	}
}

// NewCompany stores a new company of the pro plan with quota bytes of
// storage, and answers it with its upload secret.
func NewCompany(t testing.TB, r Repositories, name string, quota int64) (domain.Company, domain.Secret) {
	t.Helper()
	c, secret, err := domain.NewCompany(name, "", domain.PlanPro, quota, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Companies.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c, secret
}

// NewCustomer stores a customer (Anna Berger) of company: with number id,
// or the next free one for 0.
func NewCustomer(t *testing.T, r Repositories, company domain.CompanyID, id domain.CustomerID) domain.Customer {
	t.Helper()
	c, err := domain.NewCustomer(company, id, "Anna", "Berger", "1980-02-29", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	stored, err := r.Customers.Create(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// filesConditions: files: ListQuery.Where narrows the feed to the files
// whose columns meet every condition (alternatives within one), keeping
// the feed's order and paging; another company's files are never answered.
func filesConditions(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r, "A", 1000)
	b, _ := NewCompany(t, r, "B", 1000)
	ca := NewCustomer(t, r, a.ID, 0)
	cb := NewCustomer(t, r, b.ID, 0)
	file := func(company domain.CompanyID, customer domain.CustomerID, category, media, stored string, result bool) domain.File {
		f := newFile(company, customer, 1)
		at, err := time.Parse(time.RFC3339, stored)
		if err != nil {
			t.Fatal(err)
		}
		f.Category, f.ContentType, f.CreatedAt, f.UpdatedAt = category, media, at, at
		if result {
			f.GDT = &gdt.Info{RecordType: "6310"}
		}
		return f
	}
	lab := file(a.ID, ca.ID, "lab", "application/pdf", "2026-03-10T10:00:00Z", false)
	image := file(a.ID, ca.ID, "image", "image/png", "2026-03-11T09:30:00Z", true)
	letter := file(a.ID, ca.ID, "letter", "application/pdf", "2026-03-12T00:00:00Z", false)
	theirs := file(b.ID, cb.ID, "lab", "application/pdf", "2026-03-10T10:00:00Z", true)
	for _, f := range []domain.File{lab, image, letter, theirs} { // one change each: the feed's order is this order
		if err := r.Tx.InTx(ctx, func(ctx context.Context) error { return r.Files.Create(ctx, f) }); err != nil {
			t.Fatal(err)
		}
	}
	// Listed once no older transaction of the cluster is open (on PostgreSQL
	// another package's may be): wait for A's three and B's one, which was
	// written last — A's listed do not mean B's is.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mine, _ := r.Files.List(ctx, a.ID, domain.ListQuery{Limit: 10})
		if others, _ := r.Files.List(ctx, b.ID, domain.ListQuery{Limit: 10}); len(mine.Files) == 3 && len(others.Files) == 1 {
			break
		}
	}
	day := func(prefix, s string) domain.InstantRange {
		from, to, ok := domain.DateSpan(s)
		if !ok {
			t.Fatal(s)
		}
		return domain.InstantRange{Prefix: prefix, From: from, To: to}
	}
	equal := func(f domain.SearchField, values ...string) domain.Condition {
		return domain.Condition{Field: f, Op: domain.OpEqual, Values: values}
	}
	stored := func(ranges ...domain.InstantRange) domain.Condition {
		return domain.Condition{Field: domain.SearchStored, Op: domain.OpInstants, Instants: ranges}
	}
	at := time.Date(2026, 3, 10, 10, 0, 0, 0, time.FixedZone("CET", 3600)).Add(time.Hour) // 10:00 UTC, in another zone
	for _, c := range []struct {
		name    string
		company domain.CompanyID
		where   []domain.Condition
		want    []domain.File
	}{
		{"a category", a.ID, []domain.Condition{equal(domain.SearchCategory, "lab")}, []domain.File{lab}},
		{"either of two categories", a.ID, []domain.Condition{equal(domain.SearchCategory, "lab", "image")}, []domain.File{lab, image}},
		{"a media type and a category", a.ID, []domain.Condition{equal(domain.SearchContentType, "application/pdf"), equal(domain.SearchCategory, "letter", "image")}, []domain.File{letter}},
		{"no value", a.ID, []domain.Condition{equal(domain.SearchCategory)}, nil},
		{"stored on a day", a.ID, []domain.Condition{stored(day("eq", "2026-03-11"))}, []domain.File{image}},
		{"stored not on a day", a.ID, []domain.Condition{stored(day("ne", "2026-03-11"))}, []domain.File{lab, letter}},
		{"stored after a day", a.ID, []domain.Condition{stored(day("gt", "2026-03-11"))}, []domain.File{letter}},
		{"stored from a day", a.ID, []domain.Condition{stored(day("ge", "2026-03-11"))}, []domain.File{image, letter}},
		{"stored before a day", a.ID, []domain.Condition{stored(day("lt", "2026-03-11"))}, []domain.File{lab}},
		{"stored up to a day", a.ID, []domain.Condition{stored(day("le", "2026-03-11"))}, []domain.File{lab, image}},
		{"stored in a month", a.ID, []domain.Condition{stored(day("eq", "2026-03"))}, []domain.File{lab, image, letter}},
		{"stored on either of two days", a.ID, []domain.Condition{stored(day("eq", "2026-03-10"), day("eq", "2026-03-12"))}, []domain.File{lab, letter}},
		{"stored at a second", a.ID, []domain.Condition{stored(domain.InstantRange{Prefix: "eq", From: at, To: at.Add(time.Second)})}, []domain.File{lab}},
		{"stored in a month, not on a day", a.ID, []domain.Condition{stored(day("eq", "2026-03")), stored(day("ne", "2026-03-11"))}, []domain.File{lab, letter}},
		{"a device's result", a.ID, []domain.Condition{{Field: domain.SearchExamination, Op: domain.OpPresent}}, []domain.File{image}},
		{"changed on a day", a.ID, []domain.Condition{{Field: domain.SearchUpdated, Op: domain.OpInstants, Instants: []domain.InstantRange{day("eq", "2026-03-11")}}}, []domain.File{image}},
		{"changed after a day", a.ID, []domain.Condition{{Field: domain.SearchUpdated, Op: domain.OpInstants, Instants: []domain.InstantRange{day("gt", "2026-03-11")}}}, []domain.File{letter}},
		{"by id, another company's left out", a.ID, []domain.Condition{equal(domain.SearchID, letter.ID.String(), theirs.ID.String())}, []domain.File{letter}},
		{"another company: its own", b.ID, []domain.Condition{equal(domain.SearchCategory, "lab")}, []domain.File{theirs}},
		{"another company: its own results", b.ID, []domain.Condition{{Field: domain.SearchExamination, Op: domain.OpPresent}}, []domain.File{theirs}},
	} {
		page, err := r.Files.List(ctx, c.company, domain.ListQuery{Limit: 10, Where: c.where})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got, want := fileIDs(page.Files), fileIDs(c.want); !slices.Equal(got, want) || page.HasMore {
			t.Errorf("%s: %v (more %v), want %v", c.name, got, page.HasMore, want)
		}
	}
	// Paged a file at a time, every page holds a match and the last says so.
	where := []domain.Condition{equal(domain.SearchCategory, "lab", "letter")}
	first, err := r.Files.List(ctx, a.ID, domain.ListQuery{Limit: 1, Where: where})
	if err != nil || !slices.Equal(fileIDs(first.Files), fileIDs([]domain.File{lab})) || !first.HasMore {
		t.Fatalf("first page: %+v %v", first, err)
	}
	second, err := r.Files.List(ctx, a.ID, domain.ListQuery{Limit: 1, Where: where, After: &first.Next})
	if err != nil || !slices.Equal(fileIDs(second.Files), fileIDs([]domain.File{letter})) || second.HasMore {
		t.Errorf("second page: %+v %v", second, err)
	}
}

// fileIDs are the files' ids, in order.
func fileIDs(files []domain.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.ID.String()
	}
	return out
}

func newFile(company domain.CompanyID, customer domain.CustomerID, size int64) domain.File {
	id := domain.NewFileID()
	now := time.Now().UTC()
	return domain.File{
		ID: id, CompanyID: company, CustomerID: customer, Name: "befund.pdf", ContentType: "application/pdf",
		Size: size, SHA256: []byte("0123456789abcdef0123456789abcdef"), StorageKey: id.String(),
		Source: domain.SourceGDT, CreatedAt: now, UpdatedAt: now,
	}
}

func ptrTo[T any](v T) *T { return &v }

// assertionIDsOnce: a client's assertion id is accepted once until it
// expires, whoever tries it concurrently; another client may use the same
// id; an id of a client named with another company is refused by the schema.
func assertionIDsOnce(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, b, clientA, clientB := twoClients(t, r)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	until := now.Add(5 * time.Minute)
	var wins, conflicts atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			switch err := r.AssertionIDs.Use(ctx, a.ID, clientA.ID, "jti-1", until, now); {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, domain.ErrConflict):
				conflicts.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || conflicts.Load() != 9 {
		t.Errorf("ten concurrent uses: %d accepted, %d refused", wins.Load(), conflicts.Load())
	}
	if err := r.AssertionIDs.Use(ctx, b.ID, clientB.ID, "jti-1", until, now); err != nil {
		t.Errorf("another client's id: %v", err)
	}
	if err := r.AssertionIDs.Use(ctx, b.ID, clientA.ID, "jti-2", until, now); err == nil {
		t.Error("an id recorded for another company's client")
	}
	if err := r.AssertionIDs.Use(ctx, a.ID, clientA.ID, "jti-1", until, until.Add(-time.Second)); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("before it expires: %v, want a conflict", err)
	}
	if err := r.AssertionIDs.Use(ctx, a.ID, clientA.ID, "jti-1", until.Add(5*time.Minute), until.Add(time.Second)); err != nil {
		t.Errorf("after it expired: %v", err)
	}
}

// twoClients makes two companies with a client each.
func twoClients(t *testing.T, r Repositories) (a, b domain.Company, clientA, clientB domain.Client) {
	t.Helper()
	a, _ = NewCompany(t, r, "A", 10)
	b, _ = NewCompany(t, r, "B", 10)
	clientA, _, _ = domain.NewClient(a.ID, "Abrechnung", nil, time.Now())
	clientB, _, _ = domain.NewClient(b.ID, "Kalender", nil, time.Now())
	for _, c := range []domain.Client{clientA, clientB} {
		if err := r.Clients.Create(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	return a, b, clientA, clientB
}

// exportJobs: a client has at most bulk.MaxActive unfinished
// exports; concurrent claims take a job once; a lease held keeps it, one
// run out hands it on; only the holder saves; files are listed in order
// and known to the orphan sweep; a completed job's cut answers its
// transactionTime; a deleted job names its files once; expired ones are
// listed; another company sees none.
func exportJobs(t *testing.T, r Repositories) {
	ctx := context.Background()
	a, b, clientA, _ := twoClients(t, r)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	h1, err := r.Exports.Horizon(ctx)
	if err != nil || h1 <= 0 {
		t.Fatalf("horizon: %d %v", h1, err)
	}
	var jobs []bulk.Job
	for i := range bulk.MaxActive + 1 {
		at := now.Add(time.Duration(i) * time.Millisecond)
		j := bulk.Job{ID: uuid.Must(uuid.NewV7()), Company: a.ID, Client: clientA.ID, Scopes: domain.Scopes{"customers:read"},
			Types: []string{"Patient", "Observation"}, Cut: h1, TransactionTime: at, Request: "https://praxis.example/fhir/R4/$export",
			State: bulk.Accepted, CreatedAt: at, ExpiresAt: at.Add(bulk.FileExpiry)}
		err := r.Exports.Create(ctx, j)
		if i == bulk.MaxActive {
			if !errors.Is(err, bulk.ErrTooManyJobs) {
				t.Fatalf("export %d of one client: %v, want ErrTooManyExports", i+1, err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	if _, err := r.Exports.Get(ctx, b.ID, jobs[0].ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's job: %v", err)
	}
	got, err := r.Exports.Get(ctx, a.ID, jobs[0].ID)
	if err != nil || got.Client != clientA.ID || !slices.Equal(got.Types, jobs[0].Types) || got.Cut != h1 || !got.TransactionTime.Equal(jobs[0].TransactionTime) ||
		!slices.Equal(got.Scopes, jobs[0].Scopes) || got.State != bulk.Accepted {
		t.Fatalf("round trip: %+v %v", got, err)
	}

	// Concurrent claims: each job once, the oldest first.
	claimed := make(chan uuid.UUID, 10)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			j, err := r.Exports.Claim(ctx, fmt.Sprintf("replica-%d", i), now, time.Minute)
			if err != nil {
				t.Error(err)
			} else if j != nil {
				if j.State != bulk.Running || j.Attempts != 1 {
					t.Errorf("claimed: %+v", j)
				}
				claimed <- j.ID
			}
		})
	}
	wg.Wait()
	close(claimed)
	var ids []uuid.UUID
	for id := range claimed {
		ids = append(ids, id)
	}
	if len(ids) != len(jobs) {
		t.Fatalf("six claims of %d jobs took %d", len(jobs), len(ids))
	}
	if j, err := r.Exports.Claim(ctx, "late", now.Add(30*time.Second), time.Minute); err != nil || j != nil {
		t.Errorf("a claim while every lease holds: %+v %v", j, err)
	}
	j, err := r.Exports.Claim(ctx, "heir", now.Add(2*time.Minute), time.Minute)
	if err != nil || j == nil || j.ID != jobs[0].ID || j.Attempts != 2 {
		t.Fatalf("a lease run out: %+v %v, want the oldest job on its second attempt", j, err)
	}
	full, _ := r.Exports.Get(ctx, a.ID, j.ID)
	full.Files = []bulk.File{{Type: "Patient", Name: "export-a-1.ndjson", Count: 10}, {Type: "Observation", Name: "export-a-2.ndjson", Count: 3}}
	full.Progress = "half"
	if err := r.Exports.Save(ctx, full, "replica-0"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("a save by the runner that lost the lease: %v", err)
	}
	if err := r.Exports.Save(ctx, full, "heir"); err != nil {
		t.Fatal(err)
	}
	known, err := r.Files.KnownStorageKeys(ctx, a.ID, []string{"export-a-1.ndjson", "export-a-2.ndjson", "export-a-3.ndjson"})
	if err != nil || !known["export-a-1.ndjson"] || !known["export-a-2.ndjson"] || known["export-a-3.ndjson"] {
		t.Errorf("the orphan sweep's view of the files: %v %v", known, err)
	}
	if known, _ := r.Files.KnownStorageKeys(ctx, b.ID, []string{"export-a-1.ndjson"}); len(known) != 0 {
		t.Errorf("another company knows the files: %v", known)
	}
	done := now.Add(3 * time.Minute)
	full.State, full.CompletedAt, full.ExpiresAt = bulk.Completed, &done, done.Add(bulk.FileExpiry)
	if err := r.Exports.Save(ctx, full, "heir"); err != nil {
		t.Fatal(err)
	}
	if err := r.Exports.Save(ctx, full, "heir"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("a save after completion: %v", err)
	}
	got, _ = r.Exports.Get(ctx, a.ID, j.ID)
	if got.State != bulk.Completed || len(got.Files) != 2 || got.Files[0].Name != "export-a-1.ndjson" || got.Files[1].Count != 3 || got.Progress != "half" {
		t.Errorf("completed: %+v", got)
	}
	if cut, ok, err := r.Exports.CutAt(ctx, a.ID, jobs[0].TransactionTime); err != nil || !ok || cut != h1 {
		t.Errorf("the cut of its transactionTime: %d %v %v", cut, ok, err)
	}
	if _, ok, _ := r.Exports.CutAt(ctx, a.ID, jobs[1].TransactionTime); ok {
		t.Error("an unfinished job's cut")
	}
	if _, ok, _ := r.Exports.CutAt(ctx, b.ID, jobs[0].TransactionTime); ok {
		t.Error("another company's cut")
	}
	expired, err := r.Exports.Expired(ctx, done.Add(bulk.FileExpiry+time.Second))
	if err != nil || len(expired) != 1 || expired[0].ID != j.ID {
		t.Errorf("expired: %+v %v", expired, err)
	}
	if _, err := r.Exports.Delete(ctx, b.ID, j.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("deleted by another company: %v", err)
	}
	names, err := r.Exports.Delete(ctx, a.ID, j.ID)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"export-a-1.ndjson", "export-a-2.ndjson"}) {
		t.Errorf("delete: %v %v", names, err)
	}
	if names, err := r.Exports.Delete(ctx, a.ID, j.ID); !errors.Is(err, domain.ErrNotFound) || len(names) != 0 {
		t.Errorf("deleted twice: %v %v", names, err)
	}
	if known, _ := r.Files.KnownStorageKeys(ctx, a.ID, []string{"export-a-1.ndjson"}); len(known) != 0 {
		t.Errorf("a deleted job's files are still known: %v", known)
	}
	if _, ok, _ := r.Exports.CutAt(ctx, a.ID, jobs[0].TransactionTime); !ok {
		t.Error("a deleted job's cut is forgotten before its time")
	}
	// Deleted, a job no longer counts against its client.
	next := jobs[0]
	next.ID, next.State = uuid.Must(uuid.NewV7()), bulk.Accepted
	if err := r.Exports.Create(ctx, next); err != nil {
		t.Errorf("an export after one was deleted: %v", err)
	}
	// Past its memory, a deleted job is forgotten.
	if _, err := r.Exports.Expired(ctx, done.Add(bulk.FileExpiry+bulk.JobMemory+time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Exports.Get(ctx, a.ID, j.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("a deleted job past its memory: %v", err)
	}
	if h2, err := r.Exports.Horizon(ctx); err != nil || h2 < h1 {
		t.Errorf("the horizon went back: %d after %d (%v)", h2, h1, err)
	}
}
