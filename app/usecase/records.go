package usecase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// Records serves every generic section of the resource API: one use case
// for customers and the record kinds, driven by the table of sections.
type Records struct {
	store     ports.RecordStore
	keys      ports.IdempotencyStore
	tx        ports.Transactor
	companies ports.CompanyRepository
	now       func() time.Time
}

var _ ports.Records = (*Records)(nil)

// NewRecords wires the records use case.
func NewRecords(store ports.RecordStore, keys ports.IdempotencyStore, tx ports.Transactor, companies ports.CompanyRepository) *Records {
	return &Records{store: store, keys: keys, tx: tx, companies: companies, now: time.Now}
}

// List answers one page of the kind's feed.
func (r *Records) List(ctx context.Context, grant domain.Grant, kind *domain.Kind, q domain.ListQuery) (ports.RenderedPage, error) {
	if q.Customer != nil && !kind.HasCustomer() {
		return ports.RenderedPage{}, domain.FieldErrors{{Field: "customer_id", Message: "is not a filter of this section"}}.Err()
	}
	if kind.Calendar && (q.Calendar.From != nil || q.Calendar.To != nil) {
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
	}
	return ports.RenderedPage{Data: append(data, ']'), NextCursor: page.Next.Encode(), HasMore: page.HasMore}, nil
}

// Get answers one live object of the company; anything else is domain.ErrNotFound.
func (r *Records) Get(ctx context.Context, grant domain.Grant, kind *domain.Kind, id string) ([]byte, error) {
	o, err := r.store.Get(ctx, grant.CompanyID, kind, id, false)
	if err != nil {
		return nil, err
	}
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
	var resp ports.Response
	err = r.tx.InTx(ctx, func(ctx context.Context) error {
		if replayed, err := r.claim(ctx, grant, key, rc.Now, &resp); replayed || err != nil {
			return err
		}
		obj, err := kind.Decode(body, rc)
		if err != nil {
			return err
		}
		if err := r.checkRefs(ctx, grant.CompanyID, obj); err != nil {
			return err
		}
		if err := r.fillEnd(ctx, grant.CompanyID, &obj); err != nil {
			return err
		}
		stored := ports.StoredObject{Customer: obj.Customer, Payload: obj.JSON, CreatedAt: rc.Now}
		if kind.Shape != domain.ShapeCustomer {
			stored.ID = domain.NewObjectID()
		}
		stored, err = r.store.Insert(ctx, grant.CompanyID, kind, stored)
		if err != nil {
			return err
		}
		if err := applyEffects(ctx, r.store, grant.CompanyID, obj.Effects(stored.ID), rc.Now); err != nil {
			return err
		}
		resp.SavedResponse = ports.SavedResponse{Status: http.StatusCreated, Location: kind.Slug + "/" + stored.ID, Body: render(kind, stored)}
		if key != nil {
			return r.keys.Save(ctx, grant.CompanyID, grant.ClientID, *key, resp.SavedResponse)
		}
		return nil
	})
	return resp, err
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
		return nil
	})
	return out, err
}

// claim takes the Idempotency-Key of a create inside its transaction:
// replayed when the key already holds a first answer, now in resp; a
// concurrent twin waits here for the first one's commit.
func (r *Records) claim(ctx context.Context, grant domain.Grant, key *ports.IdempotencyKey, now time.Time, resp *ports.Response) (bool, error) {
	if key == nil {
		return false, nil
	}
	saved, err := r.keys.Claim(ctx, grant.CompanyID, grant.ClientID, *key, now)
	if saved != nil {
		*resp = ports.Response{SavedResponse: *saved, Replayed: true}
	}
	return saved != nil, err
}

// checkRefs looks every referenced object up in the company, one query per
// section, and judges them: a miss is a 422 on the field, whether the id is
// unknown or another company's.
func (r *Records) checkRefs(ctx context.Context, company domain.CompanyID, obj domain.Object) error {
	bySection := map[string][]string{}
	for _, ref := range obj.Refs {
		if !slices.Contains(bySection[ref.Section], ref.ID) {
			bySection[ref.Section] = append(bySection[ref.Section], ref.ID)
		}
	}
	found := map[string]map[string]domain.RefTarget{}
	for section, ids := range bySection {
		targets, err := r.store.Lookup(ctx, company, section, ids)
		if err != nil {
			return err
		}
		found[section] = targets
	}
	return domain.CheckRefs(obj.Refs, obj.Customer, found)
}

// applyEffects carries out a write's effects on other objects of the company.
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

// ruleContext is now in the company's zone, where dates are judged.
func (r *Records) ruleContext(ctx context.Context, company domain.CompanyID) (domain.RuleContext, error) {
	return ruleContextOf(ctx, r.companies, company, r.now)
}

// render is an object as answered: the payload within its envelope, or a tombstone.
func render(kind *domain.Kind, o ports.StoredObject) []byte {
	return appendRendered(make([]byte, 0, len(o.Payload)+128), kind, o)
}

func appendRendered(b []byte, kind *domain.Kind, o ports.StoredObject) []byte {
	numeric := kind.Shape == domain.ShapeCustomer
	if o.DeletedAt != nil {
		return domain.AppendTombstone(b, o.ID, numeric, *o.DeletedAt)
	}
	return domain.AppendObject(b, o.ID, numeric, o.Payload, o.CreatedAt, o.UpdatedAt)
}
