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
		if err := db.NewRaw("EXPLAIN " + text).Scan(ctx, &plan); err != nil {
			t.Fatal(err)
		}
		if joined := strings.Join(plan, "\n"); !strings.Contains(joined, "customers_sort_name_idx") || strings.Contains(joined, "Sort") {
			t.Errorf("sort=%s plans:\n%s\nwant a range of customers_sort_name_idx and no sort", spec, joined)
		}
	}
}
