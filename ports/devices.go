package ports

import (
	"context"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// DeviceOrderStore finds the company's device orders (objects of the kind
// device-orders in the RecordStore) the way the GDT round trip asks for
// them, and numbers them (docs/contract.md §14).
type DeviceOrderStore interface {
	// ByNumber is the live order with number (8310); domain.ErrNotFound for
	// none, or another company's.
	ByNumber(ctx context.Context, company domain.CompanyID, number int64) (StoredObject, error)
	// Outbox lists the device's live orders its bridge acts on, by number,
	// at most limit: open and written ones, and cancelled ones that were
	// written and not yet withdrawn.
	Outbox(ctx context.Context, company domain.CompanyID, device string, limit int) ([]StoredObject, error)
	// Open lists the device's live orders of customer and procedure that are
	// open, written or taken, made at or after since, locked for the rest of
	// the transaction: a concurrent result that closed one is waited for.
	Open(ctx context.Context, company domain.CompanyID, device string, customer domain.CustomerID, procedure string, since time.Time) ([]StoredObject, error)
	// Next is the company's next number of counter (1, 2, …): run it in the
	// transaction of the write that takes the number.
	Next(ctx context.Context, company domain.CompanyID, counter string) (int64, error)
}

// DeviceCredential is a device's OAuth client, shown once when made.
type DeviceCredential struct {
	DeviceID     string
	ClientID     domain.ClientID
	ClientSecret domain.Secret
	// PreviousUntil is when a rotation's replaced secret stops working; nil when none was replaced.
	PreviousUntil *time.Time
}

// DeviceOrders is the driving port of the round trip beyond the generic
// reads: orders made and cancelled by the practice, fetched and reported by
// the bridge with a device's credential, results assigned by staff.
type DeviceOrders interface {
	Create(ctx context.Context, grant domain.Grant, body domain.Document, key *IdempotencyKey) (WrittenObject, error)
	Cancel(ctx context.Context, grant domain.Grant, id string, w Write) (WrittenObject, error)
	// Report is the bridge's word on an order of its device: written, taken
	// or failed (with reason).
	Report(ctx context.Context, grant domain.Grant, id, status, reason string, w Write) (WrittenObject, error)
	// Outbox waits up to wait for orders of the grant's device to write and
	// answers them with their GDT files.
	Outbox(ctx context.Context, grant domain.Grant, wait time.Duration) (Outbox, error)
	// Assign files a result that matched no order under one (it is then done).
	Assign(ctx context.Context, grant domain.Grant, order string, file domain.FileID, w Write) (WrittenObject, error)
	// Credential makes or rotates the device's OAuth client for its bridge.
	Credential(ctx context.Context, grant domain.Grant, device string, overlap time.Duration) (DeviceCredential, error)
}

// Outbox is what a device's bridge is to write: the device's settings and
// its orders in number order, each with its GDT record.
type Outbox struct {
	Device domain.DeviceOutbox
	Orders []domain.OutboxOrder
}
