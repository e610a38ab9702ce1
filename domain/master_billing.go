package domain

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
)

// Billing documents: invoices and fee notes share a base; cash receipts
// share the amounts. Every amount a document states is checked against what
// its lines compute, half up to cents per line (docs/sections.md §26–§28).

// LineItem is one line of a bill: of a receipt as it stands, of an invoice with more.
type LineItem struct {
	Position        int      `json:"position" jsonschema:"required,minimum=1"`
	Description     string   `json:"description" jsonschema:"required,maxLength=200,format=line,pattern=\\S"`
	Code            *string  `json:"code" jsonschema:"maxLength=20,format=line"`
	Quantity        Decimal  `json:"quantity" jsonschema:"required"`
	UnitPrice       Money    `json:"unit_price" jsonschema:"required"`
	DiscountPercent *Decimal `json:"discount_percent"`
	TaxRate         Decimal  `json:"tax_rate" jsonschema:"required"`
	NetAmount       Money    `json:"net_amount" jsonschema:"required"`
}

func (l *LineItem) amount(i int) lineAmount {
	return lineAmount{at: "items[" + itoa(i) + "]", position: l.Position, quantity: l.Quantity, unitPrice: l.UnitPrice,
		discount: l.DiscountPercent, taxRate: l.TaxRate, net: l.NetAmount}
}

func (l *LineItem) defaultDiscount() {
	if l.DiscountPercent == nil {
		l.DiscountPercent = ptr(Decimal("0"))
	}
}

// BillingItem is one line of an invoice.
type BillingItem struct {
	LineItem
	PerformedOn         *Date `json:"performed_on"`
	MedicalFeeServiceID *UUID `json:"medical_fee_service_id"`
}

// TaxLine sums the items of one tax rate.
type TaxLine struct {
	TaxRate   Decimal `json:"tax_rate" jsonschema:"required"`
	NetAmount Money   `json:"net_amount" jsonschema:"required"`
	TaxAmount Money   `json:"tax_amount" jsonschema:"required"`
}

// amounts are the parts of a document that the amount rules read.
type amounts struct {
	items                         []lineAmount
	taxes                         []TaxLine
	net, tax, gross               Money
	allowNegative, allowEmptyList bool
}

type lineAmount struct {
	at        string
	position  int
	quantity  Decimal
	unitPrice Money
	discount  *Decimal
	taxRate   Decimal
	net       Money
}

// check states every amount rule at once: each line's net, one tax line per
// rate used with its sums, and the totals.
func (a amounts) check(errs *FieldErrors) {
	if len(a.items) == 0 && !a.allowEmptyList {
		errs.Add("items", "must have at least 1 item")
	}
	nets := map[string]*big.Rat{} // by rate, as a normalized string
	total := new(big.Rat)
	last := 0
	for _, it := range a.items {
		if it.position != 0 {
			if it.position <= last {
				errs.Add(it.at+".position", "must be unique and ascending")
			}
			last = it.position
		}
		if it.quantity.Rat().Sign() <= 0 && !a.allowNegative {
			errs.Add(it.at+".quantity", "must be above 0")
		}
		if it.discount != nil && !it.discount.Between("0", "100") {
			errs.Add(it.at+".discount_percent", "must lie between 0 and 100")
		}
		if !it.taxRate.Between("0", "100") {
			errs.Add(it.at+".tax_rate", "must lie between 0 and 100")
		}
		want := lineNet(it.quantity, it.unitPrice, it.discount)
		if !sameMoney(it.net, want) {
			errs.Add(it.at+".net_amount", "must be quantity × unit_price × (1 − discount_percent/100), half up: "+string(MoneyOf(want)))
		}
		rate := it.taxRate.Rat().RatString()
		if nets[rate] == nil {
			nets[rate] = new(big.Rat)
		}
		nets[rate].Add(nets[rate], want)
		total.Add(total, want)
	}
	taxTotal := new(big.Rat)
	seen := map[string]bool{}
	for i, t := range a.taxes {
		at := "taxes[" + itoa(i) + "]"
		rate := t.TaxRate.Rat().RatString()
		net, used := nets[rate]
		switch {
		case seen[rate]:
			errs.Add(at+".tax_rate", "is listed twice")
		case !used:
			errs.Add(at+".tax_rate", "is used by no item")
		default:
			if !sameMoney(t.NetAmount, net) {
				errs.Add(at+".net_amount", "must be the sum of the items of this rate: "+string(MoneyOf(net)))
			}
			want := roundCents(new(big.Rat).Quo(new(big.Rat).Mul(net, t.TaxRate.Rat()), hundred))
			if !sameMoney(t.TaxAmount, want) {
				errs.Add(at+".tax_amount", "must be net_amount × tax_rate / 100, half up: "+string(MoneyOf(want)))
			}
			taxTotal.Add(taxTotal, want)
		}
		seen[rate] = true
	}
	rates := make([]string, 0, len(nets))
	for r := range nets {
		rates = append(rates, r)
	}
	slices.Sort(rates)
	for _, r := range rates {
		if !seen[r] {
			errs.Add("taxes", "need one line for each tax rate the items use")
			break
		}
	}
	if !sameMoney(a.net, total) {
		errs.Add("net_total", "must be the sum of the items' net_amount: "+string(MoneyOf(total)))
	}
	if !sameMoney(a.tax, taxTotal) {
		errs.Add("tax_total", "must be the sum of the taxes' tax_amount: "+string(MoneyOf(taxTotal)))
	}
	if !sameMoney(a.gross, new(big.Rat).Add(total, taxTotal)) {
		errs.Add("gross_total", "must be net_total + tax_total")
	}
}

// BillingBase is what invoices and fee notes share.
type BillingBase struct {
	Number        string    `json:"number" jsonschema:"required,pattern=^[A-Za-z0-9/._-]{1\\,30}$"`
	TenantID      *UUID     `json:"tenant_id"`
	UserID        *UUID     `json:"user_id"`
	Recipient     Contact   `json:"recipient" jsonschema:"required"`
	IssuedOn      Date      `json:"issued_on" jsonschema:"required"`
	DueOn         *Date     `json:"due_on"`
	ServiceFrom   *Date     `json:"service_from"`
	ServiceUntil  *Date     `json:"service_until"`
	Status        string    `json:"status" jsonschema:"required,enum=open,enum=paid,enum=cancelled"`
	Taxes         []TaxLine `json:"taxes" jsonschema:"required"`
	NetTotal      Money     `json:"net_total" jsonschema:"required"`
	TaxTotal      Money     `json:"tax_total" jsonschema:"required"`
	GrossTotal    Money     `json:"gross_total" jsonschema:"required"`
	Currency      *string   `json:"currency" jsonschema:"enum=EUR"`
	TaxNote       *string   `json:"tax_note" jsonschema:"maxLength=200,format=line"`
	PaidTotal     Money     `json:"paid_total" jsonschema:"required"`
	PaidAt        *DateTime `json:"paid_at"`
	PaymentMethod *string   `json:"payment_method" jsonschema:"enum=cash,enum=card,enum=bank_transfer,enum=other"`
	CancelledAt   *DateTime `json:"cancelled_at"`
	FileID        *UUID     `json:"file_id"`
}

func (b *BillingBase) normalizeBase() { defaultTo(&b.Currency, "EUR") }

func (b *BillingBase) checkBase(items []lineAmount, errs *FieldErrors) {
	if b.Recipient.Address == nil {
		errs.Add("recipient.address", "is required")
	}
	b.Recipient.check("recipient", errs)
	orderedDates("due_on", &b.IssuedOn, b.DueOn, errs, "must not be before issued_on")
	orderedDates("service_until", b.ServiceFrom, b.ServiceUntil, errs, "must not be before service_from")
	amounts{items: items, taxes: b.Taxes, net: b.NetTotal, tax: b.TaxTotal, gross: b.GrossTotal}.check(errs)
	if moneyRat(b.TaxTotal).Sign() == 0 && blank(b.TaxNote) {
		errs.Add("tax_note", "is required when tax_total is 0: the exemption clause printed")
	}
	paid, gross := moneyRat(b.PaidTotal), moneyRat(b.GrossTotal)
	if paid.Sign() < 0 || paid.Cmp(gross) > 0 {
		errs.Add("paid_total", "must lie between 0 and gross_total")
	}
	if b.Status == "paid" {
		if paid.Cmp(gross) != 0 {
			errs.Add("paid_total", "must equal gross_total when paid")
		}
		if b.PaidAt == nil {
			errs.Add("paid_at", "is required when paid")
		}
		if b.PaymentMethod == nil {
			errs.Add("payment_method", "is required when paid")
		}
	}
	if b.Status == "cancelled" && b.CancelledAt == nil {
		errs.Add("cancelled_at", "is required when cancelled")
	}
}

func (b *BillingBase) baseRefs() []Ref {
	var out []Ref
	if b.TenantID != nil {
		out = append(out, Ref{Field: "tenant_id", Section: "tenants", ID: string(*b.TenantID)})
	}
	if b.UserID != nil {
		out = append(out, userRef("user_id", *b.UserID, false))
	}
	return out
}

// billedServices are the references of a document's items to the medical fee
// services they bill, and the effect on them: billed by the document, or
// open again once it is cancelled. A cancelled service cannot be billed.
func billedServices(items []BillingItem, customer *CustomerID, status, docField string) ([]Ref, func(id string) []Effect) {
	var refs []Ref
	var ids []string
	for i, it := range items {
		if it.MedicalFeeServiceID == nil {
			continue
		}
		ids = append(ids, string(*it.MedicalFeeServiceID))
		refs = append(refs, Ref{Field: "items[" + itoa(i) + "].medical_fee_service_id", Section: "medical-fee-services",
			ID: string(*it.MedicalFeeServiceID), SameCustomer: customer != nil, Rule: func(t RefTarget) string {
				if t.Attrs["status"] == "cancelled" {
					return "names a cancelled medical fee service"
				}
				return ""
			}})
	}
	return refs, func(doc string) []Effect {
		set := map[string]any{"status": "billed", docField: doc}
		if status == "cancelled" {
			set = map[string]any{"status": "open", docField: nil}
		}
		out := make([]Effect, len(ids))
		for i, id := range ids {
			out[i] = Effect{Section: "medical-fee-services", ID: id, Set: set}
		}
		return out
	}
}

func billingLines(items []BillingItem) []lineAmount {
	out := make([]lineAmount, len(items))
	for i := range items {
		out[i] = items[i].amount(i)
	}
	return out
}

func defaultDiscounts(items []BillingItem) {
	for i := range items {
		items[i].defaultDiscount()
	}
}

// Invoice is a bill (docs/sections.md §26).
type Invoice struct {
	BillingBase
	CustomerID *CustomerID   `json:"customer_id"`
	Items      []BillingItem `json:"items" jsonschema:"required"`
}

func (v *Invoice) normalize(RuleContext) { v.normalizeBase(); defaultDiscounts(v.Items) }
func (v *Invoice) check(_ RuleContext, errs *FieldErrors) {
	v.checkBase(billingLines(v.Items), errs)
}
func (v *Invoice) customer() *CustomerID { return v.CustomerID }
func (v *Invoice) refs() []Ref {
	out := v.baseRefs()
	if v.CustomerID != nil {
		out = append(out, customerRef(*v.CustomerID))
	}
	billed, _ := billedServices(v.Items, v.CustomerID, v.Status, "invoice_id")
	return append(out, billed...)
}

func (v *Invoice) effects(id string) []Effect {
	_, effects := billedServices(v.Items, v.CustomerID, v.Status, "invoice_id")
	return effects(id)
}

// FeeNote is a private doctor's invoice, claimed back from the insurer (docs/sections.md §28).
type FeeNote struct {
	BillingBase
	CustomerID       CustomerID         `json:"customer_id" jsonschema:"required"`
	Items            []FeeNoteItem      `json:"items" jsonschema:"required"`
	SVNR             *string            `json:"svnr" jsonschema:"format=svnr"`
	Insurer          *string            `json:"insurer" jsonschema:"enum=oegk,enum=bvaeb,enum=svs,enum=kfa,enum=de_statutory,enum=private,enum=self_pay,enum=other"`
	Diagnoses        []PrintedDiagnosis `json:"diagnoses"`
	SubmissionStatus string             `json:"submission_status" jsonschema:"required,enum=not_submitted,enum=submitted,enum=accepted,enum=rejected"`
	SubmittedAt      *DateTime          `json:"submitted_at"`
}

// FeeNoteItem is an invoice line with the insurer's tariff position.
type FeeNoteItem struct {
	BillingItem
	InsurerTariffCode *string `json:"insurer_tariff_code" jsonschema:"maxLength=20,format=line"`
}

// PrintedDiagnosis is a diagnosis as a fee note prints it.
type PrintedDiagnosis struct {
	ICD10Code string  `json:"icd10_code" jsonschema:"required,pattern=^[A-Z][0-9]{2}(\\.[0-9A-Z]{1\\,4})?$"`
	Text      *string `json:"text" jsonschema:"maxLength=500,format=line"`
}

func (f *FeeNote) normalize(RuleContext) {
	f.normalizeBase()
	for i := range f.Items {
		f.Items[i].defaultDiscount()
	}
}

func (f *FeeNote) check(_ RuleContext, errs *FieldErrors) {
	f.checkBase(billingLines(f.items()), errs)
	if f.SubmissionStatus != "not_submitted" {
		if f.SVNR == nil || f.Insurer == nil || len(f.Diagnoses) == 0 || f.Status != "paid" {
			errs.Add("submission_status", "a claim needs svnr, insurer, at least one diagnosis and the status paid")
		}
		if f.SubmittedAt == nil {
			errs.Add("submitted_at", "is required once submitted")
		}
	}
}

func (f *FeeNote) customer() *CustomerID { return &f.CustomerID }

func (f *FeeNote) items() []BillingItem {
	items := make([]BillingItem, len(f.Items))
	for i, it := range f.Items {
		items[i] = it.BillingItem
	}
	return items
}

func (f *FeeNote) refs() []Ref {
	billed, _ := billedServices(f.items(), &f.CustomerID, f.Status, "fee_note_id")
	return append(append(f.baseRefs(), customerRef(f.CustomerID)), billed...)
}

func (f *FeeNote) effects(id string) []Effect {
	_, effects := billedServices(f.items(), &f.CustomerID, f.Status, "fee_note_id")
	return effects(id)
}

// CashRevenue is a register receipt; it carries no patient data, ever (docs/sections.md §27).
type CashRevenue struct {
	Number                string     `json:"number" jsonschema:"required,maxLength=50,format=line,pattern=\\S"`
	RegisterID            string     `json:"register_id" jsonschema:"required,maxLength=50,format=line,pattern=\\S"`
	Kind                  string     `json:"kind" jsonschema:"required,enum=sale,enum=cancellation,enum=training,enum=zero_receipt,enum=deposit,enum=withdrawal"`
	Status                string     `json:"status" jsonschema:"required,enum=paid,enum=cancelled"`
	OccurredAt            DateTime   `json:"occurred_at" jsonschema:"required"`
	Items                 []LineItem `json:"items" jsonschema:"required"`
	Taxes                 []TaxLine  `json:"taxes" jsonschema:"required"`
	NetTotal              Money      `json:"net_total" jsonschema:"required"`
	TaxTotal              Money      `json:"tax_total" jsonschema:"required"`
	GrossTotal            Money      `json:"gross_total" jsonschema:"required"`
	Currency              *string    `json:"currency" jsonschema:"enum=EUR"`
	PaymentMethod         *string    `json:"payment_method" jsonschema:"enum=cash,enum=card,enum=voucher"`
	Reference             *string    `json:"reference" jsonschema:"maxLength=50,format=line"`
	InvoiceID             *UUID      `json:"invoice_id"`
	FeeNoteID             *UUID      `json:"fee_note_id"`
	UserID                *UUID      `json:"user_id"`
	TenantID              *UUID      `json:"tenant_id"`
	Signature             *string    `json:"signature" jsonschema:"maxLength=2000,pattern=^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*\\.[A-Za-z0-9_-]*$"`
	SignatureDeviceFailed *bool      `json:"signature_device_failed"`
}

func (r *CashRevenue) normalize(RuleContext) {
	defaultTo(&r.Currency, "EUR")
	if r.SignatureDeviceFailed == nil {
		r.SignatureDeviceFailed = ptr(false)
	}
	for i := range r.Items {
		r.Items[i].defaultDiscount()
	}
}

func (r *CashRevenue) check(_ RuleContext, errs *FieldErrors) {
	negative := r.Kind == "cancellation" || r.Kind == "withdrawal"
	lines := make([]lineAmount, len(r.Items))
	for i := range r.Items {
		lines[i] = r.Items[i].amount(i)
	}
	amounts{items: lines, taxes: r.Taxes, net: r.NetTotal, tax: r.TaxTotal, gross: r.GrossTotal,
		allowNegative: negative, allowEmptyList: r.Kind != "sale"}.check(errs)
	if sign := moneyRat(r.GrossTotal).Sign(); negative && sign > 0 || !negative && sign < 0 {
		errs.Add("gross_total", "is negative exactly for cancellation and withdrawal receipts")
	}
	if r.InvoiceID != nil && r.FeeNoteID != nil {
		errs.Add("fee_note_id", "a receipt pays at most one document")
	}
}

func (r *CashRevenue) refs() []Ref {
	var out []Ref
	if r.InvoiceID != nil {
		out = append(out, Ref{Field: "invoice_id", Section: "invoices", ID: string(*r.InvoiceID)})
	}
	if r.FeeNoteID != nil {
		out = append(out, Ref{Field: "fee_note_id", Section: "fee-notes", ID: string(*r.FeeNoteID)})
	}
	if r.UserID != nil {
		out = append(out, userRef("user_id", *r.UserID, false))
	}
	if r.TenantID != nil {
		out = append(out, Ref{Field: "tenant_id", Section: "tenants", ID: string(*r.TenantID)})
	}
	return out
}

func (*CashRevenue) customer() *CustomerID { return nil }

const exampleInvoice = `{"number":"2026/0042","user_id":"$USER","customer_id":$CUSTOMER,
"recipient":{"name":"Anna Berger","address":{"street":"Hauptstraße 1","postal_code":"1010","city":"Wien"}},
"issued_on":"2026-03-10","due_on":"2026-03-24","service_from":"2026-03-10","service_until":"2026-03-10","status":"paid",
"items":[{"position":1,"description":"24-hour blood pressure measurement","code":"RR24","performed_on":"2026-03-10","quantity":"1","unit_price":"85.00","discount_percent":"10","tax_rate":"0","net_amount":"76.50"},
{"position":2,"description":"Certificate","quantity":"1","unit_price":"20.00","tax_rate":"20","net_amount":"20.00"}],
"taxes":[{"tax_rate":"0","net_amount":"76.50","tax_amount":"0.00"},{"tax_rate":"20","net_amount":"20.00","tax_amount":"4.00"}],
"net_total":"96.50","tax_total":"4.00","gross_total":"100.50","paid_total":"100.50","paid_at":"2026-03-10T10:00:00+01:00","payment_method":"card"}`

const exampleFeeNote = `{"number":"HN-2026-7","customer_id":$CUSTOMER,"user_id":"$USER",
"recipient":{"name":"Anna Berger","address":{"street":"Hauptstraße 1","postal_code":"1010","city":"Wien"}},
"issued_on":"2026-03-10","status":"paid","svnr":"1237010180","insurer":"oegk",
"diagnoses":[{"icd10_code":"I10","text":"Essential hypertension"}],
"items":[{"position":1,"description":"Examination","quantity":"1","unit_price":"120.00","tax_rate":"0","net_amount":"120.00","insurer_tariff_code":"1A"}],
"taxes":[{"tax_rate":"0","net_amount":"120.00","tax_amount":"0.00"}],"net_total":"120.00","tax_total":"0.00","gross_total":"120.00",
"tax_note":"Medical treatment, exempt from VAT (§ 6 Abs. 1 Z 19 UStG)","paid_total":"120.00","paid_at":"2026-03-10T11:00:00+01:00",
"payment_method":"bank_transfer","submission_status":"submitted","submitted_at":"2026-03-11T09:00:00+01:00"}`

const exampleCashRevenue = `{"number":"R1-2026-000123","register_id":"KASSE-1","kind":"sale","status":"paid",
"occurred_at":"2026-03-10T10:00:00+01:00",
"items":[{"position":1,"description":"Certificate","quantity":"1","unit_price":"20.00","tax_rate":"20","net_amount":"20.00"}],
"taxes":[{"tax_rate":"20","net_amount":"20.00","tax_amount":"4.00"}],"net_total":"20.00","tax_total":"4.00","gross_total":"24.00",
"payment_method":"cash","reference":"2026/0042","user_id":"$USER","signature":"eyJhbGciOiJFUzI1NiJ9.eyJ4IjoxfQ.c2lnbmF0dXJl"}`

// ReceiptCounter splits a receipt number into its prefix and the counter its
// trailing digits form ("R1-2026-000123" → "R1-2026-", 123).
func ReceiptCounter(number string) (string, int64, bool) {
	i := len(number)
	for i > 0 && number[i-1] >= '0' && number[i-1] <= '9' {
		i--
	}
	if i == len(number) || len(number)-i > 18 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(number[i:], 10, 64)
	return number[:i], n, err == nil
}

// CheckGapless states the register rule: its receipt numbers share a prefix
// and count up without a gap (from the first one the practice holds).
func CheckGapless(register string, numbers []string) error {
	var counters []int64
	prefix := ""
	for i, n := range numbers {
		p, c, ok := ReceiptCounter(n)
		if !ok || i > 0 && p != prefix {
			return FieldErrors{{Field: "number", Message: "receipt numbers of register " + register + " must share a prefix and end in a counter"}}.Err()
		}
		prefix = p
		counters = append(counters, c)
	}
	slices.Sort(counters)
	for i := 1; i < len(counters); i++ {
		if counters[i] != counters[i-1]+1 {
			return FieldErrors{{Field: "number", Message: fmt.Sprintf("receipt numbers of register %s must be gapless: %d follows %d",
				register, counters[i], counters[i-1])}}.Err()
		}
	}
	return nil
}
