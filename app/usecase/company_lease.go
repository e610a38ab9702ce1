package usecase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// leaseTTL is how long a company's lease lasts unless renewed; its holder
// renews it every third of that while it works.
const leaseTTL = time.Minute

// CompanyBusyError refuses an import or restore while another of the same
// company runs (docs/contract.md §6).
type CompanyBusyError struct{ Lease domain.CompanyLease }

func (e *CompanyBusyError) Error() string {
	return fmt.Sprintf("another %s of company %s is running (%s, since %s): try again when it has ended, or after %s if it was stopped",
		e.Lease.Purpose, e.Lease.Company, e.Lease.Holder, e.Lease.AcquiredAt.Format(time.RFC3339), e.Lease.ExpiresAt.Format(time.RFC3339))
}

// errLeaseLost ends work whose lease another holder took (it had stalled past its lease).
var errLeaseLost = errors.New("the company's lease was lost: another holder took it")

// underLease runs fn holding company's lease for purpose: refused with
// *CompanyBusyError while another holder's runs; renewed while fn works,
// and fn's context ended if it is lost; released when fn returns.
func underLease(ctx context.Context, leases ports.CompanyLeases, now func() time.Time, company domain.CompanyID, purpose string, fn func(ctx context.Context) error) error {
	at := now()
	lease := domain.CompanyLease{Company: company, Holder: leaseOwner(), Purpose: purpose, AcquiredAt: at, ExpiresAt: at.Add(leaseTTL)}
	held, taken, err := leases.Take(ctx, lease, at)
	if err != nil {
		return err
	}
	if !taken {
		return &CompanyBusyError{Lease: held}
	}
	work, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		tick := time.NewTicker(leaseTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				ok, err := leases.Extend(context.WithoutCancel(ctx), company, lease.Holder, now().Add(leaseTTL))
				if err == nil && !ok {
					cancel(errLeaseLost)
					return
				}
				if err != nil {
					slog.WarnContext(ctx, "the company's lease was not renewed", "error", err)
				}
			}
		}
	}()
	err = fn(work)
	close(done)
	<-renewed
	if cause := context.Cause(work); errors.Is(cause, errLeaseLost) && err != nil {
		err = fmt.Errorf("%w: %w", errLeaseLost, err)
	}
	if rerr := leases.Release(context.WithoutCancel(ctx), company, lease.Holder); rerr != nil {
		slog.WarnContext(ctx, "the company's lease was not released: it runs out by itself", "error", rerr)
	}
	return err
}
