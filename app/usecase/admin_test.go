package usecase_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

// TestEnsureIsIdempotentUnderRaces: declarations of one resource racing
// (two operator replicas in a leadership hand-over, a retried reconcile)
// make one company and one client, and exactly one of them sees the secret.
func TestEnsureIsIdempotentUnderRaces(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	ctx := context.Background()
	const n = 8
	var wg sync.WaitGroup
	companies := make([]domain.Company, n)
	secrets := make([]domain.Secret, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			companies[i], secrets[i], errs[i] = env.Admin.EnsureCompany(ctx, usecase.NewCompanyInput{Name: "Praxis", ExternalRef: "uid-1"})
		})
	}
	wg.Wait()
	shown := 0
	for i := range n {
		if errs[i] != nil || companies[i].ID != companies[0].ID {
			t.Fatalf("declaration %d: %v, company %s (first %s)", i, errs[i], companies[i].ID, companies[0].ID)
		}
		if secrets[i] != "" {
			shown++
		}
	}
	ids, err := env.Companies.ListIDs(ctx)
	if err != nil || len(ids) != 1 || shown != 1 {
		t.Fatalf("%d companies (%v), the secret shown %d times; want one and once", len(ids), err, shown)
	}

	// A later declaration applies changed settings and shows no secret.
	changed, secret, err := env.Admin.EnsureCompany(ctx, usecase.NewCompanyInput{Name: "Praxis Neu", Plan: "pro", StorageQuota: 5, ExternalRef: "uid-1"})
	if err != nil || secret != "" || changed.Name != "Praxis Neu" || changed.Plan != domain.PlanPro || changed.StorageQuota != 5 {
		t.Fatalf("second declaration: %+v, secret %q, %v", changed, secret, err)
	}
	if _, _, err := env.Admin.EnsureCompany(ctx, usecase.NewCompanyInput{Name: "Praxis", Plan: "gold", ExternalRef: "uid-1"}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("unknown plan: %v, want invalid", err)
	}

	company := companies[0].ID
	clientIDs := make([]domain.ClientID, n)
	for i := range n {
		wg.Go(func() {
			c, _, err := env.Admin.EnsureClient(ctx, usecase.NewClientInput{Company: company, Name: "Lab", Scopes: "company:read", ExternalRef: "uid-c"})
			clientIDs[i], errs[i] = c.ID, err
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || clientIDs[i] != clientIDs[0] {
			t.Fatalf("client declaration %d: %v, %s (first %s)", i, errs[i], clientIDs[i], clientIDs[0])
		}
	}

	// Retired with Disable: no new clients, the old one inactive.
	if err := env.Admin.RetireCompany(ctx, company, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.Admin.EnsureClient(ctx, usecase.NewClientInput{Company: company, ExternalRef: "uid-d"}); !errors.Is(err, domain.ErrCompanyDisabled) {
		t.Errorf("a client for a disabled company: %v", err)
	}
	if c, _, err := env.Admin.EnsureClient(ctx, usecase.NewClientInput{Company: company, Name: "Lab", Scopes: "company:read", ExternalRef: "uid-c"}); err != nil || c.Active() {
		t.Errorf("the retired company's client: %+v, %v; want inactive", c, err)
	}
}
