package usecase

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// Records serves every generic section of the resource API: one use case
// for customers and the record kinds, driven by the table of sections.
type Records struct{ recordWriter }

var _ ports.Records = (*Records)(nil)

// NewRecords wires the records use case.
func NewRecords(store ports.RecordStore, keys ports.IdempotencyStore, tx ports.Transactor, companies ports.CompanyRepository, audits *Auditor) *Records {
	return &Records{newRecordWriter(store, keys, tx, companies, audits)}
}

// List answers one page of the kind's feed.
func (r *Records) List(ctx context.Context, grant domain.Grant, kind *domain.Kind, q domain.ListQuery) (ports.RecordPage, error) {
	if err := grant.Require(domain.ReadScope(kind.Slug)); err != nil {
		return ports.RecordPage{}, err
	}
	if q.Customer != nil && !kind.HasCustomer() {
		return ports.RecordPage{}, domain.FieldErrors{{Field: "customer_id", Message: "is not a filter of this section"}}.Err()
	}
	if q.Searches() && kind != domain.CustomersKind() {
		return ports.RecordPage{}, domain.FieldErrors{{Field: "q", Message: "only the customers' list is searched"}}.Err()
	}
	if !whereServed(kind, q.Where) {
		return ports.RecordPage{}, domain.FieldErrors{{Field: "q", Message: "a condition this section's list does not take"}}.Err()
	}
	if err := q.CheckCursor(); err != nil {
		return ports.RecordPage{}, err
	}
	if slices.ContainsFunc(q.Search, func(c domain.Condition) bool { return c.Field == domain.SearchPhone }) {
		rc, err := r.ruleContext(ctx, grant.CompanyID)
		if err != nil {
			return ports.RecordPage{}, err
		}
		if err := domain.ReadPhones(q.Search, "phone", rc.Zone.String()); err != nil {
			return ports.RecordPage{}, err
		}
	}
	if q.Calendar.From != nil || q.Calendar.To != nil { // only calendar kinds take these filters
		rc, err := r.ruleContext(ctx, grant.CompanyID)
		if err != nil {
			return ports.RecordPage{}, err
		}
		q.Calendar.Instants(rc.Zone)
	}
	if err := r.includable(kind, q.IncludeCustomers); err != nil {
		return ports.RecordPage{}, err
	}
	page, err := r.store.List(ctx, grant.CompanyID, kind, q)
	if err != nil {
		return ports.RecordPage{}, err
	}
	for _, o := range page.Items {
		touch(ctx, kind, o)
	}
	out := ports.RecordPage{Page: page}
	if q.IncludeCustomers {
		if out.Customers, err = r.customersOf(ctx, grant, page.Items); err != nil {
			return ports.RecordPage{}, err
		}
	}
	return out, nil
}

// Batch answers the objects among q.IDs in the order asked: one query, in
// the company only, so another company's id is not found like a missing one.
func (r *Records) Batch(ctx context.Context, grant domain.Grant, kind *domain.Kind, q domain.BatchQuery) (ports.Batch, error) {
	if err := grant.Require(domain.ReadScope(kind.Slug)); err != nil {
		return ports.Batch{}, err
	}
	if err := r.includable(kind, q.IncludeCustomers); err != nil {
		return ports.Batch{}, err
	}
	found, err := r.store.Existing(ctx, grant.CompanyID, kind, q.IDs)
	if err != nil {
		return ports.Batch{}, err
	}
	out := ports.Batch{Items: make([]ports.StoredObject, 0, len(found)), NotFound: []string{}}
	for _, id := range q.IDs {
		o, ok := found[id]
		if !ok || (o.DeletedAt != nil && !q.IncludeDeleted) {
			out.NotFound = append(out.NotFound, id)
			continue
		}
		touch(ctx, kind, o)
		out.Items = append(out.Items, o)
	}
	if q.IncludeCustomers {
		if out.Customers, err = r.customersOf(ctx, grant, out.Items); err != nil {
			return ports.Batch{}, err
		}
	}
	return out, nil
}

// includable checks include=customer: only a section whose records name a
// customer offers it. (The door checks the client's customers:read.)
func (r *Records) includable(kind *domain.Kind, include bool) error {
	if include && !kind.HasCustomer() {
		return domain.FieldErrors{{Field: "include", Message: "customer is offered only where records belong to a customer"}}.Err()
	}
	return nil
}

// customersOf are, once each and in the order first named, the customers
// the records name: live ones, and those deleted since as tombstones.
func (r *Records) customersOf(ctx context.Context, grant domain.Grant, items []ports.StoredObject) ([]ports.StoredObject, error) {
	customers := domain.CustomersKind()
	var ids []string
	seen := map[domain.CustomerID]bool{}
	for _, o := range items {
		if o.Customer != nil && !seen[*o.Customer] {
			seen[*o.Customer] = true
			ids = append(ids, strconv.FormatInt(int64(*o.Customer), 10))
		}
	}
	found, err := r.store.Existing(ctx, grant.CompanyID, customers, ids)
	if err != nil {
		return nil, err
	}
	out := make([]ports.StoredObject, 0, len(found))
	for _, id := range ids {
		if o, ok := found[id]; ok {
			touch(ctx, customers, o)
			out = append(out, o)
		}
	}
	return out, nil
}

// Get answers one live object of the company; anything else is domain.ErrNotFound.
func (r *Records) Get(ctx context.Context, grant domain.Grant, kind *domain.Kind, id string) (ports.StoredObject, error) {
	if err := grant.Require(domain.ReadScope(kind.Slug)); err != nil {
		return ports.StoredObject{}, err
	}
	o, err := r.store.Get(ctx, grant.CompanyID, kind, id, false)
	if err != nil {
		return ports.StoredObject{}, err
	}
	touch(ctx, kind, o)
	return o, nil
}

// Create validates body, checks its references in the company and stores it,
// all in one transaction with the Idempotency-Key, if one came: a retry
// replays the first answer, a concurrent twin waits for it and replays it.
func (r *Records) Create(ctx context.Context, grant domain.Grant, kind *domain.Kind, body domain.Document, key *ports.IdempotencyKey) (ports.WrittenObject, error) {
	if kind.ReadOnly {
		return ports.WrittenObject{}, errors.New("no POST on " + kind.Slug) // the router offers none
	}
	if err := grant.Require(domain.WriteScope(kind.Slug)); err != nil {
		return ports.WrittenObject{}, err
	}
	rc, err := r.ruleContext(ctx, grant.CompanyID)
	if err != nil {
		return ports.WrittenObject{}, err
	}
	return idempotently(ctx, &r.writeOnce, grant, key, rc.Now, keptObjects(kind), func(ctx context.Context) (ports.WrittenObject, error) {
		obj, err := kind.Decode(body, rc)
		if err != nil {
			return ports.WrittenObject{}, err
		}
		if err := r.checkRefs(ctx, grant.CompanyID, obj); err != nil {
			return ports.WrittenObject{}, err
		}
		if err := r.fillEnd(ctx, grant.CompanyID, &obj); err != nil {
			return ports.WrittenObject{}, err
		}
		stored, err := r.store.Insert(ctx, grant.CompanyID, kind,
			ports.StoredObject{ID: kind.NewID(), Customer: obj.Customer, Payload: obj.JSON, CreatedAt: rc.Now})
		if err != nil {
			return ports.WrittenObject{}, uniqueClash(kind, err)
		}
		if err := applyEffects(ctx, r.store, grant.CompanyID, obj.Effects(stored.ID), rc.Now); err != nil {
			return ports.WrittenObject{}, err
		}
		touch(ctx, kind, stored)
		audit.Created(ctx, stored.ID)
		return answer(domain.OutcomeCreated, kind.Slug+"/"+stored.ID, stored), nil
	})

}

// uniqueClash names the field of a kind's unique value that another live
// object of the company holds: the store refused the write as a conflict.
func uniqueClash(kind *domain.Kind, err error) error {
	if kind.Unique != "" && errors.Is(err, domain.ErrConflict) {
		return kind.UniqueClash()
	}
	return err
}

// answer is a write's answer with the object as it now stands.
func answer(outcome domain.Outcome, location string, o ports.StoredObject) ports.WrittenObject {
	return ports.WrittenObject{Outcome: outcome, Location: location, Value: o}
}

// Patch applies a JSON merge patch and validates the result whole, if the
// object is still at the version the client read (If-Match).
func (r *Records) Patch(ctx context.Context, grant domain.Grant, kind *domain.Kind, id string, patch domain.Document, w ports.Write) (ports.WrittenObject, error) {
	if !kind.Patch {
		return ports.WrittenObject{}, errors.New("no PATCH on " + kind.Slug) // the router offers none
	}
	if err := grant.Require(domain.WriteScope(kind.Slug)); err != nil {
		return ports.WrittenObject{}, err
	}
	resp, err := r.change(ctx, grant, kind, id, w, func(ctx context.Context, current ports.StoredObject, rc domain.RuleContext) ([]byte, error) {
		obj, err := kind.Merge(current.Payload, patch, rc)
		if err != nil {
			return nil, err
		}
		if err := r.checkRefs(ctx, grant.CompanyID, obj); err != nil {
			return nil, err
		}
		if err := r.fillEnd(ctx, grant.CompanyID, &obj); err != nil {
			return nil, err
		}
		return obj.JSON, nil
	})
	return resp, uniqueClash(kind, err)
}

// Cancel ends a booked or arrived appointment; the slot is free at once.
func (r *Records) Cancel(ctx context.Context, grant domain.Grant, id string, body domain.Document, w ports.Write) (ports.WrittenObject, error) {
	if err := grant.Require(domain.WriteScope(domain.AppointmentsKind().Slug)); err != nil {
		return ports.WrittenObject{}, err
	}
	return r.change(ctx, grant, domain.AppointmentsKind(), id, w, func(_ context.Context, current ports.StoredObject, rc domain.RuleContext) ([]byte, error) {
		reasons, err := domain.CancellationKind.Decode(body, rc)
		if err != nil {
			return nil, err
		}
		return domain.Cancel(current.Payload, reasons, rc)
	})
}

// whereServed tells whether kind's list takes every condition of where:
// on customers only their last change (the rest is a search), observed
// rows only on sections that keep them.
func whereServed(kind *domain.Kind, where []domain.Condition) bool {
	for _, c := range where {
		switch {
		case kind == domain.CustomersKind():
			if c.Field != domain.SearchUpdated {
				return false
			}
		case c.Field == domain.SearchCode || c.Field == domain.SearchObserved:
			if !kind.HasHook(domain.HookObserved) {
				return false
			}
		}
	}
	return true
}
