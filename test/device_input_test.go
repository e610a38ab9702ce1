// Holds docs/contract.md §14 The GDT round trip: bad device input.

package test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestDeviceInputRefused: the round trip's bad input gets clear 4xx answers
// in the contract's shape, and nothing is written.
func TestDeviceInputRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	p := newGDTPractice(t, s)
	other := newGDTPractice(t, s)
	device, clientID, secret := p.device(t, `{"name":"ECG","gdt_id":"EKG1","procedures":[{"code":"EKG04","name":"Resting ECG"}]}`)
	foreignDevice, _, _ := other.device(t, `{"name":"ECG","gdt_id":"EKG1","procedures":[{"code":"EKG04","name":"Resting ECG"}]}`)
	patient := p.patient(t, "Anna", "Berger")
	foreignPatient := other.patient(t, "Otto", "Fremd")
	var noBirthDate struct {
		CustomerID int64 `json:"customer_id"`
	}
	s.praxis(t, &noBirthDate, "admin", "customer", "create", "--company", p.c.ID, "--first-name", "Ohne", "--last-name", "Datum", "--json")

	problem := func(r reply) (string, string) {
		body := r.decode(t)
		var fields []string
		for _, e := range asList(body["errors"]) {
			m := e.(map[string]any)
			fields = append(fields, fmt.Sprint(m["field"], ": ", m["message"]))
		}
		return fmt.Sprint(body["type"]), strings.Join(fields, "; ")
	}
	order := func(customer int64, device, procedure string) string {
		return fmt.Sprintf(`{"customer_id":%d,"device_id":%q,"procedure":%q}`, customer, device, procedure)
	}
	missing := p.call(t, http.MethodPost, "device-orders", order(987654, device, "EKG04"))
	foreign := p.call(t, http.MethodPost, "device-orders", order(foreignPatient, device, "EKG04"))
	if _, a := problem(missing); missing.status != 422 || foreign.status != 422 || a != func() string { _, b := problem(foreign); return b }() {
		t.Errorf("another company's customer: %d %s, a missing one: %d %s", foreign.status, foreign.body, missing.status, missing.body)
	}
	missingDevice := p.call(t, http.MethodPost, "device-orders", order(patient, "019bc0e2-0000-7000-8000-000000000000", "EKG04"))
	foreignDev := p.call(t, http.MethodPost, "device-orders", order(patient, foreignDevice, "EKG04"))
	_, a := problem(missingDevice)
	_, b := problem(foreignDev)
	if missingDevice.status != 422 || a != b || !strings.Contains(a, "device_id") {
		t.Errorf("another company's device: %d %s, a missing one: %d %s", foreignDev.status, b, missingDevice.status, a)
	}
	for _, c := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"a procedure the device does not offer", "device-orders", order(patient, device, "SONO1"), 422, "device_id: the device offers no procedure SONO1"},
		{"a customer without a birth date", "device-orders", order(noBirthDate.CustomerID, device, "EKG04"), 422, "customer_id: the customer has no birth_date"},
		{"a GDT id with a hyphen", "devices", `{"name":"X","gdt_id":"EKG-1"}`, 422, "gdt_id: must be a GDT id"},
		{"a GDT id of nine characters", "devices", `{"name":"X","gdt_id":"TURBOMED1"}`, 422, "gdt_id: must be a GDT id"},
		{"a GDT id another device has", "devices", `{"name":"X","gdt_id":"ekg1"}`, 422, "gdt_id: is already another device's"},
		{"GDT 3.0 in CP437", "devices", `{"name":"X","gdt_id":"S3","gdt_version":"3.0","encoding":"cp437"}`, 422, "encoding: GDT 3.0 is written in iso-8859-15 only"},
		{"a fixed name without the name", "devices", `{"name":"X","gdt_id":"S4","file_naming":"fixed"}`, 422, "fixed_name: is required"},
		{"the server's fields", "device-orders", `{"customer_id":1,"device_id":"` + device + `","procedure":"EKG04","status":"done","number":7}`, 422, "is set by the server"},
	} {
		r := p.call(t, http.MethodPost, c.path, c.body)
		typ, fields := problem(r)
		if r.status != c.status || typ != "validation-error" || !strings.Contains(fields, c.want) {
			t.Errorf("%s: %d %s %s, want %d %q", c.name, r.status, typ, fields, c.status, c.want)
		}
	}
	if n := len(p.list(t, "device-orders")); n != 0 {
		t.Errorf("%d orders stored from refused requests", n)
	}

	// Cancelling a done order is 409; a device's token acts for its device alone.
	id := p.order(t, patient, device, "EKG04")
	res := s.upload(t, "/api/gdt/upload", gdtHeaders(p.c, patient), filePart("r.gdt", gdtRecord([2]string{"8000", "6310"},
		[2]string{"8316", "EKG1"}, [2]string{"3000", fmt.Sprint(patient)}, [2]string{"8314", id}, [2]string{"8402", "EKG04"})))
	if res.status != 200 || p.getOrder(t, id)["status"] != "done" {
		t.Fatalf("the result did not close its order: %+v", res)
	}
	if r := p.call(t, http.MethodPost, "device-orders/"+id+"/cancel", ""); r.status != 409 || !strings.Contains(string(r.body), "order-closed") {
		t.Errorf("cancel a done order: %d %s", r.status, r.body)
	}
	if r := p.call(t, http.MethodGet, "device-outbox", ""); r.status != 403 {
		t.Errorf("an integrator's token at the outbox: %d %s", r.status, r.body)
	}
	// An integrator that holds devices:bridge is still no device.
	bridgeScoped := s.tokenFor(t, s.newClient(t, p.c, "devices:bridge"))
	if r := s.request(t, http.MethodGet, resource+"device-outbox", "", "", "Authorization: Bearer "+bridgeScoped); r.status != 403 ||
		!strings.Contains(string(r.body), "device-credential-required") {
		t.Errorf("a client that is no device at the outbox: %d %s", r.status, r.body)
	}
	deviceToken := s.tokenFor(t, oauthClient{ID: clientID, Secret: secret})
	// A device's credential reads nothing of the company: not its orders, not its patients.
	for _, path := range []string{"device-orders", "customers", "devices", "files"} {
		if r := s.request(t, http.MethodGet, resource+path, "", "", "Authorization: Bearer "+deviceToken); r.status != 403 {
			t.Errorf("a device's token reads %s: %d", path, r.status)
		}
	}
	_, otherClient, otherSecret := other.device(t, `{"name":"ECG2","gdt_id":"EKG2"}`)
	otherToken := s.tokenFor(t, oauthClient{ID: otherClient, Secret: otherSecret})
	open := p.order(t, patient, device, "EKG04")
	for _, tok := range []string{otherToken} {
		r := s.request(t, http.MethodPost, resource+"device-orders/"+open+"/written", "", "", "Authorization: Bearer "+tok)
		if r.status != 404 {
			t.Errorf("another company's device reports on an order: %d %s", r.status, r.body)
		}
	}
	for _, q := range []string{"wait=51", "wait=-1", "wait=x", "wait=5&extra=1"} {
		r := s.request(t, http.MethodGet, resource+"device-outbox?"+q, "", "", "Authorization: Bearer "+deviceToken)
		if r.status != 422 {
			t.Errorf("outbox?%s: %d %s", q, r.status, r.body)
		}
	}
	// The outbox in the audit trail: a poll that answers orders names their
	// patient once; an empty one (another device's) leaves no event.
	_, emptyClient, emptySecret := p.device(t, `{"name":"Idle","gdt_id":"IDLE"}`)
	emptyToken := s.tokenFor(t, oauthClient{ID: emptyClient, Secret: emptySecret})
	for _, tok := range []string{deviceToken, emptyToken} {
		if r := s.request(t, http.MethodGet, resource+"device-outbox?wait=0", "", "", "Authorization: Bearer "+tok); r.status != 200 {
			t.Fatalf("outbox: %d %s", r.status, r.body)
		}
	}
	auditor := s.tokenFor(t, s.newClient(t, p.c, "audit:read"))
	polls := func(client string) []auditEvent {
		events, _ := s.auditEvents(t, auditor, "&agent="+client)
		var out []auditEvent
		for _, e := range events {
			if e.Outcome.Status == 200 && e.Action == "list" {
				out = append(out, e)
			}
		}
		return out
	}
	if got := polls(clientID); len(got) != 1 || fmt.Sprint(got[0].Customers) != fmt.Sprint([]int64{patient}) {
		t.Errorf("the poll that answered orders: %+v, want one event naming patient %d once", got, patient)
	}
	if got := polls(emptyClient); len(got) != 0 {
		t.Errorf("an empty poll left %d events", len(got))
	}
	if r := s.request(t, http.MethodPost, resource+"device-orders/"+open+"/failed", "", "", "Authorization: Bearer "+deviceToken); r.status != 422 {
		t.Errorf("failed without a reason: %d %s", r.status, r.body)
	}
	if got := p.getOrder(t, open)["status"]; got != "open" {
		t.Errorf("the refused reports left the order %v", got)
	}

	// Assigning by hand: a result that cannot tell two open orders apart,
	// with its PDF, goes under the order staff chose, both files with it.
	second := p.order(t, patient, device, "EKG04")
	res = s.upload(t, "/api/gdt/upload", gdtHeaders(p.c, patient),
		filePart("r2.gdt", gdtRecord([2]string{"8000", "6310"}, [2]string{"8316", "EKG1"}, [2]string{"3000", fmt.Sprint(patient)},
			[2]string{"8402", "EKG04"}, [2]string{"6305", "kurve.pdf"})), filePart("kurve.pdf", pdfOfSize(3000)))
	if res.status != 200 || len(res.Files) != 2 || *res.Files[0].OrderMatch != "unmatched" || *res.Files[1].OrderMatch != "unmatched" {
		t.Fatalf("an ambiguous result: %+v", res)
	}
	result, pdf := res.Files[0].ID, res.Files[1].ID
	for _, c := range []struct {
		name, order, body string
		status            int
	}{
		{"a result matched already", second, fmt.Sprintf(`{"file_id":%q}`, firstFileOf(t, p, id)), 422},
		{"a file that is no UUID", second, `{"file_id":"x"}`, 422},
		{"no file", second, `{}`, 422},
	} {
		if r := p.call(t, http.MethodPost, "device-orders/"+c.order+"/assign", c.body); r.status != c.status {
			t.Errorf("assign %s: %d %s", c.name, r.status, r.body)
		}
	}
	p.must(t, http.StatusOK, http.MethodPost, "device-orders/"+second+"/cancel", "")
	if r := p.call(t, http.MethodPost, "device-orders/"+second+"/assign", fmt.Sprintf(`{"file_id":%q}`, result)); r.status != 409 {
		t.Errorf("assign to a cancelled order: %d %s", r.status, r.body)
	}
	done := p.must(t, http.StatusOK, http.MethodPost, "device-orders/"+open+"/assign", fmt.Sprintf(`{"file_id":%q}`, result))
	if done["status"] != "done" || len(asList(done["result_file_ids"])) != 2 {
		t.Errorf("the assigned order: %v", done)
	}
	for _, f := range []string{result, pdf} {
		file := p.must(t, http.StatusOK, http.MethodGet, "files/"+f, "")
		if file["order_match"] != "matched" || file["device_order_id"] != open {
			t.Errorf("file %s after assigning: %v %v", f, file["order_match"], file["device_order_id"])
		}
	}
	if r := p.call(t, http.MethodPost, "device-orders/"+open+"/assign", fmt.Sprintf(`{"file_id":%q}`, result)); r.status != 422 {
		t.Errorf("assign a matched file again: %d %s", r.status, r.body)
	}
}

// firstFileOf is the first result file of a done order.
func firstFileOf(t *testing.T, p gdtPractice, order string) string {
	t.Helper()
	return asList(p.getOrder(t, order)["result_file_ids"])[0].(string)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
