package porttest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// deviceOrdersFound: the counters hand out 1, 2, 3 per company; an order is
// found by its number, the device's outbox lists open and written orders
// and cancelled ones written but not withdrawn, by number; the open orders
// of a patient and procedure are those from the window; another company
// finds none of them.
func deviceOrdersFound(t *testing.T, newRepos func(t *testing.T) RecordRepositories) {
	f := newRecordFixture(t, newRepos)
	other, _ := NewCompany(t, f.r.Repositories, "Other", 10)
	ctx := context.Background()
	orders := domain.KindOf("device-orders")
	device := domain.NewObjectID()
	at := time.Now().UTC().Truncate(time.Second)
	put := func(status string, extra string) ports.StoredObject {
		var stored ports.StoredObject
		err := f.r.Tx.InTx(ctx, func(ctx context.Context) error {
			n, err := f.r.DeviceOrders.Next(ctx, f.company, orders.Slug)
			if err != nil {
				return err
			}
			payload := fmt.Sprintf(`{"customer_id":%d,"device_id":%q,"type":"examination","procedure":"P1","tests":[],"number":%d,"status":%q%s}`,
				f.customer, device, n, status, extra)
			stored, err = f.r.Records.Insert(ctx, f.company, orders, ports.StoredObject{ID: domain.NewObjectID(), Customer: &f.customer,
				Payload: []byte(payload), CreatedAt: at})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return stored
	}
	open := put(domain.OrderOpen, "")
	written := put(domain.OrderWritten, `,"written_at":"2026-11-26T10:00:00Z"`)
	put(domain.OrderDone, "")
	withdraw := put(domain.OrderCancelled, `,"written_at":"2026-11-26T10:00:00Z"`)
	put(domain.OrderCancelled, `,"written_at":"2026-11-26T10:00:00Z","withdrawn_at":"2026-11-26T10:01:00Z"`)
	put(domain.OrderCancelled, "") // never written: nothing to take back

	o, err := f.r.DeviceOrders.ByNumber(ctx, f.company, 2)
	if err != nil || o.ID != written.ID {
		t.Fatalf("number 2: %v %v, want %s", o.ID, err, written.ID)
	}
	box, err := f.r.DeviceOrders.Outbox(ctx, f.company, device, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(box), []string{open.ID, written.ID, withdraw.ID}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outbox %v, want %v", got, want)
	}
	var candidates []ports.StoredObject
	err = f.r.Tx.InTx(ctx, func(ctx context.Context) error {
		candidates, err = f.r.DeviceOrders.Open(ctx, f.company, device, f.customer, "P1", at.Add(-time.Hour))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(candidates), []string{open.ID, written.ID}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("open orders %v, want %v", got, want)
	}
	if late, _ := f.r.DeviceOrders.Open(ctx, f.company, device, f.customer, "P1", at.Add(time.Second)); len(late) != 0 {
		t.Errorf("orders from before the window: %v", ids(late))
	}
	if other, _ := f.r.DeviceOrders.Open(ctx, f.company, device, f.customer, "P2", at.Add(-time.Hour)); len(other) != 0 {
		t.Errorf("orders of another procedure: %v", ids(other))
	}

	// Another company: its own counter, none of these orders.
	if _, err := f.r.DeviceOrders.ByNumber(ctx, other.ID, 2); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's number 2: %v", err)
	}
	if box, _ := f.r.DeviceOrders.Outbox(ctx, other.ID, device, 10); len(box) != 0 {
		t.Errorf("another company's outbox: %v", ids(box))
	}
	var first int64
	if err := f.r.Tx.InTx(ctx, func(ctx context.Context) error {
		first, err = f.r.DeviceOrders.Next(ctx, other.ID, orders.Slug)
		return err
	}); err != nil || first != 1 {
		t.Errorf("another company's first number: %d %v", first, err)
	}
}
