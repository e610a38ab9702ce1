package domain

import (
	"fmt"
	"strings"
)

// MedicalFeeService is a service performed, waiting to be billed (docs/sections.md §9).
type MedicalFeeService struct {
	CustomerID        CustomerID `json:"customer_id" jsonschema:"required"`
	UserID            UUID       `json:"user_id" jsonschema:"required"`
	AppointmentID     *UUID      `json:"appointment_id"`
	PerformedOn       Date       `json:"performed_on" jsonschema:"required"`
	Code              string     `json:"code" jsonschema:"required,pattern=^[A-Za-z0-9.-]{1\\,20}$"`
	Name              string     `json:"name" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	InsurerTariffCode *string    `json:"insurer_tariff_code" jsonschema:"maxLength=20,format=line"`
	Quantity          *Decimal   `json:"quantity"`
	UnitPrice         Money      `json:"unit_price" jsonschema:"required"`
	Currency          *string    `json:"currency" jsonschema:"enum=EUR"`
	DiscountPercent   *Decimal   `json:"discount_percent"`
	TaxRate           *Decimal   `json:"tax_rate"`
	Total             *Money     `json:"total" server:"true"`
	DiagnosisIDs      []UUID     `json:"diagnosis_ids" jsonschema:"maxItems=10,uniqueItems=true"`
	Status            *string    `json:"status" server:"true" jsonschema:"enum=open,enum=billed,enum=cancelled"`
	InvoiceID         *UUID      `json:"invoice_id" server:"true"`
	FeeNoteID         *UUID      `json:"fee_note_id" server:"true"`
}

func (m *MedicalFeeService) customer() *CustomerID { return &m.CustomerID }

func (m *MedicalFeeService) normalize(RuleContext) {
	if m.Quantity == nil {
		m.Quantity = ptr(Decimal("1"))
	}
	if m.DiscountPercent == nil {
		m.DiscountPercent = ptr(Decimal("0"))
	}
	if m.TaxRate == nil {
		m.TaxRate = ptr(Decimal("0"))
	}
	defaultTo(&m.Currency, "EUR")
	defaultTo(&m.Status, "open")
	m.Total = ptr(MoneyOf(lineNet(*m.Quantity, m.UnitPrice, m.DiscountPercent)))
}

func (m *MedicalFeeService) check(rc RuleContext, errs *FieldErrors) {
	notFuture("performed_on", &m.PerformedOn, rc, errs)
	if q := m.Quantity.Rat(); q.Sign() <= 0 || !decimalPlaces(*m.Quantity, 3) {
		errs.Add("quantity", "must be above 0 with at most 3 decimals")
	}
	nonNegative("unit_price", &m.UnitPrice, errs)
	percent("discount_percent", m.DiscountPercent, errs)
	percent("tax_rate", m.TaxRate, errs)
}

func (m *MedicalFeeService) refs() []Ref {
	out := []Ref{customerRef(m.CustomerID), userRef("user_id", m.UserID, false)}
	out = append(out, optRef("appointment_id", "appointments", m.AppointmentID)...)
	return append(out, diagnosisRefs("diagnosis_ids", m.DiagnosisIDs)...)
}

// ErrNotOpen: a medical fee service that is billed or cancelled takes no changes.
var ErrNotOpen = fmt.Errorf("%w: only an open medical fee service can be changed", ErrConflict)

// patchable carries the one server field a PATCH may set, after checking the stored state.
func (m *MedicalFeeService) patchable(_ RuleContext, stored, patch map[string]any) (map[string]any, error) {
	if stored["status"] != "open" {
		return nil, ErrNotOpen
	}
	status, touched := patch["status"]
	delete(patch, "status")
	switch {
	case !touched || status == "open":
		return nil, nil
	case status == "cancelled":
		return map[string]any{"status": "cancelled"}, nil
	}
	return nil, FieldErrors{{Field: "status", Message: "a PATCH may only set cancelled"}}.Err()
}

func decimalPlaces(d Decimal, n int) bool {
	_, frac, _ := strings.Cut(string(d), ".")
	return len(frac) <= n
}

const exampleMedicalFeeService = `{"customer_id":$CUSTOMER,"user_id":"$USER","performed_on":"2026-03-10","code":"RR24",
"name":"24-hour blood pressure measurement","quantity":"1","unit_price":"85.00","discount_percent":"10","tax_rate":"0",
"diagnosis_ids":["$DIAGNOSIS"]}`
