package usecase

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// recordWriter is what the use cases that write records share: the store,
// the writes with their Idempotency-Keys, and the company's rules. Records
// and Booking each hold one; neither reaches into the other.
type recordWriter struct {
	writeOnce
	store     ports.RecordStore
	companies ports.CompanyRepository
	now       func() time.Time
}

func newRecordWriter(store ports.RecordStore, keys ports.IdempotencyStore, tx ports.Transactor, companies ports.CompanyRepository, audits *Auditor) recordWriter {
	return recordWriter{writeOnce: writeOnce{keys: keys, tx: tx, audits: audits}, store: store, companies: companies, now: time.Now}
}

// checkRefs looks every referenced object up in the company, one query per
// section, and judges them: a miss is a 422 on the field, whether the id is
// unknown or another company's.
func (w *recordWriter) checkRefs(ctx context.Context, company domain.CompanyID, obj domain.Object) error {
	bySection := map[string][]string{}
	for _, ref := range obj.Refs {
		if !slices.Contains(bySection[ref.Section], ref.ID) {
			bySection[ref.Section] = append(bySection[ref.Section], ref.ID)
		}
	}
	found := map[string]map[string]domain.RefTarget{}
	for section, ids := range bySection {
		targets, err := w.store.Lookup(ctx, company, section, ids)
		if err != nil {
			return err
		}
		found[section] = targets
	}
	return domain.CheckRefs(obj.Refs, obj.Customer, found)
}

// fillEnd completes an object that takes its end from the booking
// catalogue (an appointment without one): the assignment's duration, else
// the service's.
func (w *recordWriter) fillEnd(ctx context.Context, company domain.CompanyID, obj *domain.Object) error {
	if !obj.NeedsEnd() {
		return nil
	}
	cat, _, err := catalog(ctx, w.store, company)
	if err != nil {
		return err
	}
	return domain.FillEnd(obj, cat.Duration)
}

// applyEffects carries out a write's effects on other objects of the
// company (records and the import both write with effects).
func applyEffects(ctx context.Context, store ports.RecordStore, company domain.CompanyID, effects []domain.Effect, at time.Time) error {
	for _, e := range effects {
		kind := domain.KindOf(e.Section)
		o, err := store.Get(ctx, company, kind, e.ID, true)
		if err != nil {
			return fmt.Errorf("effect on %s: %w", e.Section, err)
		}
		payload, err := domain.SetFields(o.Payload, e.Set)
		if err != nil {
			return err
		}
		if bytes.Equal(payload, o.Payload) {
			continue // already so: no write, no change stamp
		}
		if _, err := store.Update(ctx, company, kind, e.ID, payload, at); err != nil {
			return err
		}
	}
	return nil
}

// company reads the company once: itself, and now in its zone.
func (w *recordWriter) company(ctx context.Context, id domain.CompanyID) (domain.Company, domain.RuleContext, error) {
	return companyContext(ctx, w.companies, id, w.now)
}

// ruleContext is now in the company's zone, where dates are judged.
func (w *recordWriter) ruleContext(ctx context.Context, company domain.CompanyID) (domain.RuleContext, error) {
	return ruleContextOf(ctx, w.companies, company, w.now)
}

// touch tells the request's audit event whose data o is: a customer, or
// the customer o belongs to.
func touch(ctx context.Context, kind *domain.Kind, o ports.StoredObject) {
	if kind.NumericIDs() {
		if id, ok := domain.ParseCustomerPathID(o.ID); ok {
			audit.Touch(ctx, id)
		}
		return
	}
	if o.Customer != nil {
		audit.Touch(ctx, *o.Customer)
	}
}

// change is every write to one existing object: in one transaction with
// its Idempotency-Key, the object read for update (404 when it is not the
// company's), its version held against If-Match (412, nothing written),
// then the new payload (next, which reads through the transaction's ctx)
// stored and answered.
func (r *recordWriter) change(ctx context.Context, grant domain.Grant, kind *domain.Kind, id string, w ports.Write,
	next func(ctx context.Context, current ports.StoredObject, rc domain.RuleContext) ([]byte, error)) (ports.WrittenObject, error) {
	rc, err := r.ruleContext(ctx, grant.CompanyID)
	if err != nil {
		return ports.WrittenObject{}, err
	}
	return idempotently(ctx, &r.writeOnce, grant, w.Key, rc.Now, keptObjects(kind), func(ctx context.Context) (ports.WrittenObject, error) {
		current, err := r.store.Get(ctx, grant.CompanyID, kind, id, true)
		if err != nil {
			return ports.WrittenObject{}, err
		}
		touch(ctx, kind, current)
		if err := w.IfMatch.CheckVersion(current.Version); err != nil {
			return ports.WrittenObject{}, err
		}
		payload, err := next(ctx, current, rc)
		if err != nil {
			return ports.WrittenObject{}, err
		}
		updated, err := r.store.Update(ctx, grant.CompanyID, kind, id, payload, rc.Now)
		if err != nil {
			return ports.WrittenObject{}, err
		}
		touch(ctx, kind, updated)
		return answer(domain.OutcomeOK, kind.Slug+"/"+updated.ID, updated), nil
	})

}
