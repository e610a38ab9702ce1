package domain

import (
	"strings"
	"time"

	"github.com/praxis-health/praxis/domain/gdt"
)

// MatchWindow is how far back an order is a candidate for a result that
// names neither its UUID nor its number.
const MatchWindow = 24 * time.Hour

// OrderRef is what matching needs to know of one stored device order.
type OrderRef struct {
	ID        string
	Number    int64
	Device    string
	Customer  CustomerID
	Procedure string
	Status    string
	CreatedAt time.Time
}

// ResultKeys are the fields of a GDT result that can name its order.
type ResultKeys struct {
	UUID      string // 8314
	Number    string // 8310
	Procedure string // 8402
	Patient   CustomerID
}

// ResultKeysOf reads the keys from a result's metadata; false when the
// result names no single patient (3000) or is no result.
func ResultKeysOf(info *gdt.Info, patient CustomerID) ResultKeys {
	k := ResultKeys{Patient: patient}
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
func (k ResultKeys) OrderNumber() (int64, bool) {
	return gdt.Number(k.Number)
}

// OrderLookup finds the orders a result may name, all of the device's company.
type OrderLookup struct {
	ByUUID   func(id string) (OrderRef, bool)
	ByNumber func(n int64) (OrderRef, bool)
	// Open lists the device's orders of the patient and procedure that are
	// not done, cancelled or failed, created since the time given.
	Open func(device string, patient CustomerID, procedure string, since time.Time) []OrderRef
}

// MatchResult finds the order a result of device answers (docs/contract.md
// §14): the order its 8314 names, else its 8310, else the one order of the
// device for the patient and procedure that is still open from the last
// MatchWindow. A named order counts only when its device and patient agree
// with the result's; it may be done already (a later part of the same
// examination), never cancelled or failed. Between two open orders it never
// chooses: false, and the result waits for a person.
func MatchResult(keys ResultKeys, device string, at time.Time, find OrderLookup) (OrderRef, bool) {
	agrees := func(o OrderRef) bool {
		return o.Device == device && o.Customer == keys.Patient && o.Status != OrderCancelled && o.Status != OrderFailed
	}
	if device == "" || keys.Patient == 0 {
		return OrderRef{}, false
	}
	if ValidObjectID(keys.UUID) {
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
		return OrderRef{}, false
	}
	if open := find.Open(device, keys.Patient, keys.Procedure, at.Add(-MatchWindow)); len(open) == 1 && agrees(open[0]) {
		return open[0], true
	}
	return OrderRef{}, false
}
