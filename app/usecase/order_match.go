package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ordermatch"
	"github.com/praxis-health/praxis/ports"
)

// orderMatcher files the results of an upload under the device orders they
// answer (docs/contract.md §14), in the upload's transaction.
type orderMatcher struct {
	store  ports.RecordStore
	orders ports.DeviceOrderStore
}

var (
	matched   = "matched"
	unmatched = "unmatched"
)

// match marks each GDT result among files (and the files it references)
// matched to its order or unmatched, and closes the orders matched. device
// is the uploading device's id ("" when the company's upload secret was
// used: then the result's sender, 8316, names the device). A company
// without devices has no orders: its files stay as they were.
func (m orderMatcher) match(ctx context.Context, company domain.CompanyID, device string, files []domain.File, at time.Time) error {
	var devices []ports.StoredObject
	loaded := false
	for i := range files {
		f := &files[i]
		if f.GDT == nil || (f.GDT.RecordType != "6310" && f.GDT.RecordType != "6311") {
			continue
		}
		if !loaded {
			all, err := m.store.All(ctx, company, devicesKind)
			if err != nil {
				return err
			}
			devices, loaded = all[0], true
		}
		if len(devices) == 0 && device == "" {
			return nil
		}
		by := device
		if by == "" && f.GDT.SenderID != nil {
			by = deviceByGDTID(devices, *f.GDT.SenderID)
		}
		order, ok, err := m.find(ctx, company, by, ordermatch.KeysOf(f.GDT, f.CustomerID), at)
		if err != nil {
			return err
		}
		state := &unmatched
		var orderID *string
		if ok {
			state, orderID = &matched, &order.ID
		}
		ids := []domain.FileID{f.ID}
		for j := range files {
			if files[j].ID == f.ID || slices.Contains(f.RelatedFileIDs, files[j].ID) {
				files[j].OrderMatch, files[j].DeviceOrderID = state, orderID
				if files[j].ID != f.ID {
					ids = append(ids, files[j].ID)
				}
			}
		}
		if ok {
			if err := m.close(ctx, company, order.ID, ids, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// deviceByGDTID is the id of the device whose GDT id a result names as its sender.
func deviceByGDTID(devices []ports.StoredObject, gdtID string) string {
	for _, d := range devices {
		var dev struct {
			GDTID string `json:"gdt_id"`
		}
		if json.Unmarshal(d.Payload, &dev) == nil && strings.EqualFold(dev.GDTID, strings.TrimSpace(gdtID)) {
			return d.ID
		}
	}
	return ""
}

// find runs ordermatch.Find over the store.
func (m orderMatcher) find(ctx context.Context, company domain.CompanyID, device string, keys ordermatch.Keys, at time.Time) (ordermatch.Order, bool, error) {
	var failed error
	keep := func(o ports.StoredObject, err error) (ordermatch.Order, bool) {
		if err != nil {
			if !errors.Is(err, domain.ErrNotFound) && failed == nil {
				failed = err
			}
			return ordermatch.Order{}, false
		}
		ref, err := orderRef(o)
		if err != nil && failed == nil {
			failed = err
		}
		return ref, err == nil
	}
	order, ok := ordermatch.Find(keys, device, at, ordermatch.Lookup{
		ByUUID: func(id string) (ordermatch.Order, bool) { return keep(m.store.Get(ctx, company, ordersKind, id, true)) },
		ByNumber: func(n int64) (ordermatch.Order, bool) {
			return keep(m.orders.ByNumber(ctx, company, n))
		},
		Open: func(device string, patient domain.CustomerID, procedure string, since time.Time) []ordermatch.Order {
			list, err := m.orders.Open(ctx, company, device, patient, procedure, since)
			if err != nil {
				failed = err
				return nil
			}
			out := make([]ordermatch.Order, 0, len(list))
			for _, o := range list {
				if ref, ok := keep(o, nil); ok {
					out = append(out, ref)
				}
			}
			return out
		},
	})
	return order, ok && failed == nil, failed
}

func orderRef(o ports.StoredObject) (ordermatch.Order, error) {
	order, err := orderOf(o)
	if err != nil {
		return ordermatch.Order{}, err
	}
	if o.Customer == nil {
		return ordermatch.Order{}, errors.New("device order " + o.ID + " without a customer")
	}
	procedure := ""
	if order.Procedure != nil {
		procedure = *order.Procedure
	}
	return ordermatch.Order{ID: o.ID, Number: order.Number, Device: string(order.DeviceID), Customer: *o.Customer,
		Procedure: procedure, Status: order.Status, CreatedAt: o.CreatedAt}, nil
}

// close marks the order done with the files of its result, in the upload's transaction.
func (m orderMatcher) close(ctx context.Context, company domain.CompanyID, id string, files []domain.FileID, at time.Time) error {
	current, err := m.store.Get(ctx, company, ordersKind, id, true)
	if err != nil {
		return err
	}
	o, err := orderOf(current)
	if err != nil {
		return err
	}
	payload, err := closeOrder(current.Payload, o, files, at)
	if err != nil {
		return err
	}
	_, err = m.store.Update(ctx, company, ordersKind, id, payload, at)
	return err
}
