package usecase_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// bridgeClient, oneDevice and emptyOutbox are what a long poll of one
// device reads: its bridge's client, the device, and an outbox with
// nothing in it.
type bridgeClient struct {
	ports.ClientRepository
	company domain.CompanyID
}

func (b bridgeClient) Get(_ context.Context, id domain.ClientID) (domain.Client, error) {
	return domain.Client{ID: id, CompanyID: b.company, DeviceID: "ekg"}, nil
}

type oneDevice struct{ ports.RecordStore }

func (oneDevice) Get(_ context.Context, _ domain.CompanyID, _ *domain.Kind, id string, _ bool) (ports.StoredObject, error) {
	return ports.StoredObject{ID: id, Payload: []byte(`{"name":"EKG","gdt_id":"EKG1"}`)}, nil
}

type emptyOutbox struct{ ports.DeviceOrderStore }

func (emptyOutbox) Outbox(context.Context, domain.CompanyID, string, int) ([]ports.StoredObject, error) {
	return nil, nil
}

// heldParts is an upload's body still on its way: Next waits until the
// test lets it fail.
type heldParts struct{ release chan struct{} }

var errBodyCut = errors.New("the device stopped sending")

func (h heldParts) Next() (ports.Part, error) {
	<-h.release
	return ports.Part{}, errBodyCut
}

// awaited waits until a's batches await want requests.
func awaited(t *testing.T, a *usecase.Auditor, want int64, what string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); usecase.AuditAwaited(a) != want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the audit batch awaits %d requests, want %d", what, usecase.AuditAwaited(a), want)
		}
	}
}

// TestWaitingRequestsAreNotAwaited: a bridge's long poll and an upload
// whose body is still streaming are not waited for by a lingering audit
// batch (with bridges polling all day, every batch would wait out its
// linger); another request the door announced still is.
func TestWaitingRequestsAreNotAwaited(t *testing.T) {
	t.Parallel()
	company := domain.NewCompanyID()
	a := usecase.NewAuditor(nil, nil, nil, nil, nil, nil)
	orders := usecase.NewDeviceOrders(oneDevice{}, nil, nil, nil, a, emptyOutbox{}, nil, bridgeClient{company: company})
	uploads := usecase.NewUploads(nil, nil, nil, nil, nil, nil, nil, nil, domain.LockoutPolicy{}, a, nil, nil, nil)
	_, endOther := a.Expect(context.Background())
	defer endOther()

	ctx, end := a.Expect(context.Background())
	defer end()
	ctx, cancel := context.WithCancel(ctx)
	polled := make(chan error, 1)
	go func() {
		grant := domain.Grant{CompanyID: company, ClientID: "pc_bridge", Scopes: domain.Scopes{domain.ScopeDeviceBridge}}
		_, err := orders.Outbox(ctx, grant, 50*time.Second)
		polled <- err
	}()
	awaited(t, a, 1, "a long poll")
	cancel()
	if err := <-polled; !errors.Is(err, context.Canceled) {
		t.Fatalf("the poll ended with %v", err)
	}

	ctx, end = a.Expect(context.Background())
	defer end()
	body := heldParts{release: make(chan struct{})}
	stored := make(chan error, 1)
	go func() {
		_, err := uploads.Store(ctx, ports.UploadTarget{Company: domain.Company{ID: company}, Customer: 1}, domain.Source{}, body)
		stored <- err
	}()
	awaited(t, a, 1, "an upload")
	close(body.release)
	if err := <-stored; err == nil {
		t.Fatal("an upload whose body was cut was stored")
	}
	endOther()
	awaited(t, a, 0, "every request over")
}
