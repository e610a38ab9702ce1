package usecase_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

func importLines(t *testing.T, env *testenv.Embedded, company domain.CompanyID, lines ...string) (usecase.ImportReport, error) {
	t.Helper()
	return env.Exchange.Import(context.Background(), company, strings.NewReader(strings.Join(lines, "\n")+"\n"), false)
}

// TestImportBillsFeeServicesAndFreesThemOnCancel: an invoice's items bill the
// fee services they name; cancelling the invoice puts them back to open.
func TestImportBillsFeeServicesAndFreesThemOnCancel(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	f := newPracticeFixture(t, env)
	user, mfs, invoice := domain.NewObjectID(), domain.NewObjectID(), domain.NewObjectID()
	ids := domain.ExampleIDs{Customer: f.customer, User: user}
	line := func(section, id, data string) string {
		return fmt.Sprintf(`{"section":%q,"id":%q,"data":%s}`, section, id, strings.Join(strings.Fields(data), " "))
	}
	invoiceLine := func(status string) string {
		data := strings.Replace(domain.KindOf("invoices").ExampleWith(ids), `"code":"RR24",`, `"code":"RR24","medical_fee_service_id":"`+mfs+`",`, 1)
		if status == "cancelled" {
			data = strings.Replace(data, `"payment_method":"card"`, `"payment_method":"card","cancelled_at":"2026-03-12T10:00:00+01:00"`, 1)
			data = strings.Replace(data, `"status":"paid"`, `"status":"cancelled","paid_total":"0.00"`, 1)
			data = strings.Replace(data, `,"paid_total":"100.50"`, ``, 1)
		}
		return line("invoices", invoice, data)
	}
	base := []string{
		line("users", user, `{"first_name":"Eva","last_name":"Huber","role":"doctor"}`),
		line("medical-fee-services", mfs, fmt.Sprintf(`{"customer_id":%d,"user_id":%q,"performed_on":"2026-03-10","code":"RR24","name":"24 h","unit_price":"85.00","discount_percent":"10"}`, f.customer, user)),
	}
	if _, err := importLines(t, env, f.grant.CompanyID, append(base, invoiceLine("paid"))...); err != nil {
		t.Fatal(err)
	}
	state := func() map[string]any {
		raw, err := env.Records.Get(context.Background(), f.grant, domain.KindOf("medical-fee-services"), mfs)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(raw.Payload, &m)
		return m
	}
	if m := state(); m["status"] != "billed" || m["invoice_id"] != invoice {
		t.Fatalf("after the invoice: %v", m)
	}
	// The same file again: nothing changes, the billed service included.
	if r, err := importLines(t, env, f.grant.CompanyID, append(base[:1], invoiceLine("paid"))...); err != nil || len(r.Updated) != 0 {
		t.Fatalf("re-import: %+v %v", r, err)
	}
	if _, err := importLines(t, env, f.grant.CompanyID, invoiceLine("cancelled")); err != nil {
		t.Fatal(err)
	}
	if m := state(); m["status"] != "open" || m["invoice_id"] != nil {
		t.Fatalf("after the cancellation: %v", m)
	}
}

// TestImportRefusesASecondActiveAssignment: one active assignment per user, service and location.
func TestImportRefusesASecondActiveAssignment(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	f := newPracticeFixture(t, env)
	user, service, location := domain.NewObjectID(), domain.NewObjectID(), domain.NewObjectID()
	lines := []string{
		fmt.Sprintf(`{"section":"locations","id":%q,"data":{"name":"W","address":{"street":"S","postal_code":"1010","city":"Wien"}}}`, location),
		fmt.Sprintf(`{"section":"users","id":%q,"data":{"first_name":"E","last_name":"H","role":"doctor"}}`, user),
		fmt.Sprintf(`{"section":"services","id":%q,"data":{"name":"Check","duration_minutes":20}}`, service),
		fmt.Sprintf(`{"section":"service-assignments","id":%q,"data":{"user_id":%q,"service_id":%q,"location_id":%q}}`, domain.NewObjectID(), user, service, location),
	}
	if _, err := importLines(t, env, f.grant.CompanyID, lines...); err != nil {
		t.Fatal(err)
	}
	second := fmt.Sprintf(`{"section":"service-assignments","id":%q,"data":{"user_id":%q,"service_id":%q,"location_id":%q}}`, domain.NewObjectID(), user, service, location)
	var bad *usecase.ImportErrors
	if _, err := importLines(t, env, f.grant.CompanyID, second); !errors.As(err, &bad) {
		t.Fatalf("a second active assignment: %v", err)
	}
	inactive := fmt.Sprintf(`{"section":"service-assignments","id":%q,"data":{"user_id":%q,"service_id":%q,"location_id":%q,"active":false}}`, domain.NewObjectID(), user, service, location)
	if _, err := importLines(t, env, f.grant.CompanyID, inactive); err != nil {
		t.Errorf("an inactive one beside it: %v", err)
	}
}

// TestImportKeepsReceiptNumbersGapless: per register, receipt numbers count up without a gap.
func TestImportKeepsReceiptNumbersGapless(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	f := newPracticeFixture(t, env)
	receipt := func(id, number string) string {
		data := strings.Replace(domain.KindOf("cash-revenues").Example, `"R1-2026-000123"`, `"`+number+`"`, 1)
		data = strings.Replace(data, `,"user_id":"$USER"`, ``, 1)
		return fmt.Sprintf(`{"section":"cash-revenues","id":%q,"data":%s}`, id, strings.Join(strings.Fields(data), " "))
	}
	one, two, three := domain.NewObjectID(), domain.NewObjectID(), domain.NewObjectID()
	if _, err := importLines(t, env, f.grant.CompanyID, receipt(one, "R1-000007"), receipt(two, "R1-000008")); err != nil {
		t.Fatal(err)
	}
	var bad *usecase.ImportErrors
	if _, err := importLines(t, env, f.grant.CompanyID, receipt(three, "R1-000010")); !errors.As(err, &bad) || !strings.Contains(bad.Error(), "gapless") {
		t.Errorf("a gap: %v", err)
	}
	if _, err := importLines(t, env, f.grant.CompanyID, receipt(three, "R1-000009")); err != nil {
		t.Errorf("the next number: %v", err)
	}
	if _, err := importLines(t, env, f.grant.CompanyID, fmt.Sprintf(`{"section":"cash-revenues","id":%q,"deleted":true}`, two)); !errors.As(err, &bad) {
		t.Errorf("deleting a receipt in the middle: %v", err)
	}
}

// TestImportAppliesCustomersFirstAndDeletionsLast: a file whose note comes
// before its patient, with a deletion among them, is applied in phases — the
// patient, then the notes, then the deletion — so it imports whole.
func TestImportAppliesCustomersFirstAndDeletionsLast(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	f := newPracticeFixture(t, env)
	kept, gone := domain.NewObjectID(), domain.NewObjectID()
	note := func(id string, customer int) string {
		return fmt.Sprintf(`{"section":"notes","id":%q,"data":{"customer_id":%d,"noted_on":"2026-03-10","title":"Call","text":"t"}}`, id, customer)
	}
	patient := func(id int) string {
		return fmt.Sprintf(`{"section":"customers","id":%d,"data":{"first_name":"Ida","last_name":"Spät","birth_date":"1960-02-01"}}`, id)
	}
	if _, err := importLines(t, env, f.grant.CompanyID, note(gone, 77001), patient(77001)); err != nil {
		t.Fatal(err)
	}
	r, err := importLines(t, env, f.grant.CompanyID,
		note(kept, 77002),
		fmt.Sprintf(`{"section":"notes","id":%q,"deleted":true}`, gone),
		patient(77002),
	)
	if err != nil {
		t.Fatal(err)
	}
	if r.Created["customers"] != 1 || r.Created["notes"] != 1 || r.Deleted["notes"] != 1 {
		t.Errorf("report %+v: want a customer and a note created, a note deleted", r)
	}
	notes := domain.KindOf("notes")
	if _, err := env.Records.Get(context.Background(), f.grant, notes, kept); err != nil {
		t.Errorf("the new note: %v", err)
	}
	if _, err := env.Records.Get(context.Background(), f.grant, notes, gone); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the note the file deletes: %v, want not found", err)
	}
}

// TestImportWritesEveryBatchsIndexAndUndoesAFailedOne: an import writes its
// patients a batch at a time, each batch's search index with it: every
// batch's patients are found by name afterwards; when a later batch fails
// (an id another company holds), the earlier ones are undone.
func TestImportWritesEveryBatchsIndexAndUndoesAFailedOne(t *testing.T) {
	t.Parallel()
	env := testenv.NewEmbedded(t)
	f := newPracticeFixture(t, env)
	other := newPracticeFixture(t, env)
	patients := func(family string, first, n int) []string {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf(`{"section":"customers","id":%d,"data":{"first_name":"Ida","last_name":%q,"birth_date":"1960-02-01"}}`, first+i, family)
		}
		return lines
	}
	found := func(family string) int64 {
		t.Helper()
		cond, err := domain.NameCondition("family", domain.SearchFamily, domain.OpPrefix, family)
		if err != nil {
			t.Fatal(err)
		}
		page, err := env.Records.List(context.Background(), f.grant, domain.KindOf("customers"),
			domain.ListQuery{Limit: 1, Search: []domain.Condition{cond}, Total: domain.TotalAccurate})
		if err != nil {
			t.Fatal(err)
		}
		return *page.Total
	}
	// Three batches and a part of one (importBatch is 500): half Müller, half Berger.
	lines := append(patients("Müller", 81000, 900), patients("Berger", 81900, 901)...)
	if r, err := importLines(t, env, f.grant.CompanyID, lines...); err != nil || r.Created["customers"] != 1801 {
		t.Fatalf("import: %+v %v", r, err)
	}
	if n := found("mueller"); n != 900 {
		t.Errorf("Mueller found %d times, want 900", n)
	}
	if n := found("Berg"); n != 902 { // the fixture's Anna Berger too
		t.Errorf("Berg found %d times, want 902", n)
	}
	// The fourth batch names a customer number of another company.
	taken, err := env.Admin.CreateCustomer(context.Background(), usecase.NewCustomerInput{Company: other.grant.CompanyID, FirstName: "Eva", LastName: "Taken"})
	if err != nil {
		t.Fatal(err)
	}
	lines = patients("Huber", 83000, 1700)
	lines = append(lines, fmt.Sprintf(`{"section":"customers","id":%d,"data":{"first_name":"Eva","last_name":"Huber","birth_date":"1960-02-01"}}`, taken.ID))
	lines = append(lines, patients("Huber", 84700, 600)...)
	var lineErrs *usecase.ImportErrors
	if _, err := importLines(t, env, f.grant.CompanyID, lines...); !errors.As(err, &lineErrs) || !strings.Contains(err.Error(), "lines 1501–2000 names an id taken outside this company") {
		t.Fatalf("an id of another company in the fourth batch: %v, want its lines refused", err)
	}
	if n := found("Huber"); n != 0 {
		t.Errorf("after the failed import %d Hubers are found, want none", n)
	}
}
