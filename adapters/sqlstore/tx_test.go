package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/domain"
)

// TestCommitOutlivesItsRequest: a transaction whose request is cancelled
// (its client gone, its deadline passed) after its statements succeeded
// still commits; one whose request ended before BEGIN begins nothing and
// answers unavailable (503), never a 500.
func TestCommitOutlivesItsRequest(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *bun.DB) {
		tx, companies := sqlstore.NewTransactor(db), sqlstore.NewCompanyRepository(db)
		company, _, err := domain.NewCompany("Praxis Commit", "", domain.PlanPro, 1000, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		err = tx.InTx(ctx, func(ctx context.Context) error {
			if err := companies.Create(ctx, company); err != nil {
				return err
			}
			cancel() // the request ends between its last statement and COMMIT
			return nil
		})
		if err != nil {
			t.Fatalf("a request cancelled before its COMMIT: %v, want committed", err)
		}
		if _, err := companies.Get(context.Background(), company.ID); err != nil {
			t.Fatalf("the write is not there: %v", err)
		}

		late, stop := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer stop()
		ran := false
		err = tx.InTx(late, func(context.Context) error { ran = true; return nil })
		if !errors.Is(err, domain.ErrUnavailable) || ran {
			t.Errorf("a request past its deadline: %v (ran %v), want unavailable and nothing run", err, ran)
		}
	})
}
