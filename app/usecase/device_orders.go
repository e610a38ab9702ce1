package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/gdt"
	"github.com/praxis-health/praxis/ports"
)

// DeviceOrders serves the GDT round trip (docs/contract.md §14) beyond the
// generic reads: the practice orders and cancels, the bridge fetches the
// orders of its device and reports what became of them, staff assign a
// result that matched no order.
type DeviceOrders struct {
	recordWriter
	orders  ports.DeviceOrderStore
	files   ports.FileRepository
	clients ports.ClientRepository
	wake    *wakeups
	// poll is how often a waiting long poll looks again: another replica's
	// orders wake no one here.
	poll time.Duration
}

var _ ports.DeviceOrders = (*DeviceOrders)(nil)

// NewDeviceOrders wires the round trip's use case.
func NewDeviceOrders(store ports.RecordStore, keys ports.IdempotencyStore, tx ports.Transactor, companies ports.CompanyRepository,
	audits *Auditor, orders ports.DeviceOrderStore, files ports.FileRepository, clients ports.ClientRepository,
) *DeviceOrders {
	return &DeviceOrders{recordWriter: newRecordWriter(store, keys, tx, companies, audits), orders: orders, files: files,
		clients: clients, wake: &wakeups{waiting: map[string][]chan struct{}{}}, poll: time.Second}
}

var (
	ordersKind    = domain.KindOf("device-orders")
	devicesKind   = domain.KindOf("devices")
	customersKind = domain.KindOf("customers")
)

// Create checks the order, renders its GDT record once (a customer who
// lacks a field the record needs is a 422 naming it), numbers it and stores it.
func (d *DeviceOrders) Create(ctx context.Context, grant domain.Grant, body domain.Document, key *ports.IdempotencyKey) (ports.WrittenObject, error) {
	if err := grant.Require(domain.WriteScope(ordersKind.Slug)); err != nil {
		return ports.WrittenObject{}, err
	}
	rc, err := d.ruleContext(ctx, grant.CompanyID)
	if err != nil {
		return ports.WrittenObject{}, err
	}
	var device string
	resp, err := idempotently(ctx, &d.writeOnce, grant, key, rc.Now, keptObjects(ordersKind), func(ctx context.Context) (ports.WrittenObject, error) {
		obj, err := ordersKind.Decode(body, rc)
		if err != nil {
			return ports.WrittenObject{}, err
		}
		if err := d.checkRefs(ctx, grant.CompanyID, obj); err != nil {
			return ports.WrittenObject{}, err
		}
		var o domain.DeviceOrder
		if err := json.Unmarshal(obj.JSON, &o); err != nil {
			return ports.WrittenObject{}, err
		}
		id := ordersKind.NewID()
		if o.Number, err = d.orders.Next(ctx, grant.CompanyID, ordersKind.Slug); err != nil {
			return ports.WrittenObject{}, err
		}
		dev, err := d.device(ctx, grant.CompanyID, string(o.DeviceID))
		if err != nil {
			return ports.WrittenObject{}, err
		}
		written, err := d.render(ctx, grant.CompanyID, dev, id, o, "")
		if err != nil {
			return ports.WrittenObject{}, err
		}
		payload, err := domain.SetFields(obj.JSON, map[string]any{ordersKind.Counter: o.Number, "approximated_fields": written.Approximated})
		if err != nil {
			return ports.WrittenObject{}, err
		}
		stored, err := d.store.Insert(ctx, grant.CompanyID, ordersKind, ports.StoredObject{ID: id, Customer: obj.Customer, Payload: payload, CreatedAt: rc.Now})
		if err != nil {
			return ports.WrittenObject{}, err
		}
		device = string(o.DeviceID)
		touch(ctx, ordersKind, stored)
		audit.Created(ctx, stored.ID)
		return answer(domain.OutcomeCreated, ordersKind.Slug+"/"+stored.ID, stored), nil
	})

	if err == nil && !resp.Replayed {
		d.wake.notify(grant.CompanyID, device)
	}
	return resp, err
}

// render is the order's GDT record as its device reads it, made from the
// device and customer as they stand; record overrides the order's own
// record type (a 6303 that cancels it).
func (d *DeviceOrders) render(ctx context.Context, company domain.CompanyID, device domain.Device, id string, o domain.DeviceOrder, record string) (gdt.Written, error) {
	c, err := d.store.Get(ctx, company, customersKind, strconv.FormatInt(int64(o.CustomerID), 10), false)
	if err != nil {
		return gdt.Written{}, err
	}
	p := domain.OrderPatient{ID: o.CustomerID}
	if err := json.Unmarshal(c.Payload, &p.Data); err != nil {
		return gdt.Written{}, err
	}
	var shown *gdt.Info
	if o.FileID != nil {
		fid, err := domain.ParseFileID(string(*o.FileID))
		if err != nil {
			return gdt.Written{}, err
		}
		f, err := d.files.Get(ctx, company, fid)
		if err != nil {
			return gdt.Written{}, err
		}
		shown = f.GDT
	}
	m, err := domain.OrderMessage(device, o, id, p, shown)
	if err != nil {
		return gdt.Written{}, err
	}
	if record != "" {
		m.Record = record
	}
	return m.Encode()
}

func (d *DeviceOrders) device(ctx context.Context, company domain.CompanyID, id string) (domain.Device, error) {
	o, err := d.store.Get(ctx, company, devicesKind, id, false)
	if err != nil {
		return domain.Device{}, err
	}
	return domain.DeviceOf(o.Payload)
}

// Cancel ends an order that is not done: the bridge withdraws its file if
// it was written (deleted while unread; a 6303 for a GDT 3.0 device).
func (d *DeviceOrders) Cancel(ctx context.Context, grant domain.Grant, id string, w ports.Write) (ports.WrittenObject, error) {
	if err := grant.Require(domain.WriteScope(ordersKind.Slug)); err != nil {
		return ports.WrittenObject{}, err
	}
	var device string
	resp, err := d.change(ctx, grant, ordersKind, id, w, func(_ context.Context, current ports.StoredObject, rc domain.RuleContext) ([]byte, error) {
		o, err := orderOf(current)
		if err != nil {
			return nil, err
		}
		if !domain.OrderIsOpen(o.Status) {
			return nil, domain.ErrOrderClosed
		}
		device = string(o.DeviceID)
		return domain.SetFields(current.Payload, map[string]any{"status": domain.OrderCancelled, "cancelled_at": stamp(rc.Now)})
	})
	if err == nil && !resp.Replayed {
		d.wake.notify(grant.CompanyID, device)
	}
	return resp, err
}

func orderOf(o ports.StoredObject) (domain.DeviceOrder, error) {
	return domain.DeviceOrderOf(o.Payload)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// The bridge's reports on an order of its device.
const (
	ReportWritten   = "written"
	ReportTaken     = "taken"
	ReportFailed    = "failed"
	ReportWithdrawn = "withdrawn"
)

// Report records what the bridge did with an order of its device. Reports
// that arrive late (an order cancelled or done meanwhile) are kept as
// times, never turn a closed order back; a repeated one changes nothing.
func (d *DeviceOrders) Report(ctx context.Context, grant domain.Grant, id, status, reason string, w ports.Write) (ports.WrittenObject, error) {
	if err := grant.Require(domain.ScopeDeviceBridge); err != nil {
		return ports.WrittenObject{}, err
	}
	device, err := d.deviceOf(ctx, grant)
	if err != nil {
		return ports.WrittenObject{}, err
	}
	if status == ReportFailed && reason == "" {
		return ports.WrittenObject{}, domain.FieldErrors{{Field: "reason", Message: "is required when the order failed"}}.Err()
	}
	return d.change(ctx, grant, ordersKind, id, w, func(ctx context.Context, current ports.StoredObject, rc domain.RuleContext) ([]byte, error) {
		o, err := orderOf(current)
		if err != nil {
			return nil, err
		}
		if string(o.DeviceID) != device {
			return nil, domain.ErrNotFound // another device's order is none of this bridge's
		}
		set := map[string]any{}
		now := stamp(rc.Now)
		switch status {
		case ReportWritten:
			if o.WrittenAt == nil {
				set["written_at"] = now
			}
			if o.Status == domain.OrderOpen {
				set["status"] = domain.OrderWritten
			}
		case ReportTaken:
			if o.WrittenAt == nil {
				set["written_at"] = now
			}
			if o.TakenAt == nil {
				set["taken_at"] = now
			}
			if o.Status == domain.OrderOpen || o.Status == domain.OrderWritten {
				set["status"] = domain.OrderTaken
			}
		case ReportFailed:
			if !domain.OrderIsOpen(o.Status) {
				return nil, domain.ErrOrderClosed
			}
			set["status"], set["status_reason"] = domain.OrderFailed, reason
		case ReportWithdrawn:
			if o.Status != domain.OrderCancelled {
				return nil, domain.FieldErrors{{Field: "status", Message: "only a cancelled order is withdrawn"}}.Err()
			}
			set["withdrawn_at"] = now
		default:
			return nil, domain.FieldErrors{{Field: "status", Message: "must be written, taken, failed or withdrawn"}}.Err()
		}
		if len(set) == 0 {
			return current.Payload, nil
		}
		return domain.SetFields(current.Payload, set)
	})
}

// deviceOf is the device whose credential the grant is; ErrNotADevice for any other client.
func (d *DeviceOrders) deviceOf(ctx context.Context, grant domain.Grant) (string, error) {
	c, err := d.clients.Get(ctx, grant.ClientID)
	if err != nil {
		return "", err
	}
	if c.DeviceID == "" || c.CompanyID != grant.CompanyID {
		return "", domain.ErrNotADevice
	}
	return c.DeviceID, nil
}

// outboxLimit is how many orders one poll answers; the rest come with the next.
const outboxLimit = 100

// Outbox answers the orders of the grant's device that its bridge has to
// act on, waiting up to wait for one to appear. A poll that answers orders
// is an audit event naming their patients; an empty one leaves no trace.
func (d *DeviceOrders) Outbox(ctx context.Context, grant domain.Grant, wait time.Duration) (ports.Outbox, error) {
	if err := grant.Require(domain.ScopeDeviceBridge); err != nil {
		return ports.Outbox{}, err
	}
	device, err := d.deviceOf(ctx, grant)
	if err != nil {
		return ports.Outbox{}, err
	}
	dev, err := d.device(ctx, grant.CompanyID, device)
	if err != nil {
		return ports.Outbox{}, err
	}
	box := ports.Outbox{Device: domain.OutboxOf(device, dev), Orders: []domain.OutboxOrder{}}
	if wait > 0 {
		arrive(ctx) // its event comes when it answers: no audit batch waits for it meanwhile
	}
	deadline := time.Now().Add(wait)
	var patients []domain.CustomerID
poll:
	for {
		woken := d.wake.wait(grant.CompanyID, device)
		orders, whose, actionable, err := d.pending(ctx, grant.CompanyID, device, dev)
		if err != nil {
			d.wake.cancel(grant.CompanyID, device, woken)
			return ports.Outbox{}, err
		}
		left := time.Until(deadline)
		if actionable || left <= 0 {
			d.wake.cancel(grant.CompanyID, device, woken)
			box.Orders, patients = orders, whose
			break poll
		}
		select {
		case <-ctx.Done():
			d.wake.cancel(grant.CompanyID, device, woken)
			return ports.Outbox{}, ctx.Err()
		case <-woken:
			if d.wake.isDraining() {
				box.Orders, patients = orders, whose
				break poll
			}
		case <-time.After(min(left, d.poll)):
			d.wake.cancel(grant.CompanyID, device, woken)
		}
	}
	if len(box.Orders) == 0 {
		audit.Skip(ctx)
	}
	audit.Touch(ctx, patients...) // the answer names them: one event, each patient once
	return box, nil
}

// pending reads the device's orders the bridge acts on: open ones to
// write, written ones to watch, cancelled ones it wrote and has not
// withdrawn, and their patients, each once. actionable is false when only
// watching is left.
func (d *DeviceOrders) pending(ctx context.Context, company domain.CompanyID, device string, dev domain.Device) (
	out []domain.OutboxOrder, patients []domain.CustomerID, actionable bool, err error) {
	stored, err := d.orders.Outbox(ctx, company, device, outboxLimit)
	if err != nil {
		return nil, nil, false, err
	}
	out = make([]domain.OutboxOrder, 0, len(stored))
	for _, s := range stored {
		o, err := orderOf(s)
		if err != nil {
			return nil, nil, false, err
		}
		item := domain.OutboxOrder{ID: s.ID, Number: o.Number, Status: o.Status, Version: s.Version}
		switch o.Status {
		case domain.OrderOpen:
			actionable = true
			w, err := d.render(ctx, company, dev, s.ID, o, "")
			if err != nil {
				return nil, nil, false, fmt.Errorf("order %d: %w", o.Number, err)
			}
			item.GDT = w.Raw
		case domain.OrderCancelled: // written, not yet withdrawn
			actionable = true
			if *dev.GDTVersion == gdt.V30 && *o.Type == domain.OrderExamination {
				w, err := d.render(ctx, company, dev, s.ID, o, gdt.Cancel)
				if err != nil {
					return nil, nil, false, fmt.Errorf("order %d: %w", o.Number, err)
				}
				item.Cancel = w.Raw
			}
		}
		if !slices.Contains(patients, o.CustomerID) {
			patients = append(patients, o.CustomerID)
		}
		out = append(out, item)
	}
	return out, patients, actionable, nil
}

// Drain ends every long poll at once and lets no new one wait: the server
// is shutting down, and a bridge should find another replica now.
func (d *DeviceOrders) Drain() { d.wake.drain() }

// wakeups lets a long poll of one replica wait for the orders made on it.
type wakeups struct {
	mu       sync.Mutex
	waiting  map[string][]chan struct{}
	draining bool
}

func (w *wakeups) drain() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.draining = true
	for k, list := range w.waiting {
		for _, ch := range list {
			close(ch)
		}
		delete(w.waiting, k)
	}
}

func wakeKey(company domain.CompanyID, device string) string { return company.String() + "/" + device }

func (w *wakeups) wait(company domain.CompanyID, device string) chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.draining {
		close(ch)
		return ch
	}
	k := wakeKey(company, device)
	w.waiting[k] = append(w.waiting[k], ch)
	return ch
}

func (w *wakeups) isDraining() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.draining
}

func (w *wakeups) cancel(company domain.CompanyID, device string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := wakeKey(company, device)
	w.waiting[k] = slices.DeleteFunc(w.waiting[k], func(c chan struct{}) bool { return c == ch })
	if len(w.waiting[k]) == 0 {
		delete(w.waiting, k)
	}
}

func (w *wakeups) notify(company domain.CompanyID, device string) {
	if device == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	k := wakeKey(company, device)
	for _, ch := range w.waiting[k] {
		close(ch)
	}
	delete(w.waiting, k)
}

// Assign files a result that matched no order under one: the order is
// done and names the file, the file names the order.
func (d *DeviceOrders) Assign(ctx context.Context, grant domain.Grant, order string, file domain.FileID, w ports.Write) (ports.WrittenObject, error) {
	if err := grant.Require(domain.WriteScope(ordersKind.Slug)); err != nil {
		return ports.WrittenObject{}, err
	}
	return d.change(ctx, grant, ordersKind, order, w, func(ctx context.Context, current ports.StoredObject, rc domain.RuleContext) ([]byte, error) {
		o, err := orderOf(current)
		if err != nil {
			return nil, err
		}
		if o.Status == domain.OrderCancelled || o.Status == domain.OrderFailed {
			return nil, domain.ErrOrderClosed
		}
		f, err := d.files.Get(ctx, grant.CompanyID, file)
		if errors.Is(err, domain.ErrNotFound) {
			return nil, domain.FieldErrors{{Field: "file_id", Message: "names no file of this company"}}.Err()
		}
		if err != nil {
			return nil, err
		}
		switch {
		case f.CustomerID != o.CustomerID:
			return nil, domain.FieldErrors{{Field: "file_id", Message: "must belong to the order's customer"}}.Err()
		case f.OrderMatch == nil || *f.OrderMatch != "unmatched":
			return nil, domain.FieldErrors{{Field: "file_id", Message: "must name a device's result that matched no order"}}.Err()
		}
		// The result and the files it references (its PDF, its images) go together.
		assigned := []domain.FileID{file}
		if _, err := d.files.AssignOrder(ctx, grant.CompanyID, file, current.ID, rc.Now); err != nil {
			return nil, err
		}
		related, err := d.files.Many(ctx, grant.CompanyID, f.RelatedFileIDs)
		if err != nil {
			return nil, err
		}
		for _, r := range related {
			if r.OrderMatch != nil && *r.OrderMatch == "unmatched" && r.CustomerID == o.CustomerID {
				if _, err := d.files.AssignOrder(ctx, grant.CompanyID, r.ID, current.ID, rc.Now); err != nil {
					return nil, err
				}
				assigned = append(assigned, r.ID)
			}
		}
		return closeOrder(current.Payload, o, assigned, rc.Now)
	})
}

// closeOrder is the order's payload once results matched it: done, naming its files.
func closeOrder(payload []byte, o domain.DeviceOrder, files []domain.FileID, at time.Time) ([]byte, error) {
	ids := make([]string, 0, len(o.ResultFileIDs)+len(files))
	for _, id := range o.ResultFileIDs {
		ids = append(ids, string(id))
	}
	for _, f := range files {
		if !slices.Contains(ids, f.String()) {
			ids = append(ids, f.String())
		}
	}
	set := map[string]any{"status": domain.OrderDone, "result_file_ids": ids}
	if o.DoneAt == nil {
		set["done_at"] = stamp(at)
	}
	return domain.SetFields(payload, set)
}

// DeviceClientScopes are what a device's credential may do: fetch its
// device's orders and report on them (and upload its results at the doors).
var DeviceClientScopes = domain.Scopes{domain.ScopeDeviceBridge}

// Credential makes the device's OAuth client for its bridge, or gives the
// one it has a new secret (the old one works on for overlap, as for any
// client). The secret is answered once and kept only as its hash.
func (d *DeviceOrders) Credential(ctx context.Context, grant domain.Grant, device string, overlap time.Duration) (ports.DeviceCredential, error) {
	if err := grant.Require(domain.WriteScope(devicesKind.Slug)); err != nil {
		return ports.DeviceCredential{}, err
	}
	dev, err := d.device(ctx, grant.CompanyID, device)
	if err != nil {
		return ports.DeviceCredential{}, err
	}
	clients, err := d.clients.List(ctx, grant.CompanyID)
	if err != nil {
		return ports.DeviceCredential{}, err
	}
	now := d.now()
	for _, c := range slices.Backward(clients) {
		if c.DeviceID != device || c.RevokedAt != nil {
			continue
		}
		secret, err := domain.NewSecret()
		if err != nil {
			return ports.DeviceCredential{}, err
		}
		c.Rotate(secret, overlap, now)
		if err := d.clients.Update(ctx, grant.CompanyID, c); err != nil {
			return ports.DeviceCredential{}, err
		}
		return ports.DeviceCredential{DeviceID: device, ClientID: c.ID, ClientSecret: secret, PreviousUntil: c.PreviousSecretUntil}, nil
	}
	c, secret, err := domain.NewClient(grant.CompanyID, "Device "+dev.Name, DeviceClientScopes, now)
	if err != nil {
		return ports.DeviceCredential{}, err
	}
	c.DeviceID = device
	if err := d.clients.Create(ctx, c); err != nil {
		return ports.DeviceCredential{}, fmt.Errorf("store the device's client: %w", err)
	}
	return ports.DeviceCredential{DeviceID: device, ClientID: c.ID, ClientSecret: secret}, nil
}
