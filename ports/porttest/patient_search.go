package porttest

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// patientsFound: a search of the customers' list (docs/contract.md §15,
// "Finding a patient") finds by folded, phonetic, prefix, contains and exact
// names, birth dates with prefixes, identifiers, phone and e-mail, ANDs its
// filters, counts when asked, pages full, and never answers another
// company's patients of the same name.
func patientsFound(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	ctx := context.Background()
	k := domain.CustomersKind()
	people := []string{
		`{"first_name":"Anna","last_name":"Müller","birth_date":"1980-02-29","svnr":"1237010180","email":"Anna.Mueller@example.at","phone":"+436641234567"}`,
		`{"first_name":"Hans Peter","last_name":"Mueller","birth_date":"1975-06-01","kvnr":"A123456780"}`,
		`{"first_name":"Eva","last_name":"MÜLLER-Lüdenscheidt","birth_date":"1990-12-24"}`,
		`{"first_name":"Sepp","last_name":"Meier","birth_date":"1960-01-15"}`,
		`{"first_name":"Maria","last_name":"Mayr","birth_date":"1960-01-16"}`,
		`{"first_name":"Liam","last_name":"O'Brien","birth_date":"2001-03-03"}`,
		`{"first_name":"Franz","last_name":"Straße","birth_date":"1950-05-05"}`,
	}
	byName := map[string]string{}
	write := func(company domain.CompanyID, payload string) string { return f.insertCustomer(t, company, payload) }
	for _, p := range people {
		x := domain.PatientIndexOf([]byte(p))
		byName[x.Family+"/"+x.Given] = write(f.company, p)
		write(other.ID, p) // the same patients in another company: never found here
	}
	id := func(family, given string) string { return byName[family+"/"+given] }
	anna, hans, eva := id("muller", "anna"), id("muller", "hans peter"), id("muller ludenscheidt", "eva")
	meier, mayr, obrien, franz := id("meier", "sepp"), id("mayr", "maria"), id("o brien", "liam"), id("strasse", "franz")

	name := func(param string, field domain.SearchField, op domain.SearchOp, raw string) domain.Condition {
		c, err := domain.NameCondition(param, field, op, raw)
		if err != nil {
			t.Fatalf("%s=%s: %v", param, raw, err)
		}
		return c
	}
	dates := func(values ...string) domain.Condition {
		c := domain.Condition{Field: domain.SearchBirthDate, Op: domain.OpRange}
		for _, v := range values {
			r, ok := domain.ParseDateRange(v)
			if !ok {
				t.Fatalf("date %q", v)
			}
			c.Ranges = append(c.Ranges, r)
		}
		return c
	}
	equal := func(field domain.SearchField, v ...string) domain.Condition {
		return domain.Condition{Field: field, Op: domain.OpEqual, Values: v}
	}
	for _, c := range []struct {
		name  string
		conds []domain.Condition
		want  []string
	}{
		{"Müller", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "Müller")}, []string{anna, hans, eva}},
		{"MÜLLER", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "MÜLLER")}, []string{anna, hans, eva}},
		{"Mueller", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "Mueller")}, []string{anna, hans, eva}},
		{"muller", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "muller")}, []string{anna, hans, eva}},
		{"the prefix mül", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "mül")}, []string{anna, hans, eva}},
		{"a part: Lüd", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "Lüd")}, []string{eva}},
		{"contains üll", []domain.Condition{name("family", domain.SearchFamily, domain.OpContains, "üll")}, []string{anna, hans, eva}},
		{"contains across the hyphen", []domain.Condition{name("family", domain.SearchFamily, domain.OpContains, "ller-lü")}, []string{eva}},
		{"exact Müller", []domain.Condition{name("family", domain.SearchFamily, domain.OpExact, "Müller")}, []string{anna}},
		{"exact MÜLLER is not Müller", []domain.Condition{name("family", domain.SearchFamily, domain.OpExact, "müller")}, nil},
		{"O'Brien by Brien", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "Brien")}, []string{obrien}},
		{"O'Brien by OBrien", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "OBrien")}, []string{obrien}},
		{"Strasse finds Straße", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "Strasse")}, []string{franz}},
		{"phonetic Meyer", []domain.Condition{name("phonetic", domain.SearchPhonetic, domain.OpEqual, "Meyer")}, []string{meier, mayr}},
		{"phonetic Mayer", []domain.Condition{name("phonetic", domain.SearchPhonetic, domain.OpEqual, "Mayer")}, []string{meier, mayr}},
		{"given: a second first name", []domain.Condition{name("given", domain.SearchGiven, domain.OpPrefix, "Pet")}, []string{hans}},
		{"q: Anna Müller", []domain.Condition{name("q", domain.SearchName, domain.OpPrefix, "Anna Müller")}, []string{anna}},
		{"q: Müller, Anna", []domain.Condition{name("q", domain.SearchName, domain.OpPrefix, "Müller, Anna")}, []string{anna}},
		{"AND: Müller born 1975", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "Müller"), dates("1975")}, []string{hans}},
		{"birth date eq", []domain.Condition{dates("1960-01-15")}, []string{meier}},
		{"birth date ge and lt", []domain.Condition{dates("ge1960-01-16"), dates("lt1976")}, []string{hans, mayr}},
		{"birth dates as alternatives", []domain.Condition{dates("1950-05-05", "2001-03")}, []string{obrien, franz}},
		{"birth date ne", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "M"), dates("ne1960-01")}, []string{anna, hans, eva}},
		{"svnr", []domain.Condition{equal(domain.SearchSVNR, "1237010180")}, []string{anna}},
		{"kvnr", []domain.Condition{equal(domain.SearchKVNR, "A123456780")}, []string{hans}},
		{"phone", []domain.Condition{equal(domain.SearchPhone, "+436641234567")}, []string{anna}},
		{"e-mail in lower case", []domain.Condition{equal(domain.SearchEmail, "anna.mueller@example.at")}, []string{anna}},
		{"a family name alternative", []domain.Condition{{Field: domain.SearchFamily, Op: domain.OpPrefix, Values: []string{"meier", "mayr"}}}, []string{meier, mayr}},
		{"nobody", []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "Huber")}, nil},
	} {
		q := domain.ListQuery{Limit: 2, Search: c.conds, Total: domain.TotalAccurate}
		var got []string
		var total *int64
		for { // pages of 2: each full but the last, and no page after it
			page, err := f.r.Records.List(ctx, f.company, k, q)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if page.HasMore && len(page.Items) < q.Limit {
				t.Errorf("%s: a short page with more to come", c.name)
			}
			total = page.Total
			for _, o := range page.Items {
				got = append(got, o.ID)
			}
			if !page.HasMore {
				break
			}
			q.After = &page.Next
		}
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: found %v, want %v", c.name, got, want)
		}
		if total == nil || *total != int64(len(want)) {
			t.Errorf("%s: total %v, want %d", c.name, total, len(want))
		}
	}
	// An update moves the index with the payload.
	err := f.r.Tx.InTx(ctx, func(ctx context.Context) error {
		_, err := f.r.Records.Update(ctx, f.company, k, meier, []byte(`{"first_name":"Sepp","last_name":"Huber","birth_date":"1960-01-15"}`), time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := f.r.Records.List(ctx, f.company, k, domain.ListQuery{Limit: 10, Search: []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "Huber")}})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != meier || page.Total != nil {
		t.Errorf("after the update: %+v %v", page, err)
	}
	page, err = f.r.Records.List(ctx, f.company, k, domain.ListQuery{Limit: 10, Search: []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "Meier")}})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("the old name after the update: %+v %v", page, err)
	}
	// Put (the import) indexes what it writes, in batches.
	err = f.r.Tx.InTx(ctx, func(ctx context.Context) error {
		return f.r.Records.Put(ctx, f.company, k, []ports.StoredObject{
			{ID: "7000001", Payload: []byte(`{"first_name":"Karl","last_name":"Überreiter","birth_date":"1944-04-04"}`)},
			{ID: hans, Payload: []byte(`{"first_name":"Hans","last_name":"Ueberreiter","birth_date":"1975-06-01"}`)},
		}, map[string]ports.StoredObject{hans: {ID: hans}}, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err = f.r.Records.List(ctx, f.company, k, domain.ListQuery{Limit: 10, Search: []domain.Condition{name("family", domain.SearchFamily, domain.OpPrefix, "uberr")}})
	if err != nil || len(page.Items) != 2 {
		t.Errorf("imported Überreiter: %+v %v", page, err)
	}
}

// RunPatientIndexBackfill: customers written before the patient search's
// index (made so by unindex, as an upgrade finds them: all of a company's,
// or those among ids) make a search of their company a
// domain.ErrSearchIndexing until the store's backfill has indexed them,
// batch by batch — even a search whose matches are all indexed; another
// company's are no matter. The feed is read as ever meanwhile.
func RunPatientIndexBackfill(t *testing.T, newRepos func(t *testing.T) RecordRepositories, unindex func(t *testing.T, company domain.CompanyID, ids ...string)) {
	f := newRecordFixture(t, newRepos)
	ctx := context.Background()
	k := domain.CustomersKind()
	for _, p := range []string{`{"first_name":"Anna","last_name":"Öztürk"}`, `{"first_name":"Ida","last_name":"Oeztuerk"}`, `{"first_name":"Max","last_name":"Ozturk"}`} {
		err := f.r.Tx.InTx(ctx, func(ctx context.Context) error {
			_, err := f.r.Records.Insert(ctx, f.company, k, ports.StoredObject{Payload: []byte(p), CreatedAt: time.Now()})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	unindex(t, f.company)
	search := domain.ListQuery{Limit: 10, Search: []domain.Condition{{Field: domain.SearchFamily, Op: domain.OpPrefix, Values: []string{"ozturk"}}}}
	if _, err := f.r.Records.List(ctx, f.company, k, search); !errors.Is(err, domain.ErrSearchIndexing) {
		t.Fatalf("a search before the backfill: %v, want ErrSearchIndexing", err)
	}
	// The feed is read as ever meanwhile (as the feed does, once no older transaction may still commit).
	if plain, _ := followUntil(t, f.r.Records, f.company, k, domain.ListQuery{Limit: 10}, 4); len(plain) != 4 { // the fixture's customer and three
		t.Fatalf("the feed during the backfill: %d objects", len(plain))
	}
	indexer, ok := f.r.Records.(interface {
		IndexCustomers(ctx context.Context, batch int64) (int, error)
	})
	if !ok {
		t.Fatal("the store has no backfill")
	}
	backfill := func() int {
		total := 0
		for { // batches of 2: resumed where the last one ended
			n, err := indexer.IndexCustomers(ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return total
			}
			total += n
		}
	}
	if total := backfill(); total < 4 {
		t.Errorf("backfilled %d, want at least this company's 4", total)
	}
	page, err := f.r.Records.List(ctx, f.company, k, search)
	if err != nil || len(page.Items) != 3 {
		t.Errorf("after the backfill: %d %v", len(page.Items), err)
	}

	// One customer left to index, who is no match: the matches found are
	// all indexed, but the search does not answer until he is.
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	weber := f.insertCustomer(t, f.company, `{"first_name":"Zoe","last_name":"Weber"}`)
	unindex(t, f.company, weber)
	counted := search
	counted.Total = domain.TotalAccurate
	for _, q := range []domain.ListQuery{search, counted} {
		if _, err := f.r.Records.List(ctx, f.company, k, q); !errors.Is(err, domain.ErrSearchIndexing) {
			t.Fatalf("a search with one customer left to index (total %v): %v, want ErrSearchIndexing", q.Total, err)
		}
	}
	// Another company's customer left to index is no matter here.
	backfill()
	unindex(t, other.ID, f.insertCustomer(t, other.ID, `{"first_name":"Ida","last_name":"Öztürk"}`))
	page, err = f.r.Records.List(ctx, f.company, k, counted)
	if err != nil || len(page.Items) != 3 || page.Total == nil || *page.Total != 3 {
		t.Errorf("with another company's customer left to index: %d %v %v", len(page.Items), page.Total, err)
	}
	if _, err := f.r.Records.List(ctx, other.ID, k, search); !errors.Is(err, domain.ErrSearchIndexing) {
		t.Errorf("the other company's search: %v, want ErrSearchIndexing", err)
	}
}

// insertCustomer stores a customer of company with payload, numbered by
// the store, and answers its id.
func (f recordFixture) insertCustomer(t *testing.T, company domain.CompanyID, payload string) string {
	t.Helper()
	var id string
	err := f.r.Tx.InTx(context.Background(), func(ctx context.Context) error {
		s, err := f.r.Records.Insert(ctx, company, domain.CustomersKind(), ports.StoredObject{Payload: []byte(payload), CreatedAt: time.Now()})
		id = s.ID
		return err
	})
	if err != nil {
		t.Fatalf("insert %s: %v", payload, err)
	}
	return id
}

// patientsSorted: a sorted search (domain.ListQuery.Sort) answers in the
// order of its keys — the folded names, the birth date (none first), the
// change —, ties in the customer's number (the way the last key goes), page after page with no gap or
// repeat; a filter narrows it; another company's patients never appear.
// A customer whose key moves past the cursor while a client pages is seen
// again (docs/contract.md §15 says so); none unchanged is missed.
func patientsSorted(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	ctx := context.Background()
	k := domain.CustomersKind()
	insert := func(company domain.CompanyID, payload string) { f.insertCustomer(t, company, payload) }
	for _, p := range []string{
		`{"first_name":"Anna","last_name":"Müller","birth_date":"1980-02-29"}`,
		`{"first_name":"Zoe","last_name":"Mueller","birth_date":"1980-02-29"}`,
		`{"first_name":"Anna","last_name":"Muller"}`,
		`{"first_name":"Ödön","last_name":"Adler","birth_date":"1999-09-09"}`,
		`{"first_name":"Bea","last_name":"Zach","birth_date":"1950-01-01"}`,
		`{"first_name":"Anna","last_name":"Mayr","birth_date":"1980-02-29"}`,
		`{"first_name":"Carl","last_name":"Überreiter"}`,
	} {
		insert(f.company, p)
		insert(other.ID, p) // the same patients in another company: never answered here
	}
	// Every customer of the company (the fixture's own too), with its change:
	// a sorted search answers what is committed now, unlike the feed.
	all, _ := follow(t, f.r.Records, f.company, k, domain.ListQuery{Limit: 100, Sort: []domain.SortBy{{Key: domain.SortLastUpdated}}})
	if len(all) != 8 {
		t.Fatalf("the company has %d customers, want the fixture's and 7", len(all))
	}
	number := func(id string) int64 {
		n, _ := domain.ParseCustomerPathID(id)
		return int64(n)
	}
	// expected orders all by the keys' bytes, then the number: the store's order.
	expected := func(sort []domain.SortBy, objs []ports.StoredObject) []string {
		objs = slices.Clone(objs)
		slices.SortFunc(objs, func(a, b ports.StoredObject) int {
			ka, kb := domain.SortKeysOf(sort, a.Payload, a.Change), domain.SortKeysOf(sort, b.Payload, b.Change)
			for i, s := range sort {
				c := strings.Compare(ka[i], kb[i])
				if s.Key == domain.SortLastUpdated {
					c = cmp.Compare(a.Change, b.Change)
				}
				if s.Desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			if sort[len(sort)-1].Desc { // ties by number, the way the last key goes
				return cmp.Compare(number(b.ID), number(a.ID))
			}
			return cmp.Compare(number(a.ID), number(b.ID))
		})
		ids := make([]string, len(objs))
		for i, o := range objs {
			ids[i] = o.ID
		}
		return ids
	}
	read := func(q domain.ListQuery) []string {
		var ids []string
		for {
			page, err := f.r.Records.List(ctx, f.company, k, q)
			if err != nil {
				t.Fatalf("sort %s: %v", domain.OrderOf(q.Sort), err)
			}
			if page.HasMore && len(page.Items) < q.Limit {
				t.Errorf("sort %s: a short page with more to come", domain.OrderOf(q.Sort))
			}
			for _, o := range page.Items {
				ids = append(ids, o.ID)
			}
			if !page.HasMore {
				return ids
			}
			if page.Next.Order != domain.OrderOf(q.Sort) || len(page.Next.Keys) != len(q.Sort) {
				t.Fatalf("sort %s: the next cursor holds %+v", domain.OrderOf(q.Sort), page.Next)
			}
			q.After = &page.Next
		}
	}
	by := func(spec string) []domain.SortBy {
		s, err := domain.ParseSort("sort", spec, domain.NativeSortKeys)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, spec := range []string{"last_name", "-last_name", "last_name,first_name", "-last_name,first_name", "first_name,-birth_date",
		"birth_date", "-birth_date,last_name", "updated_at", "-updated_at", "birth_date,-updated_at,first_name"} {
		want := expected(by(spec), all)
		if got := read(domain.ListQuery{Limit: 2, Sort: by(spec)}); !slices.Equal(got, want) {
			t.Errorf("sort %s: %v, want %v", spec, got, want)
		}
	}
	// Ties in the folded name go by the number, the way the last key goes:
	// Müller, Mueller and Muller fold alike.
	muller := []domain.Condition{{Field: domain.SearchFamily, Op: domain.OpPrefix, Values: []string{"muller"}}}
	mullers := read(domain.ListQuery{Limit: 1, Sort: by("last_name"), Search: muller})
	if len(mullers) != 3 || !slices.IsSortedFunc(mullers, func(a, b string) int { return cmp.Compare(number(a), number(b)) }) {
		t.Errorf("three Müllers by number: %v", mullers)
	}
	back := read(domain.ListQuery{Limit: 1, Sort: by("-last_name"), Search: muller})
	slices.Reverse(back)
	if !slices.Equal(back, mullers) {
		t.Errorf("three Müllers descending: %v, the reverse of %v", back, mullers)
	}
	// A filter narrows the sorted list, which keeps its order.
	annas := read(domain.ListQuery{Limit: 2, Sort: by("-last_name"), Search: []domain.Condition{{Field: domain.SearchGiven, Op: domain.OpPrefix, Values: []string{"anna"}}}})
	var annaObjs []ports.StoredObject
	for _, o := range all {
		if domain.PatientIndexOf(o.Payload).Given == "anna" {
			annaObjs = append(annaObjs, o)
		}
	}
	if want := expected(by("-last_name"), annaObjs); len(want) < 3 || !slices.Equal(annas, want) {
		t.Errorf("the Annas by last name descending: %v, want %v", annas, want)
	}
	// A patient renamed from before the cursor to after it is seen again;
	// nobody unchanged is missed or repeated.
	q := domain.ListQuery{Limit: 3, Sort: by("last_name")}
	first, err := f.r.Records.List(ctx, f.company, k, q)
	if err != nil || !first.HasMore {
		t.Fatalf("the first page: %+v %v", first, err)
	}
	moved := first.Items[0]
	err = f.r.Tx.InTx(ctx, func(ctx context.Context) error {
		_, err := f.r.Records.Update(ctx, f.company, k, moved.ID, []byte(`{"first_name":"Carl","last_name":"Zzyzx"}`), time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	q.After = &first.Next
	rest := read(q)
	seen := map[string]int{}
	for _, o := range first.Items {
		seen[o.ID]++
	}
	for _, id := range rest {
		seen[id]++
	}
	for _, o := range all {
		if want := map[bool]int{true: 2, false: 1}[o.ID == moved.ID]; seen[o.ID] != want {
			t.Errorf("%s seen %d times, want %d", o.ID, seen[o.ID], want)
		}
	}
	if len(seen) != len(all) {
		t.Errorf("%d customers seen, the company has %d", len(seen), len(all))
	}
}
