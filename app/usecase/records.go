package usecase

import (
	"context"
	"errors"
	"net/http"

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
func (r *Records) List(ctx context.Context, grant domain.Grant, kind *domain.Kind, q domain.ListQuery) (ports.RenderedPage, error) {
	if q.Customer != nil && !kind.HasCustomer() {
		return ports.RenderedPage{}, domain.FieldErrors{{Field: "customer_id", Message: "is not a filter of this section"}}.Err()
	}
	if q.Calendar.From != nil || q.Calendar.To != nil { // only calendar kinds take these filters
		rc, err := r.ruleContext(ctx, grant.CompanyID)
		if err != nil {
			return ports.RenderedPage{}, err
		}
		q.Calendar.Instants(rc.Zone)
	}
	page, err := r.store.List(ctx, grant.CompanyID, kind, q)
	if err != nil {
		return ports.RenderedPage{}, err
	}
	size := 2
	for _, o := range page.Items {
		size += len(o.Payload) + 128
	}
	data := append(make([]byte, 0, size), '[')
	for i, o := range page.Items {
		if i > 0 {
			data = append(data, ',')
		}
		data = appendRendered(data, kind, o)
		touch(ctx, kind, o)
	}
	return ports.RenderedPage{Data: append(data, ']'), NextCursor: page.Next.Encode(), HasMore: page.HasMore}, nil
}

// Get answers one live object of the company; anything else is domain.ErrNotFound.
func (r *Records) Get(ctx context.Context, grant domain.Grant, kind *domain.Kind, id string) ([]byte, error) {
	o, err := r.store.Get(ctx, grant.CompanyID, kind, id, false)
	if err != nil {
		return nil, err
	}
	touch(ctx, kind, o)
	return render(kind, o), nil
}

// Create validates body, checks its references in the company and stores it,
// all in one transaction with the Idempotency-Key, if one came: a retry
// replays the first answer, a concurrent twin waits for it and replays it.
func (r *Records) Create(ctx context.Context, grant domain.Grant, kind *domain.Kind, body []byte, key *ports.IdempotencyKey) (ports.Response, error) {
	if kind.ReadOnly {
		return ports.Response{}, errors.New("no POST on " + kind.Slug) // the router offers none
	}
	rc, err := r.ruleContext(ctx, grant.CompanyID)
	if err != nil {
		return ports.Response{}, err
	}
	return r.once(ctx, grant, key, rc.Now, func(ctx context.Context) (ports.SavedResponse, error) {
		obj, err := kind.Decode(body, rc)
		if err != nil {
			return ports.SavedResponse{}, err
		}
		if err := r.checkRefs(ctx, grant.CompanyID, obj); err != nil {
			return ports.SavedResponse{}, err
		}
		if err := r.fillEnd(ctx, grant.CompanyID, &obj); err != nil {
			return ports.SavedResponse{}, err
		}
		stored, err := r.store.Insert(ctx, grant.CompanyID, kind,
			ports.StoredObject{ID: kind.NewID(), Customer: obj.Customer, Payload: obj.JSON, CreatedAt: rc.Now})
		if err != nil {
			return ports.SavedResponse{}, err
		}
		if err := applyEffects(ctx, r.store, grant.CompanyID, obj.Effects(stored.ID), rc.Now); err != nil {
			return ports.SavedResponse{}, err
		}
		touch(ctx, kind, stored)
		audit.Created(ctx, stored.ID)
		return ports.SavedResponse{Status: http.StatusCreated, Location: kind.Slug + "/" + stored.ID, Body: render(kind, stored)}, nil
	})
}

// Patch applies a JSON merge patch and validates the result whole.
func (r *Records) Patch(ctx context.Context, grant domain.Grant, kind *domain.Kind, id string, patch []byte) ([]byte, error) {
	if !kind.Patch {
		return nil, errors.New("no PATCH on " + kind.Slug) // the router offers none
	}
	rc, err := r.ruleContext(ctx, grant.CompanyID)
	if err != nil {
		return nil, err
	}
	var out []byte
	err = r.tx.InTx(ctx, func(ctx context.Context) error {
		current, err := r.store.Get(ctx, grant.CompanyID, kind, id, true)
		if err != nil {
			return err
		}
		obj, err := kind.Merge(current.Payload, patch, rc)
		if err != nil {
			return err
		}
		if err := r.checkRefs(ctx, grant.CompanyID, obj); err != nil {
			return err
		}
		if err := r.fillEnd(ctx, grant.CompanyID, &obj); err != nil {
			return err
		}
		updated, err := r.store.Update(ctx, grant.CompanyID, kind, id, obj.JSON, rc.Now)
		if err != nil {
			return err
		}
		out = render(kind, updated)
		touch(ctx, kind, updated)
		return r.audits.inTx(ctx, grant.CompanyID, http.StatusOK)
	})
	return out, err
}

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
		touch(ctx, kind, updated)
		return r.audits.inTx(ctx, grant.CompanyID, http.StatusOK)
	})
	return out, err
}
