package porttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// RecordRepositories is what the record-store suite needs of a database adapter.
type RecordRepositories struct {
	Repositories
	Records      ports.RecordStore
	DeviceOrders ports.DeviceOrderStore
}

var suiteRC = domain.RuleContext{Now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Zone: time.UTC}

type recordFixture struct {
	r        RecordRepositories
	company  domain.CompanyID
	customer domain.CustomerID
}

func newRecordFixture(t *testing.T, newRepos func(t *testing.T) RecordRepositories) recordFixture {
	t.Helper()
	r := newRepos(t)
	c, _ := NewCompany(t, r.Repositories, "Praxis", 1000)
	return recordFixture{r: r, company: c.ID, customer: NewCustomer(t, r.Repositories, c.ID, 0).ID}
}

// insert stores kind's example for the fixture's customer in its own transaction.
func (f recordFixture) insert(t *testing.T, ctx context.Context, k *domain.Kind) ports.StoredObject {
	t.Helper()
	var stored ports.StoredObject
	err := f.r.Tx.InTx(ctx, func(ctx context.Context) error {
		var err error
		stored, err = f.insertIn(ctx, k, f.company, f.customer)
		return err
	})
	if err != nil {
		t.Fatalf("insert %s: %v", k.Slug, err)
	}
	return stored
}

func (f recordFixture) insertIn(ctx context.Context, k *domain.Kind, company domain.CompanyID, customer domain.CustomerID) (ports.StoredObject, error) {
	ids := domain.ExampleIDs{Customer: customer, User: domain.NewObjectID(), Diagnosis: domain.NewObjectID(),
		Location: domain.NewObjectID(), Service: domain.NewObjectID(), Device: domain.NewObjectID()}
	obj, err := k.Decode(domain.ParseDocument([]byte(k.ExampleWith(ids))), suiteRC)
	if err != nil {
		return ports.StoredObject{}, err
	}
	return f.r.Records.Insert(ctx, company, k, ports.StoredObject{ID: domain.NewObjectID(), Customer: obj.Customer, Payload: obj.JSON, CreatedAt: time.Now()})
}

// follow reads the feed from q.After to its end, page by page, as it stands now.
func follow(t *testing.T, s ports.RecordStore, company domain.CompanyID, k *domain.Kind, q domain.ListQuery) ([]ports.StoredObject, domain.Cursor) {
	t.Helper()
	var all []ports.StoredObject
	for {
		page, err := s.List(context.Background(), company, k, q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Items...)
		q.After = &page.Next
		if !page.HasMore {
			return all, page.Next
		}
	}
}

// followUntil keeps following the feed, as a syncing client does, until it
// has received want objects or a minute has passed. A write is listed only
// once no older transaction can still commit before it: on PostgreSQL any
// open transaction of the cluster holds new writes back, never for good —
// and under make test other packages' tests share the server (a full
// `make test` once held this suite's feed back past 10 s). The bound only
// ends a failing case; a passing one returns as soon as all arrived.
func followUntil(t *testing.T, s ports.RecordStore, company domain.CompanyID, k *domain.Kind, q domain.ListQuery, want int) ([]ports.StoredObject, domain.Cursor) {
	t.Helper()
	var all []ports.StoredObject
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		got, next := follow(t, s, company, k, q)
		all = append(all, got...)
		q.After = &next
		if len(all) >= want || time.Now().After(deadline) {
			return all, next
		}
	}
}

func ids(objs []ports.StoredObject) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.ID
	}
	return out
}

// notes is the plain clinical kind the feed cases write.
var notes = domain.KindOf("notes")

// RunRecordStoreSuite checks a ports.RecordStore, every kind of the table
// included. Each case starts from its own newRepos, and runs in parallel
// with the others, except those that hold a transaction open on purpose:
// on PostgreSQL an open transaction holds back every database's feed, so
// they run first, not beside this suite's other cases.
func RunRecordStoreSuite(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	for _, c := range []struct {
		name   string
		run    func(t *testing.T, newRepos func(t *testing.T) RecordRepositories)
		serial bool // holds a transaction open on purpose
	}{
		{"every kind round-trips its example; another company sees nothing", everyKindRoundTrips, false},
		{"a committed write of a catalogue section moves only its company's catalogue version", catalogueVersionMoves, false},
		{"the schema refuses a record naming another company's customer", schemaRefusesForeignCustomer, false},
		{"paging 250 rows has no gap or duplicate; the resume cursor then sees only later writes", pagingHasNoGap, false},
		{"a transaction that commits late is not skipped", lateCommitNotSkipped, true},
		{"a dump lists a committed write that the feed holds back for an older open transaction", dumpListsHeldBackWrite, true},
		{"concurrent writers: a follower receives every write exactly once", concurrentWritersExactlyOnce, true},
		{"deletions are tombstones; updated_since filters", deletionsAreTombstones, false},
		{"a range of the change clock (an export's from and below) lists exactly the writes in it", changeRangeLists, false},
		{"customers: numbered by the store, updated with their svnr unique per company", customersNumbered, false},
		{"every write moves its object's own version by one, and no other company's object", versionsCount, false},
		{"device orders: numbered per company, found by number, device, patient and status; another company's none", deviceOrdersFound, false},
		{"customers: found by folded, phonetic, prefix, contains and exact names, dates, identifiers; counted; another company's never", patientsFound, false},
		{"customers: a search sorted by names, birth date and last change pages as a keyset over the keys and the number; another company's never", patientsSorted, false},
		{"observed sections: found by a row's code and date, kept in step by every write and delete; another company's never", observedFound, false},
		{"a section's list narrowed by payload fields, dates, days, creation and ids; another company's never", payloadConditions, false},
		{"erasure: every row of the company goes with its own in one transaction, its record stays; another company's rows stay", erasureEndsTheCompany, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !c.serial {
				t.Parallel()
			}
			c.run(t, newRepos)
		})
	}
}

// everyKindRoundTrips: every kind round-trips its example; another company sees nothing.
func everyKindRoundTrips(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	ctx := context.Background()
	for _, k := range domain.Kinds() {
		if k.Shape == domain.ShapeCustomer {
			continue
		}
		stored := f.insert(t, ctx, k)
		got, err := f.r.Records.Get(ctx, f.company, k, stored.ID, false)
		if err != nil || string(got.Payload) != string(stored.Payload) || k.HasCustomer() && (got.Customer == nil || *got.Customer != f.customer) {
			t.Errorf("%s: get %s %v, %v", k.Slug, got.Payload, got.Customer, err)
		}
		if _, err := f.r.Records.Get(ctx, other.ID, k, stored.ID, false); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%s: another company's get: %v", k.Slug, err)
		}
		if list, _ := follow(t, f.r.Records, other.ID, k, domain.ListQuery{Limit: 10}); len(list) != 0 {
			t.Errorf("%s: another company lists %v", k.Slug, ids(list))
		}
		q := domain.ListQuery{Limit: 10}
		if k.HasCustomer() {
			q.Customer = &f.customer
		}
		if list, _ := followUntil(t, f.r.Records, f.company, k, q, 1); len(list) != 1 || list[0].ID != stored.ID {
			t.Errorf("%s: list %v", k.Slug, ids(list))
		}
		if _, err := f.r.Records.Get(ctx, f.company, domain.KindOf("notes"), stored.ID, false); k.Slug != "notes" && !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%s: found as a note: %v", k.Slug, err)
		}
	}
}

// catalogueVersionMoves: a committed write of a catalogue section moves only its company's catalogue version.
func catalogueVersionMoves(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	ctx := context.Background()
	version := func(id domain.CompanyID) int64 {
		t.Helper()
		c, err := f.r.Companies.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return c.CatalogVersion
	}
	start, otherStart := version(f.company), version(other.ID)
	for _, slug := range domain.CatalogSections {
		f.insert(t, ctx, domain.KindOf(slug))
	}
	f.insert(t, ctx, notes)
	rollback := errors.New("rolled back")
	err := f.r.Tx.InTx(ctx, func(ctx context.Context) error {
		if _, err := f.insertIn(ctx, domain.KindOf("services"), f.company, f.customer); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if got, want := version(f.company), start+int64(len(domain.CatalogSections)); got != want {
		t.Errorf("catalogue version %d after %d catalogue writes, a note and a rolled-back write from %d; want %d", got, len(domain.CatalogSections), start, want)
	}
	if got := version(other.ID); got != otherStart {
		t.Errorf("another company's catalogue version moved: %d → %d", otherStart, got)
	}
}

// schemaRefusesForeignCustomer: the schema refuses a record naming another company's customer.
func schemaRefusesForeignCustomer(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	otherCustomer := NewCustomer(t, f.r.Repositories, other.ID, 0).ID
	err := f.r.Tx.InTx(context.Background(), func(ctx context.Context) error {
		_, err := f.insertIn(ctx, notes, f.company, otherCustomer)
		return err
	})
	if !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("a note of company A for company B's customer: %v, want a refusal", err)
	}
	if list, _ := follow(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 10}); len(list) != 0 {
		t.Errorf("stored anyway: %v", ids(list))
	}
}

// pagingHasNoGap: paging 250 rows has no gap or duplicate; the resume cursor then sees only later writes.
func pagingHasNoGap(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	ctx := context.Background()
	want := map[string]bool{}
	err := f.r.Tx.InTx(ctx, func(ctx context.Context) error { // one transaction: 250 rows of one change stamp
		for range 120 {
			o, err := f.insertIn(ctx, notes, f.company, f.customer)
			if err != nil {
				return err
			}
			want[o.ID] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 130 {
		want[f.insert(t, ctx, notes).ID] = true
	}
	got, resume := followUntil(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 100}, 250)
	seen := map[string]bool{}
	for _, o := range got {
		if seen[o.ID] || !want[o.ID] {
			t.Fatalf("duplicate or foreign %s", o.ID)
		}
		seen[o.ID] = true
	}
	if len(seen) != 250 {
		t.Fatalf("%d of 250 rows listed", len(seen))
	}
	if again, _ := follow(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 100, After: &resume}); len(again) != 0 {
		t.Fatalf("resume cursor gave %d old rows", len(again))
	}
	later := f.insert(t, ctx, notes)
	if again, _ := followUntil(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 100, After: &resume}, 1); len(again) != 1 || again[0].ID != later.ID {
		t.Fatalf("resume after a write: %v", ids(again))
	}
}

// changeRangeLists: From and Below keep the writes stamped in [From,
// Below): three writes, each its own stamp; the range of the second
// lists it alone, also on another company's side of the same clock.
func changeRangeLists(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	ctx := context.Background()
	first, second, third := f.insert(t, ctx, notes), f.insert(t, ctx, notes), f.insert(t, ctx, notes)
	if first.Change >= second.Change || second.Change >= third.Change {
		t.Fatalf("stamps %d %d %d", first.Change, second.Change, third.Change)
	}
	got, _ := followUntil(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 10, From: second.Change, Below: third.Change}, 1)
	if len(got) != 1 || got[0].ID != second.ID {
		t.Errorf("[second, third): %v, want %s", ids(got), second.ID)
	}
	if got, _ := follow(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 10, Below: first.Change}); len(got) != 0 {
		t.Errorf("below the first: %v", ids(got))
	}
	other, _ := NewCompany(t, f.r.Repositories, "Andere Praxis", 1000)
	if got, _ := follow(t, f.r.Records, other.ID, notes, domain.ListQuery{Limit: 10, From: first.Change}); len(got) != 0 {
		t.Errorf("another company's range: %v", ids(got))
	}
}

// lateCommitNotSkipped: a transaction that commits late is not skipped.
func lateCommitNotSkipped(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	ctx := context.Background()
	_, start := follow(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 100})
	var early, late ports.StoredObject
	began, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // begins first, commits last
		defer wg.Done()
		err := f.r.Tx.InTx(ctx, func(ctx context.Context) error {
			var err error
			early, err = f.insertIn(ctx, notes, f.company, f.customer)
			close(began)
			<-release
			return err
		})
		if err != nil {
			t.Error(err)
		}
	}()
	<-began
	lateDone := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(lateDone)
		late = f.insert(t, ctx, notes)
	}()
	select { // on PostgreSQL the late writer commits now; SQLite's single writer waits
	case <-lateDone:
	case <-time.After(500 * time.Millisecond):
	}
	// Read the feed while the early transaction is open. (On SQLite the
	// read queues behind it: one connection; so the release comes after a bound.)
	var first []ports.StoredObject
	var mid domain.Cursor
	read := make(chan struct{})
	go func() {
		defer close(read)
		first, mid = follow(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 100, After: &start})
	}()
	select {
	case <-read:
	case <-time.After(500 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	<-read
	rest, _ := followUntil(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 100, After: &mid}, 2-len(first))
	got := ids(append(first, rest...))
	if len(got) != 2 || !contains(got, early.ID) || !contains(got, late.ID) {
		t.Fatalf("a follower received %v, want the early %s and the late %s exactly once", got, early.ID, late.ID)
	}
}

// dumpListsHeldBackWrite: a dump lists a committed write that the feed holds back for an older open transaction.
func dumpListsHeldBackWrite(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	ctx := context.Background()
	began, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() { // begins first, commits last
		done <- f.r.Tx.InTx(ctx, func(ctx context.Context) error {
			_, err := f.insertIn(ctx, notes, f.company, f.customer)
			close(began)
			<-release
			return err
		})
	}()
	<-began
	lateDone := make(chan ports.StoredObject, 1)
	go func() { lateDone <- f.insert(t, ctx, notes) }()
	select {
	case late := <-lateDone: // PostgreSQL: committed while the older transaction is open
		if feed, _ := follow(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 100}); contains(ids(feed), late.ID) {
			t.Errorf("the feed lists %s before the older transaction ended: a follower's cursor would pass that one", late.ID)
		}
		if dumped, _ := follow(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 100, Dump: true}); !contains(ids(dumped), late.ID) {
			t.Errorf("a dump lists %v, without the committed %s", ids(dumped), late.ID)
		}
		close(release)
	case <-time.After(500 * time.Millisecond): // SQLite: one writer at a time, nothing is held back
		close(release)
		<-lateDone
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if dumped, _ := follow(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 100, Dump: true}); len(dumped) != 2 {
		t.Errorf("a dump after both committed lists %v, want both", ids(dumped))
	}
}

// concurrentWritersExactlyOnce: concurrent writers: a follower receives every write exactly once.
func concurrentWritersExactlyOnce(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	ctx := context.Background()
	const writers, each = 4, 25
	var wg sync.WaitGroup
	done := make(chan struct{})
	seen := map[string]int{}
	var cursor *domain.Cursor
	followerDone := make(chan struct{})
	go func() {
		defer close(followerDone)
		for {
			select {
			case <-done:
				return
			default:
			}
			page, err := f.r.Records.List(ctx, f.company, notes, domain.ListQuery{Limit: 7, After: cursor})
			if err != nil {
				t.Error(err)
				return
			}
			for _, o := range page.Items {
				seen[o.ID]++
			}
			cursor = &page.Next
		}
	}()
	for range writers {
		wg.Go(func() {
			for range each {
				f.insert(t, ctx, notes)
			}
		})
	}
	wg.Wait()
	close(done)
	<-followerDone
	rest, _ := followUntil(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 7, After: cursor}, writers*each-len(seen))
	for _, o := range rest {
		seen[o.ID]++
	}
	if len(seen) != writers*each {
		t.Fatalf("the follower received %d of %d writes", len(seen), writers*each)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s received %d times", id, n)
		}
	}
}

// deletionsAreTombstones: deletions are tombstones; updated_since filters.
func deletionsAreTombstones(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	ctx := context.Background()
	a := f.insert(t, ctx, notes)
	time.Sleep(1100 * time.Millisecond) // updated_at is kept to the microsecond; leave a clear gap
	since := time.Now()
	b := f.insert(t, ctx, notes)
	if got, _ := followUntil(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 10, UpdatedSince: &since}, 1); len(got) != 1 || got[0].ID != b.ID {
		t.Errorf("updated_since: %v, want only %s", ids(got), b.ID)
	}
	err := f.r.Tx.InTx(ctx, func(ctx context.Context) error { return f.r.Records.Delete(ctx, f.company, notes, a.ID, time.Now()) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Records.Get(ctx, f.company, notes, a.ID, false); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("deleted record: %v", err)
	}
	if got, _ := followUntil(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 10}, 1); len(got) != 1 || got[0].ID != b.ID {
		t.Errorf("live list: %v", ids(got))
	}
	var got []ports.StoredObject
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, _ = follow(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 10, IncludeDeleted: true}); len(got) == 2 && got[1].DeletedAt != nil {
			break // the tombstone has moved to the end of the feed
		}
	}
	if len(got) != 2 || got[1].ID != a.ID || got[1].DeletedAt == nil {
		t.Errorf("with tombstones: %+v", got)
	}
	err = f.r.Tx.InTx(ctx, func(ctx context.Context) error { return f.r.Records.Delete(ctx, f.company, notes, a.ID, time.Now()) })
	if !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
}

// customersNumbered: customers: numbered by the store, updated with their svnr unique per company.
func customersNumbered(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	ctx := context.Background()
	k := domain.CustomersKind()
	obj, err := k.Decode(domain.ParseDocument([]byte(k.Example)), suiteRC)
	if err != nil {
		t.Fatal(err)
	}
	insert := func(company domain.CompanyID) (ports.StoredObject, error) {
		var s ports.StoredObject
		err := f.r.Tx.InTx(ctx, func(ctx context.Context) error {
			var err error
			s, err = f.r.Records.Insert(ctx, company, k, ports.StoredObject{Payload: obj.JSON, CreatedAt: time.Now()})
			return err
		})
		return s, err
	}
	first, err := insert(f.company)
	if err != nil || first.ID == "" {
		t.Fatalf("insert: %+v %v", first, err)
	}
	if _, err := insert(f.company); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("the same svnr twice in one company: %v, want ErrConflict", err)
	}
	if _, err := insert(other.ID); err != nil {
		t.Errorf("the same svnr in another company: %v", err)
	}
	if _, err := f.r.Records.Get(ctx, other.ID, k, first.ID, false); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's customer: %v", err)
	}
	list, _ := followUntil(t, f.r.Records, f.company, k, domain.ListQuery{Limit: 10}, 2)
	if len(list) != 2 || list[1].ID != first.ID {
		t.Errorf("customers feed %v", ids(list))
	}
	var updated ports.StoredObject
	err = f.r.Tx.InTx(ctx, func(ctx context.Context) error {
		updated, err = f.r.Records.Update(ctx, f.company, k, first.ID, []byte(`{"first_name":"B","svnr":null}`), time.Now())
		return err
	})
	if err != nil || updated.Change <= first.Change {
		t.Fatalf("update: %+v %v", updated, err)
	}
	if _, err := insert(f.company); err != nil {
		t.Errorf("svnr free again after the update: %v", err)
	}
	found, err := f.r.Records.Lookup(ctx, f.company, "customers", []string{first.ID, fmt.Sprint(f.customer), "99999"})
	if err != nil || len(found) != 2 {
		t.Errorf("lookup: %v %v", found, err)
	}
}

// versionsCount: every write moves its object's own version by one — an
// insert is 1, an update, a deletion and a replacement one more each — and
// never another object's, another company's included; Existing and the
// feed answer the version; an unchanged object keeps it.
func versionsCount(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	otherCustomer := NewCustomer(t, f.r.Repositories, other.ID, 0).ID
	ctx := context.Background()
	write := func(fn func(ctx context.Context) error) {
		t.Helper()
		if err := f.r.Tx.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	note := f.insert(t, ctx, notes)
	bystander := f.insert(t, ctx, notes)
	foreign, err := f.insertIn(ctx, notes, other.ID, otherCustomer)
	if err != nil {
		t.Fatal(err)
	}
	if note.Version != 1 || foreign.Version != 1 {
		t.Fatalf("versions when made: %d, %d; want 1", note.Version, foreign.Version)
	}
	for want := int64(2); want <= 4; want++ {
		var got ports.StoredObject
		write(func(ctx context.Context) (err error) {
			got, err = f.r.Records.Update(ctx, f.company, notes, note.ID, note.Payload, time.Now())
			return err
		})
		if got.Version != want {
			t.Fatalf("update %d: version %d", want-1, got.Version)
		}
	}
	// Another company's update of the same id finds nothing and moves nothing.
	err = f.r.Tx.InTx(ctx, func(ctx context.Context) error {
		_, err := f.r.Records.Update(ctx, other.ID, notes, note.ID, note.Payload, time.Now())
		return err
	})
	if !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's update: %v", err)
	}
	write(func(ctx context.Context) error { return f.r.Records.Delete(ctx, f.company, notes, note.ID, time.Now()) })
	existing, err := f.r.Records.Existing(ctx, f.company, notes, []string{note.ID, bystander.ID, foreign.ID})
	if err != nil || len(existing) != 2 {
		t.Fatalf("existing: %v %v", existing, err)
	}
	if got := existing[note.ID]; got.Version != 5 || got.DeletedAt == nil {
		t.Errorf("after the deletion: version %d, deleted %v; want 5, deleted", got.Version, got.DeletedAt)
	}
	if got := existing[bystander.ID]; got.Version != 1 {
		t.Errorf("an object beside them: version %d, want 1", got.Version)
	}
	// An import's replacement makes it live again, one more; the live
	// object beside it, replaced in the same batch, counts one more too.
	changed := fmt.Appendf(nil, `{"customer_id":%d,"user_id":null,"appointment_id":null,"noted_on":"2026-03-11","title":"Replaced","text":"by a batch"}`, f.customer)
	write(func(ctx context.Context) error {
		return f.r.Records.Put(ctx, f.company, notes, []ports.StoredObject{{ID: note.ID, Customer: &f.customer, Payload: note.Payload},
			{ID: bystander.ID, Customer: &f.customer, Payload: changed}}, existing, time.Now())
	})
	got, err := f.r.Records.Get(ctx, f.company, notes, note.ID, false)
	if err != nil || got.Version != 6 || got.Customer == nil || *got.Customer != f.customer {
		t.Errorf("after a replacement: version %d customer %v %v, want 6 and %d", got.Version, got.Customer, err, f.customer)
	}
	if got, err := f.r.Records.Get(ctx, f.company, notes, bystander.ID, false); err != nil || got.Version != 2 || !strings.Contains(string(got.Payload), `"Replaced"`) {
		t.Errorf("the object replaced beside it: version %d, %s %v; want 2 and the new payload", got.Version, got.Payload, err)
	}
	if theirs, err := f.r.Records.Get(ctx, other.ID, notes, foreign.ID, false); err != nil || theirs.Version != 1 {
		t.Errorf("the other company's note: version %d %v, want 1", theirs.Version, err)
	}
	list, _ := followUntil(t, f.r.Records, f.company, notes, domain.ListQuery{Limit: 10, Customer: &f.customer}, 2)
	for _, o := range list {
		if want := map[string]int64{note.ID: 6, bystander.ID: 2}[o.ID]; o.Version != want {
			t.Errorf("the feed answers %s at version %d, want %d", o.ID, o.Version, want)
		}
	}
	// Customers count in their own table alike.
	customers := domain.CustomersKind()
	var c ports.StoredObject
	write(func(ctx context.Context) (err error) {
		c, err = f.r.Records.Update(ctx, f.company, customers, fmt.Sprint(f.customer), []byte(`{"first_name":"V","last_name":"W"}`), time.Now())
		return err
	})
	if c.Version != 2 {
		t.Errorf("a customer after one update: version %d, want 2", c.Version)
	}
	// The import's lookup by key: customers by number, only the company's own,
	// and a note's id asked for as another kind is no object of that kind.
	mine := fmt.Sprint(f.customer)
	found, err := f.r.Records.Existing(ctx, f.company, customers, []string{mine, fmt.Sprint(otherCustomer), "0", "x"})
	if err != nil || len(found) != 1 || found[mine].Version != 2 {
		t.Errorf("existing customers: %v %v; want only %s, version 2", found, err, mine)
	}
	if found, err := f.r.Records.Existing(ctx, f.company, domain.KindOf("diagnoses"), []string{note.ID, bystander.ID}); err != nil || len(found) != 0 {
		t.Errorf("notes asked for as diagnoses: %v %v; want none", found, err)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// observedFound: a section that declares HookObserved (measurements, lab
// results) is listed by its observed rows' codes and dates (ListQuery.Where):
// a condition holds on one row, conditions together on the same row,
// alternatives within one; inserts, a batch's Put, updates and deletes keep
// the rows in step; another company's objects are never answered.
func observedFound(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	theirCustomer := NewCustomer(t, f.r.Repositories, other.ID, 0).ID
	ctx := context.Background()
	measurements, labs := domain.KindOf("measurements"), domain.KindOf("lab-results")
	write := func(fn func(ctx context.Context) error) {
		t.Helper()
		if err := f.r.Tx.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	measurement := func(company domain.CompanyID, customer domain.CustomerID, at, loinc string) string {
		t.Helper()
		id := domain.NewObjectID()
		code := ""
		if loinc != "" {
			code = `,"loinc_code":"` + loinc + `"`
		}
		write(func(ctx context.Context) error {
			_, err := f.r.Records.Insert(ctx, company, measurements, ports.StoredObject{ID: id, Customer: &customer, CreatedAt: time.Now(),
				Payload: []byte(fmt.Sprintf(`{"customer_id":%d,"measured_at":%q,"type":"pulse"%s}`, customer, at, code))})
			return err
		})
		return id
	}
	pulse := measurement(f.company, f.customer, "2026-03-10T10:00:00+01:00", "8867-4")
	weight := measurement(f.company, f.customer, "2026-03-11T08:00:00Z", "29463-7")
	other3 := measurement(f.company, f.customer, "2026-03-12T00:00:00Z", "")
	theirs := measurement(other.ID, theirCustomer, "2026-03-10T10:00:00+01:00", "8867-4")
	lab := func(collected string, loincs ...string) []byte {
		rows := make([]string, len(loincs))
		for i, l := range loincs {
			rows[i] = fmt.Sprintf(`{"name":"row %d","loinc_code":%q}`, i+1, l)
		}
		at := "null"
		if collected != "" {
			at = strconv.Quote(collected)
		}
		return []byte(fmt.Sprintf(`{"customer_id":%d,"collected_at":%s,"reported_at":"2026-03-13T12:00:00Z","results":[%s]}`, f.customer, at, strings.Join(rows, ",")))
	}
	blood, undated := domain.NewObjectID(), domain.NewObjectID()
	write(func(ctx context.Context) error { // a batch, as the import writes one
		return f.r.Records.Put(ctx, f.company, labs, []ports.StoredObject{
			{ID: blood, Customer: &f.customer, Payload: lab("2026-03-10T07:30:00Z", "718-7", "6690-2")},
			{ID: undated, Customer: &f.customer, Payload: lab("", "718-7")},
		}, nil, time.Now())
	})
	followUntil(t, f.r.Records, f.company, measurements, domain.ListQuery{Limit: 10}, 3)
	followUntil(t, f.r.Records, f.company, labs, domain.ListQuery{Limit: 10}, 2)
	code := func(codes ...string) domain.Condition {
		return domain.Condition{Field: domain.SearchCode, Op: domain.OpEqual, Values: codes}
	}
	day := func(prefix, s string) domain.Condition {
		from, to, _ := domain.DateSpan(s)
		return domain.Condition{Field: domain.SearchObserved, Op: domain.OpInstants, Instants: []domain.InstantRange{{Prefix: prefix, From: from, To: to}}}
	}
	check := func(what string, company domain.CompanyID, k *domain.Kind, want []string, where ...domain.Condition) {
		t.Helper()
		page, err := f.r.Records.List(ctx, company, k, domain.ListQuery{Limit: 10, Where: where})
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		if got := ids(page.Items); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	check("a code", f.company, measurements, []string{pulse}, code("8867-4"))
	check("either of two codes", f.company, measurements, []string{pulse, weight}, code("8867-4", "29463-7"))
	check("no code", f.company, measurements, nil, code())
	check("on a day", f.company, measurements, []string{weight}, day("eq", "2026-03-11"))
	check("on a day, the offset's", f.company, measurements, []string{pulse}, day("eq", "2026-03-10"))
	check("from a day", f.company, measurements, []string{weight, other3}, day("ge", "2026-03-11"))
	check("after a day", f.company, measurements, []string{other3}, day("gt", "2026-03-11"))
	check("before a day", f.company, measurements, []string{pulse}, day("lt", "2026-03-11"))
	check("up to a day", f.company, measurements, []string{pulse, weight}, day("le", "2026-03-11"))
	check("not on a day", f.company, measurements, []string{pulse, other3}, day("ne", "2026-03-11"))
	check("a code on another day", f.company, measurements, nil, code("8867-4"), day("eq", "2026-03-11"))
	check("another company's", other.ID, measurements, []string{theirs}, code("8867-4"))
	check("a row's code", f.company, labs, []string{blood, undated}, code("718-7"))
	check("another row's code", f.company, labs, []string{blood}, code("6690-2"))
	check("collected on a day (none known: never)", f.company, labs, []string{blood}, day("eq", "2026-03-10"))
	check("a row's code, collected on a day", f.company, labs, []string{blood}, code("718-7"), day("eq", "2026-03-10"))
	check("a lab result's rows, not another company's", other.ID, labs, nil, code("718-7"))
	// An update, a deletion and an import's replacement keep the rows in step.
	write(func(ctx context.Context) error {
		_, err := f.r.Records.Update(ctx, f.company, labs, blood, lab("2026-03-10T07:30:00Z", "718-7"), time.Now())
		return err
	})
	write(func(ctx context.Context) error {
		return f.r.Records.Delete(ctx, f.company, measurements, pulse, time.Now())
	})
	followUntil(t, f.r.Records, f.company, labs, domain.ListQuery{Limit: 10}, 2) // the update on the feed
	check("a row still held", f.company, labs, []string{blood, undated}, code("718-7"))
	check("a row no longer held", f.company, labs, nil, code("6690-2"))
	check("a deleted measurement", f.company, measurements, nil, code("8867-4"))
	existing, err := f.r.Records.Existing(ctx, f.company, measurements, []string{pulse})
	if err != nil {
		t.Fatal(err)
	}
	write(func(ctx context.Context) error {
		return f.r.Records.Put(ctx, f.company, measurements, []ports.StoredObject{{ID: pulse, Customer: &f.customer,
			Payload: []byte(fmt.Sprintf(`{"customer_id":%d,"measured_at":"2026-03-14T09:00:00Z","type":"pulse","loinc_code":"8867-4"}`, f.customer))}}, existing, time.Now())
	})
	followUntil(t, f.r.Records, f.company, measurements, domain.ListQuery{Limit: 10}, 3)
	check("live again, measured on another day", f.company, measurements, []string{pulse}, code("8867-4"), day("eq", "2026-03-14"))
}

// payloadConditions: ListQuery.Where on a generic section's payload
// fields (text equal to any value; a date's day or an instant's second
// against date search values by every prefix), its creation, its last
// change (at the second the answers spell) and its ids.
func payloadConditions(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	theirCustomer := NewCustomer(t, f.r.Repositories, other.ID, 0).ID
	ctx := context.Background()
	diagnoses, measurements := domain.KindOf("diagnoses"), domain.KindOf("measurements")
	insert := func(company domain.CompanyID, customer domain.CustomerID, k *domain.Kind, created time.Time, payload string) string {
		t.Helper()
		id := domain.NewObjectID()
		if err := f.r.Tx.InTx(ctx, func(ctx context.Context) error {
			_, err := f.r.Records.Insert(ctx, company, k, ports.StoredObject{ID: id, Customer: &customer, CreatedAt: created,
				Payload: []byte(fmt.Sprintf(payload, customer))})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	march := func(day, hour int) time.Time {
		return time.Date(2026, 3, day, hour, 0, 0, 0, time.UTC).Add(250 * time.Millisecond)
	} // a fraction the answers drop
	hypertension := insert(f.company, f.customer, diagnoses, march(10, 9), `{"customer_id":%d,"icd10_code":"I10","diagnosed_on":"2026-03-10"}`)
	diabetes := insert(f.company, f.customer, diagnoses, march(11, 9), `{"customer_id":%d,"icd10_code":"E11.9","diagnosed_on":"2026-03-11"}`)
	theirs := insert(other.ID, theirCustomer, diagnoses, march(10, 9), `{"customer_id":%d,"icd10_code":"I10","diagnosed_on":"2026-03-10"}`)
	evening := insert(f.company, f.customer, measurements, march(12, 9), `{"customer_id":%d,"measured_at":"2026-03-10T23:30:00-01:00","type":"pulse"}`)
	morning := insert(f.company, f.customer, measurements, march(12, 9), `{"customer_id":%d,"measured_at":"2026-03-11T08:00:00+01:00","type":"pulse"}`)
	followUntil(t, f.r.Records, f.company, diagnoses, domain.ListQuery{Limit: 10}, 2)
	followUntil(t, f.r.Records, f.company, measurements, domain.ListQuery{Limit: 10}, 2)
	equal := func(path string, values ...string) domain.Condition {
		return domain.Condition{Field: domain.SearchPayload, Op: domain.OpEqual, Path: path, Values: values}
	}
	dated := func(field domain.SearchField, path, prefix, s string) domain.Condition {
		from, to, ok := domain.ValueSpan(s)
		if !ok {
			t.Fatal(s)
		}
		return domain.Condition{Field: field, Op: domain.OpInstants, Path: path, Instants: []domain.InstantRange{{Prefix: prefix, From: from, To: to}}}
	}
	for _, c := range []struct {
		what    string
		company domain.CompanyID
		k       *domain.Kind
		want    []string
		where   []domain.Condition
	}{
		{"a code", f.company, diagnoses, []string{hypertension}, []domain.Condition{equal("icd10_code", "I10")}},
		{"either of two codes", f.company, diagnoses, []string{hypertension, diabetes}, []domain.Condition{equal("icd10_code", "I10", "E11.9", "C50")}},
		{"no code", f.company, diagnoses, nil, []domain.Condition{equal("icd10_code")}},
		{"another company's code", other.ID, diagnoses, []string{theirs}, []domain.Condition{equal("icd10_code", "I10")}},
		{"a day", f.company, diagnoses, []string{diabetes}, []domain.Condition{dated(domain.SearchPayload, "diagnosed_on", "eq", "2026-03-11")}},
		{"a day against a month", f.company, diagnoses, []string{hypertension, diabetes}, []domain.Condition{dated(domain.SearchPayload, "diagnosed_on", "eq", "2026-03")}},
		{"a day against an instant inside it", f.company, diagnoses, []string{hypertension}, []domain.Condition{dated(domain.SearchPayload, "diagnosed_on", "ge", "2026-03-10T12:00:00Z"), dated(domain.SearchPayload, "diagnosed_on", "lt", "2026-03-11")}},
		{"a day, not another", f.company, diagnoses, []string{hypertension}, []domain.Condition{dated(domain.SearchPayload, "diagnosed_on", "ne", "2026-03-11")}},
		{"a day and a code", f.company, diagnoses, nil, []domain.Condition{dated(domain.SearchPayload, "diagnosed_on", "eq", "2026-03-11"), equal("icd10_code", "I10")}},
		{"an instant's UTC day", f.company, measurements, []string{evening, morning}, []domain.Condition{dated(domain.SearchPayload, "measured_at", "eq", "2026-03-11")}},
		{"after an instant", f.company, measurements, []string{morning}, []domain.Condition{dated(domain.SearchPayload, "measured_at", "gt", "2026-03-11T00:30:00Z")}},
		{"up to an instant's second", f.company, measurements, []string{evening}, []domain.Condition{dated(domain.SearchPayload, "measured_at", "le", "2026-03-11T00:30:00Z")}},
		{"created on a day", f.company, diagnoses, []string{diabetes}, []domain.Condition{dated(domain.SearchStored, "", "eq", "2026-03-11")}},
		{"created before a day", f.company, diagnoses, []string{hypertension}, []domain.Condition{dated(domain.SearchStored, "", "lt", "2026-03-11")}},
		{"changed on a day", f.company, diagnoses, []string{diabetes}, []domain.Condition{dated(domain.SearchUpdated, "", "eq", "2026-03-11")}},
		{"changed in the second after another", f.company, diagnoses, []string{diabetes}, []domain.Condition{dated(domain.SearchUpdated, "", "gt", "2026-03-11T08:59:59Z")}},
		{"changed at a second", f.company, diagnoses, []string{diabetes}, []domain.Condition{dated(domain.SearchUpdated, "", "eq", "2026-03-11T09:00:00Z")}},
		{"changed not at a second", f.company, diagnoses, []string{hypertension}, []domain.Condition{dated(domain.SearchUpdated, "", "ne", "2026-03-11T09:00:00Z")}},
		{"changed before a second", f.company, diagnoses, []string{hypertension}, []domain.Condition{dated(domain.SearchUpdated, "", "lt", "2026-03-11T09:00:00Z")}},
		{"changed up to a second", f.company, diagnoses, []string{hypertension, diabetes}, []domain.Condition{dated(domain.SearchUpdated, "", "le", "2026-03-11T09:00:00Z")}},
		{"by id, another company's left out", f.company, diagnoses, []string{diabetes}, []domain.Condition{{Field: domain.SearchID, Op: domain.OpEqual, Values: []string{diabetes, theirs, "not-an-id"}}}},
		{"customers changed from a day", f.company, domain.CustomersKind(), []string{fmt.Sprint(f.customer)}, []domain.Condition{dated(domain.SearchUpdated, "", "ge", "2026-01-01")}},
		{"customers changed before a day", f.company, domain.CustomersKind(), nil, []domain.Condition{dated(domain.SearchUpdated, "", "lt", "2026-01-01")}},
	} {
		page, err := f.r.Records.List(ctx, c.company, c.k, domain.ListQuery{Limit: 10, Where: c.where})
		if err != nil {
			t.Errorf("%s: %v", c.what, err)
			continue
		}
		if got := ids(page.Items); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(c.want))) {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
	// A customers' count (a search) keeps to the last change too.
	for _, c := range []struct {
		prefix string
		want   int64
	}{{"ge", 1}, {"lt", 0}} {
		page, err := f.r.Records.List(ctx, f.company, domain.CustomersKind(), domain.ListQuery{Limit: 10, Total: domain.TotalAccurate,
			Where: []domain.Condition{dated(domain.SearchUpdated, "", c.prefix, "2026-01-01")}})
		if err != nil || page.Total == nil || *page.Total != c.want || int64(len(page.Items)) != c.want {
			t.Errorf("customers changed %s 2026-01-01, counted: %+v %v, want %d", c.prefix, page.Total, err, c.want)
		}
	}
}
