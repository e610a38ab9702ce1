package sqlstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
	"github.com/praxis-health/praxis/ports/porttest"
	"github.com/praxis-health/praxis/test/testenv"
)

// TestImportLookupKeepsToThePrimaryKey: inside one transaction that has
// written 20,000 notes and 5,000 patients into tables whose statistics say it is empty (an
// import's situation), the lookup of a batch's ids by key probes the primary
// key, of records and of customers alike, and reads no index led by the
// company and the kind (that read all the company's notes for every batch).
func TestImportLookupKeepsToThePrimaryKey(t *testing.T) {
	t.Parallel()
	db := migrated(t, testenv.PostgresURL(t))
	repos := repositoriesOn(db)
	company, _ := porttest.NewCompany(t, repos, "Import", 1000)
	customer := porttest.NewCustomer(t, repos, company.ID, 0).ID
	store := sqlstore.NewRecordStore(db)
	notes := domain.KindOf("notes")
	ctx := context.Background()
	var ids []string
	err := repos.Tx.InTx(ctx, func(ctx context.Context) error {
		// The notes go in by two statements, not 20 batches through Put: on
		// PostgreSQL an open transaction holds back every database's feed on
		// the server (changes.go), and under make test other packages' tests
		// wait on theirs — through Put this one stayed open for 8 s.
		for i, n := range []int{19_000, 1000} {
			var got []string
			if err := sqlstore.Conn(ctx, db).NewRaw("INSERT INTO records (id, company_id, kind, customer_id, payload, version, change, created_at, updated_at) "+
				"SELECT gen_random_uuid(), ?, 'notes', ?, ?, 1, pg_current_xact_id()::text::bigint, now(), now() FROM generate_series(1, ?) RETURNING CAST(id AS text)",
				company.ID.String(), int64(customer), `{"customer_id":1,"noted_on":"2026-03-10","title":"Call","text":"t"}`, n).Scan(ctx, &got); err != nil {
				return err
			}
			if i == 1 {
				ids = got
			}
		}
		patients := make([]ports.StoredObject, 5000)
		for i := range patients {
			patients[i] = ports.StoredObject{ID: strconv.Itoa(1000 + i), Payload: []byte(`{"first_name":"Anna","last_name":"Berger"}`)}
		}
		if err := store.Put(ctx, company.ID, domain.CustomersKind(), patients, nil, time.Now()); err != nil {
			return err
		}
		for _, kind := range []*domain.Kind{notes, domain.CustomersKind()} {
			keys := ids
			if kind.NumericIDs() {
				keys = []string{"1000", "3000", "5999"}
			}
			var plan []string
			if err := sqlstore.Conn(ctx, db).NewRaw("EXPLAIN "+sqlstore.ExistingQuery(db, company.ID, kind, keys)).Scan(ctx, &plan); err != nil {
				return err
			}
			text := strings.Join(plan, "\n")
			if !strings.Contains(text, sqlstore.TableOf(kind)+"_pkey") || strings.Contains(text, "feed_idx") {
				t.Errorf("the lookup of %s by key plans:\n%s\nwant probes of the primary key", kind.Slug, text)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Once the import has committed and analyzed what it wrote, the
	// replacement of a batch of the notes (an import of changes, a restore)
	// is planned on what the table holds — here, 20,000 rows, one scan and
	// a hash join is cheaper than 500 probes of the key; in a larger table
	// the probes — and never on the feed's index, which with the
	// statistics of an empty table it read, all the company's notes, for
	// every batch (and one object's UPDATE at a time, for every object).
	if err := store.Analyze(ctx, notes); err != nil {
		t.Fatal(err)
	}
	batch := make([]ports.StoredObject, 500)
	for i, id := range ids[:500] {
		batch[i] = ports.StoredObject{ID: id, Customer: &customer, Payload: []byte(`{"customer_id":1,"noted_on":"2026-03-10","title":"Call","text":"u"}`)}
	}
	var plan []string
	if err := db.NewRaw("EXPLAIN "+sqlstore.ReplaceQuery(db, company.ID, notes, batch)).Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(plan, "\n"); strings.Contains(text, "feed_idx") {
		t.Errorf("the replacement of 500 notes plans:\n%s\nwant no read of the feed's index", text)
	}
}

// TestAlphabeticalListReadsItsIndex: on PostgreSQL, a page of the patients
// by last and first name, either way, from a cursor in the middle of 6,000,
// is a range of customers_sort_name_idx (the keyset a row comparison), not
// a sort of every patient of the company.
func TestAlphabeticalListReadsItsIndex(t *testing.T) {
	t.Parallel()
	db := migrated(t, testenv.PostgresURL(t))
	repos := repositoriesOn(db)
	company, _ := porttest.NewCompany(t, repos, "Alphabet", 1000)
	store := sqlstore.NewRecordStore(db)
	ctx := context.Background()
	k := domain.CustomersKind()
	families := []string{"Gruber", "Huber", "Bauer", "Wagner", "Müller", "Pichler", "Steiner", "Moser", "Mayer", "Hofer", "Leitner", "Berger"}
	err := repos.Tx.InTx(ctx, func(ctx context.Context) error {
		patients := make([]ports.StoredObject, 6000)
		for i := range patients {
			patients[i] = ports.StoredObject{ID: strconv.Itoa(1000 + i),
				Payload: []byte(`{"first_name":"Anna` + strconv.Itoa(i%97) + `","last_name":"` + families[i%len(families)] + `"}`)}
		}
		return store.Put(ctx, company.ID, k, patients, nil, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE customers"); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"last_name,first_name", "-last_name,-first_name"} {
		sort, err := domain.ParseSort("sort", spec, domain.NativeSortKeys)
		if err != nil {
			t.Fatal(err)
		}
		after := &domain.Cursor{ID: "4000", Order: domain.OrderOf(sort), Keys: []string{"mayer", "anna50"}}
		text, err := sqlstore.ListQuery(db, company.ID, k, domain.ListQuery{Limit: 10, After: after, Sort: sort})
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		if err := db.NewRaw("EXPLAIN "+text).Scan(ctx, &plan); err != nil {
			t.Fatal(err)
		}
		if joined := strings.Join(plan, "\n"); !strings.Contains(joined, "customers_sort_name_idx") || strings.Contains(joined, "Sort") {
			t.Errorf("sort=%s plans:\n%s\nwant a range of customers_sort_name_idx and no sort", spec, joined)
		}
	}
}

// TestANameSearchReadsTheCompanysWords: on PostgreSQL, a search by the
// words of a name — a prefix of two words (q), a last name's prefix, a
// phonetic code (Maier finds the Meyers) — reads the GIN index of the customers' own words led by
// the company (customers_words_idx), beside another company of the same
// patients; the rows of the company are not read one by one.
func TestANameSearchReadsTheCompanysWords(t *testing.T) {
	t.Parallel()
	db := migrated(t, testenv.PostgresURL(t))
	repos := repositoriesOn(db)
	store := sqlstore.NewRecordStore(db)
	ctx := context.Background()
	k := domain.CustomersKind()
	var company domain.CompanyID
	for n, name := range []string{"Words", "Other"} {
		c, _ := porttest.NewCompany(t, repos, name, 1000)
		company = c.ID
		patients := make([]ports.StoredObject, 6000)
		for i := range patients {
			family := "Familie" + strconv.Itoa(i)
			if i%1000 == 0 {
				family = "Meyer"
			}
			patients[i] = ports.StoredObject{ID: strconv.Itoa(1000 + 10000*n + i),
				Payload: []byte(`{"first_name":"Vorname` + strconv.Itoa(i%300) + `","last_name":"` + family + `"}`)}
		}
		if err := repos.Tx.InTx(ctx, func(ctx context.Context) error { return store.Put(ctx, c.ID, k, patients, nil, time.Now()) }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE customers"); err != nil {
		t.Fatal(err)
	}
	for _, search := range []struct{ param, value string }{{"q", "familie123 vorname12"}, {"last_name", "familie4711"}, {"phonetic", "Maier"}} {
		var cond domain.Condition
		for _, p := range domain.PatientSearchParams {
			if p.Name == search.param {
				var err error
				if cond, err = p.Parse(search.value); err != nil {
					t.Fatal(err)
				}
			}
		}
		text, err := sqlstore.ListQuery(db, company, k, domain.ListQuery{Limit: 10, Search: []domain.Condition{cond}})
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		if err := db.NewRaw("EXPLAIN "+text).Scan(ctx, &plan); err != nil {
			t.Fatal(err)
		}
		if joined := strings.Join(plan, "\n"); !strings.Contains(joined, "customers_words_idx") {
			t.Errorf("%s=%s plans:\n%s\nwant a read of customers_words_idx", search.param, search.value, joined)
		}
	}
}
