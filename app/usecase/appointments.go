package usecase

import (
	"context"

	"github.com/praxis-health/praxis/domain"
)

// The appointments' own steps on the generic record path: cancelling, and
// an end taken from the service's duration.

// Cancel ends a booked or arrived appointment; the slot is free at once.
func (r *Records) Cancel(ctx context.Context, grant domain.Grant, id string, body []byte) ([]byte, error) {
	rc, err := r.ruleContext(ctx, grant.CompanyID)
	if err != nil {
		return nil, err
	}
	kind := domain.AppointmentsKind()
	var out []byte
	err = r.tx.InTx(ctx, func(ctx context.Context) error {
		current, err := r.store.Get(ctx, grant.CompanyID, kind, id, true)
		if err != nil {
			return err
		}
		reasons, err := domain.CancellationKind.Decode(body, rc)
		if err != nil {
			return err
		}
		payload, err := domain.Cancel(current.Payload, reasons, rc)
		if err != nil {
			return err
		}
		updated, err := r.store.Update(ctx, grant.CompanyID, kind, id, payload, rc.Now)
		if err != nil {
			return err
		}
		out = render(kind, updated)
		return nil
	})
	return out, err
}

// fillEnd completes an appointment without an end from the duration of its
// service: the assignment's, else the service's.
func (r *Records) fillEnd(ctx context.Context, company domain.CompanyID, obj *domain.Object) error {
	if !obj.NeedsEnd() {
		return nil
	}
	cat, _, err := catalog(ctx, r.store, company)
	if err != nil {
		return err
	}
	return domain.FillEnd(obj, cat.Duration)
}
