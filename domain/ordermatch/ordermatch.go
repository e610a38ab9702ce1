// Package ordermatch finds the device order a GDT result answers
// (docs/contract.md §14): by the order's UUID or number the result names,
// else the one open order of the device for the patient and procedure.
package ordermatch

import (
	"strings"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/gdt"
)

// Window is how far back an order is a candidate for a result that
// names neither its UUID nor its number.
const Window = 24 * time.Hour

// Order is what matching needs to know of one stored device order.
type Order struct {
	ID        string
	Number    int64
	Device    string
	Customer  domain.CustomerID
	Procedure string
	Status    string
	CreatedAt time.Time
}

// Keys are the fields of a GDT result that can name its order.
type Keys struct {
	UUID      string // 8314
	Number    string // 8310
	Procedure string // 8402
	Patient   domain.CustomerID
}

// KeysOf reads the keys from a result's metadata; false when the
// result names no single patient (3000) or is no result.
func KeysOf(info *gdt.Info, patient domain.CustomerID) Keys {
	k := Keys{Patient: patient}
	if info == nil {
		return k
	}
	if info.OrderUUID != nil {
		k.UUID = strings.ToLower(strings.TrimSpace(*info.OrderUUID))
	}
	if info.OrderNumber != nil {
		k.Number = strings.TrimSpace(*info.OrderNumber)
	}
	if info.ProcedureCode != nil {
		k.Procedure = strings.TrimSpace(*info.ProcedureCode)
	}
	return k
}

// OrderNumber reads 8310 as an order number: digits only (leading zeros
// allowed); false for anything else (some programs write a constant text).
func (k Keys) OrderNumber() (int64, bool) {
	return gdt.Number(k.Number)
}

// Lookup finds the orders a result may name, all of the device's company.
type Lookup struct {
	ByUUID   func(id string) (Order, bool)
	ByNumber func(n int64) (Order, bool)
	// Open lists the device's orders of the patient and procedure that are
	// not done, cancelled or failed, created since the time given.
	Open func(device string, patient domain.CustomerID, procedure string, since time.Time) []Order
}

// Find finds the order a result of device answers (docs/contract.md
// §14): the order its 8314 names, else its 8310, else the one order of the
// device for the patient and procedure that is still open from the last
// Window. A named order counts only when its device and patient agree
// with the result's; it may be done already (a later part of the same
// examination), never cancelled or failed. Between two open orders it never
// chooses: false, and the result waits for a person.
func Find(keys Keys, device string, at time.Time, find Lookup) (Order, bool) {
	agrees := func(o Order) bool {
		return o.Device == device && o.Customer == keys.Patient && o.Status != domain.OrderCancelled && o.Status != domain.OrderFailed
	}
	if device == "" || keys.Patient == 0 {
		return Order{}, false
	}
	if domain.ValidObjectID(keys.UUID) {
		if o, ok := find.ByUUID(keys.UUID); ok && agrees(o) {
			return o, true
		}
	}
	if n, ok := keys.OrderNumber(); ok {
		if o, ok := find.ByNumber(n); ok && agrees(o) {
			return o, true
		}
	}
	if keys.Procedure == "" {
		return Order{}, false
	}
	if open := find.Open(device, keys.Patient, keys.Procedure, at.Add(-Window)); len(open) == 1 && agrees(open[0]) {
		return open[0], true
	}
	return Order{}, false
}
