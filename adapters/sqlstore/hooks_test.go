package sqlstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// recording is a hook that notes each call and whether it ran inside the write's transaction.
type recording struct {
	mu    sync.Mutex
	calls []string
}

func (r *recording) note(db bun.IDB, what, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, inTx := db.(bun.Tx)
	r.calls = append(r.calls, fmt.Sprintf("%s %s tx=%v", what, id, inTx))
}

func (r *recording) Written(_ context.Context, db bun.IDB, _ domain.CompanyID, _ *domain.Kind, id string, _ []byte) error {
	r.note(db, "written", id)
	return nil
}

func (r *recording) Deleted(_ context.Context, db bun.IDB, _ domain.CompanyID, _ *domain.Kind, id string) error {
	r.note(db, "deleted", id)
	return nil
}

func (r *recording) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// TestEveryWritePathRunsTheKindsHooks: a kind declared in a test with a
// hook of its own has it run exactly once per object by every write path
// of the record store — insert (create), update (patch, cancel), put of a
// new object and of an existing one (the import), delete (and the import's
// deletion) — inside the write's transaction, on both dialects; a kind
// that declares a hook the store does not know is refused, not ignored.
func TestEveryWritePathRunsTheKindsHooks(t *testing.T) {
	t.Parallel()
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		company, _, err := domain.NewCompany("Praxis Hooks", "", domain.PlanPro, 1000, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := repositoriesOn(db).Companies.Create(ctx, company); err != nil {
			t.Fatal(err)
		}
		customer := domain.CustomerID(1)
		if _, err := sqlstore.NewRecordStore(db).Insert(ctx, company.ID, domain.CustomersKind(),
			ports.StoredObject{ID: "1", Payload: []byte(`{"first_name":"Anna","last_name":"Berger"}`), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		hook := &recording{}
		store := sqlstore.NewRecordStore(db).WithHook("recorded", hook)
		kind := domain.KindOf("notes").WithHooks("test-recorded-notes", "recorded")
		tx := sqlstore.NewTransactor(db)
		payload := []byte(fmt.Sprintf(`{"customer_id":%d,"text":"x"}`, customer))
		ids := []string{domain.NewObjectID(), domain.NewObjectID()}
		object := func(id string) ports.StoredObject {
			return ports.StoredObject{ID: id, Customer: &customer, Payload: payload, CreatedAt: time.Now()}
		}
		for _, step := range []struct {
			path  string
			write func(ctx context.Context) error
			want  []string
		}{
			{"insert (create)", func(ctx context.Context) error {
				_, err := store.Insert(ctx, company.ID, kind, object(ids[0]))
				return err
			}, []string{"written " + ids[0] + " tx=true"}},
			{"update (patch, cancel)", func(ctx context.Context) error {
				_, err := store.Update(ctx, company.ID, kind, ids[0], payload, time.Now())
				return err
			}, []string{"written " + ids[0] + " tx=true"}},
			{"put: one new, one existing (the import)", func(ctx context.Context) error {
				existing, err := store.Existing(ctx, company.ID, kind, ids)
				if err != nil {
					return err
				}
				return store.Put(ctx, company.ID, kind, []ports.StoredObject{object(ids[0]), object(ids[1])}, existing, time.Now())
			}, []string{"written " + ids[0] + " tx=true", "written " + ids[1] + " tx=true"}},
			{"delete (and the import's deletion)", func(ctx context.Context) error {
				return store.Delete(ctx, company.ID, kind, ids[1], time.Now())
			}, []string{"deleted " + ids[1] + " tx=true"}},
		} {
			if err := tx.InTx(ctx, step.write); err != nil {
				t.Fatalf("%s: %v", step.path, err)
			}
			got := hook.take()
			slices.Sort(got) // a batch's objects in any order
			slices.Sort(step.want)
			if !slices.Equal(got, step.want) {
				t.Errorf("%s: the hook ran %v, want %v", step.path, got, step.want)
			}
		}
		unknown := domain.KindOf("notes").WithHooks("test-unknown-hook", "nobody-implements-this")
		err = tx.InTx(ctx, func(ctx context.Context) error {
			_, err := store.Insert(ctx, company.ID, unknown, object(domain.NewObjectID()))
			return err
		})
		if err == nil {
			t.Error("a hook the store does not carry out was ignored")
		}
	})
}
