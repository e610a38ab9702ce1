// Holds docs/contract.md §4 The resource API: every section's records.

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
)

const resource = "/api/oauth/v2/resource/"

// practice is a company with a token for every scope, a doctor and a patient.
type practice struct {
	s        *server
	company  company
	auth     string
	doctor   string
	customer int64
	// location and service are a bookable location and service, offered by doctor.
	location, service string
	// device is a device of the company (an ECG offering EKG04).
	device string
}

func newPractice(t *testing.T, s *server) practice {
	t.Helper()
	c := s.newCompany(t, 1<<20)
	p := practice{s: s, company: c, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, c, sectionScopes()))}
	p.location = seedRecord(t, s, c.ID, "locations", `{"name":"Ordination","address":{"street":"Hauptstraße 1","postal_code":"1010","city":"Wien","country":"AT"},"phone":null,"email":null,"online_bookable":true,"active":true}`)
	p.doctor = seedUser(t, s, c.ID, "doctor", p.location)
	p.service = seedRecord(t, s, c.ID, "services", `{"name":"Check-up","description":null,"category":null,"duration_minutes":30,"buffer_after_minutes":0,"slot_step_minutes":30,"price":"45.00","currency":"EUR","tax_rate":"0","online_bookable":true,"active":true}`)
	p.device = seedRecord(t, s, c.ID, "devices", `{"name":"ECG","gdt_id":"EKG1","praxis_gdt_id":"PRAXIS","gdt_version":"2.1","encoding":"cp437",`+
		`"file_naming":"receiver_sender","fixed_name":null,"removes_files":true,"procedures":[{"code":"EKG04","name":"Resting ECG"}]}`)
	seedRecord(t, s, c.ID, "service-assignments", `{"user_id":"`+p.doctor+`","service_id":"`+p.service+`","location_id":null,"duration_minutes":null,"price":null,"currency":"EUR","online_bookable":true,"active":true}`)
	r := p.post(t, "customers", `{"first_name":"Anna","last_name":"Berger","birth_date":"1980-02-29"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create customer: %d %s", r.status, r.body)
	}
	p.customer = int64(r.decode(t)["id"].(float64))
	return p
}

// seedUser stores a user straight in the database: users are master data,
// written by the operator's import, not by this API. A user seeded with a
// location works there 08:00–12:00 every day, bookable online.
func seedUser(t *testing.T, s *server, companyID, role string, location ...string) string {
	t.Helper()
	if len(location) > 0 {
		var hours []string
		for _, day := range []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"} {
			hours = append(hours, `{"location_id":"`+location[0]+`","weekday":"`+day+`","from":"08:00","to":"12:00"}`)
		}
		return seedRecord(t, s, companyID, "users", `{"title":"Dr.","first_name":"Eva","last_name":"Huber","display_name":"Dr. Eva Huber",`+
			`"email":null,"phone":null,"role":"`+role+`","specialty":"General medicine","online_bookable":true,"active":true,`+
			`"working_hours":[`+strings.Join(hours, ",")+`],"absences":[]}`)
	}
	return seedRecord(t, s, companyID, "users", `{"first_name":"Eva","last_name":"Huber","role":"`+role+`","active":true}`)
}

// seedRecord stores a master-data object straight in the database.
func seedRecord(t *testing.T, s *server, companyID, kind, payload string) string {
	t.Helper()
	db := s.openDB(t)
	defer db.Close()
	id := domain.NewObjectID()
	row := map[string]any{"id": uuid.MustParse(id), "company_id": uuid.MustParse(companyID), "kind": kind,
		"payload": payload, "change": 0,
		"created_at": time.Now().UTC(), "updated_at": time.Now().UTC()}
	if _, err := db.NewInsert().Model(&row).TableExpr("records").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	// As the record store does with every write to the booking catalogue:
	// a server that cached the catalogue reads it again.
	if domain.KindOf(kind).HasHook(domain.HookCatalogVersion) {
		_, err := db.NewUpdate().TableExpr("companies").Set("catalog_version = catalog_version + 1").Where("id = ?", uuid.MustParse(companyID)).Exec(context.Background())
		if err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func (p practice) post(t *testing.T, section, body string, headers ...string) reply {
	t.Helper()
	return p.s.request(t, http.MethodPost, resource+section, "application/json", body, append(headers, p.auth)...)
}

func (p practice) get(t *testing.T, path string) reply {
	t.Helper()
	return p.s.request(t, http.MethodGet, resource+path, "", "", p.auth)
}

// listed reads a list until it holds want: on PostgreSQL a write is listed
// once no older transaction of the server is still open (the feed's guarantee).
func (p practice) listed(t *testing.T, path, want string) []any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := p.get(t, path)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		data := r.decode(t)["data"].([]any)
		for _, o := range data {
			if fmt.Sprint(o.(map[string]any)["id"]) == want {
				return data
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s never listed %s: %s", path, want, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p practice) example(k *domain.Kind, diagnosis string) string {
	return k.ExampleWith(domain.ExampleIDs{Customer: domain.CustomerID(p.customer), User: p.doctor, Diagnosis: diagnosis,
		Location: p.location, Service: p.service, Device: p.device})
}

func fieldsOf(t *testing.T, r reply) []string {
	t.Helper()
	var doc struct {
		Errors []struct{ Field string } `json:"errors"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil || r.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%d %s is not a problem document", r.status, r.body)
	}
	var out []string
	for _, e := range doc.Errors {
		out = append(out, e.Field)
	}
	return out
}

// TestRecordSections: customers and every record kind of the table, on both backends.
func TestRecordSections(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p, other := newPractice(t, s), newPractice(t, s)
		diag := p.post(t, "diagnoses", p.example(domain.KindOf("diagnoses"), ""))
		if diag.status != http.StatusCreated {
			t.Fatalf("diagnosis: %d %s", diag.status, diag.body)
		}
		diagnosis := diag.decode(t)["id"].(string)
		for _, k := range domain.Kinds() {
			if k.Shape != domain.ShapeRecord {
				continue
			}
			t.Run(k.Slug, func(t *testing.T) {
				body := p.example(k, diagnosis)
				created := p.post(t, k.Slug, body)
				if created.status != http.StatusCreated {
					t.Fatalf("create: %d %s", created.status, created.body)
				}
				id := created.decode(t)["id"].(string)
				if loc := created.header.Get("Location"); loc != resource+k.Slug+"/"+id {
					t.Errorf("Location %q", loc)
				}
				if got := p.get(t, k.Slug+"/"+id); got.status != http.StatusOK || string(got.body) != string(created.body) {
					t.Errorf("read back: %d %s, want %s", got.status, got.body, created.body)
				}
				p.listed(t, fmt.Sprintf("%s?customer_id=%d", k.Slug, p.customer), id)
				if list := other.get(t, fmt.Sprintf("%s?customer_id=%d", k.Slug, p.customer)); len(list.decode(t)["data"].([]any)) != 0 {
					t.Errorf("another company lists %s", list.body)
				}
				if got := other.get(t, k.Slug+"/"+id); got.status != http.StatusNotFound || strings.Contains(string(got.body), id) {
					t.Errorf("another company reads it: %d %s", got.status, got.body)
				}
				// The other company cannot write for this company's patient: a 422 that does not tell it exists.
				foreign := other.post(t, k.Slug, body)
				if foreign.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, foreign), "customer_id") {
					t.Errorf("a record for another company's customer: %d %s", foreign.status, foreign.body)
				}
				invalid := p.post(t, k.Slug, `{"customer_id":"x","unknown":1}`)
				if invalid.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, invalid), "unknown") || !contains(fieldsOf(t, invalid), "customer_id") {
					t.Errorf("invalid body: %d %s", invalid.status, invalid.body)
				}
				narrow := "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, "company:read "+string(domain.ReadScope(k.Slug))))
				if r := s.request(t, http.MethodPost, resource+k.Slug, "application/json", body, narrow); r.status != http.StatusForbidden {
					t.Errorf("create without %s:write: %d", k.Slug, r.status)
				}
				key := "Idempotency-Key: " + uuid.NewString()
				first, again := p.post(t, k.Slug, body, key), p.post(t, k.Slug, body, key)
				if first.status != http.StatusCreated || again.status != http.StatusCreated || string(first.body) != string(again.body) ||
					again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
					t.Errorf("idempotent replay: %d %s / %d %s %v", first.status, first.body, again.status, again.body, again.header)
				}
				if r := p.post(t, k.Slug, strings.Replace(body, "{", `{"appointment_id":null,`, 1), key); r.status != http.StatusUnprocessableEntity ||
					!contains(fieldsOf(t, r), "Idempotency-Key") {
					t.Errorf("the key with another body: %d %s", r.status, r.body)
				}
			})
		}
	})
}

// TestCustomersSection: create, read, patch, list, another company, conflicts.
func TestCustomersSection(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p, other := newPractice(t, s), newPractice(t, s)
		k := domain.CustomersKind()
		created := p.post(t, "customers", k.Example)
		if created.status != http.StatusCreated {
			t.Fatalf("create: %d %s", created.status, created.body)
		}
		id := fmt.Sprint(created.decode(t)["id"])
		if r := p.post(t, "customers", `{"id":77,"first_name":"A","last_name":"B","birth_date":"1990-01-01"}`); r.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, r), "id") {
			t.Errorf("a client-chosen id: %d %s", r.status, r.body)
		}
		if r := p.post(t, "customers", k.Example); r.status != http.StatusConflict {
			t.Errorf("the same svnr again: %d %s", r.status, r.body)
		}
		if r := other.post(t, "customers", k.Example); r.status != http.StatusCreated {
			t.Errorf("the same svnr in another practice: %d %s", r.status, r.body)
		}
		r := p.post(t, "customers", `{"first_name":" ","birth_date":"1980-13-01","svnr":"1234567890","phone":"123","alerts":["a","b"],"nope":true}`)
		if got := fieldsOf(t, r); r.status != http.StatusUnprocessableEntity || len(got) < 5 {
			t.Errorf("every field error at once: %d %v", r.status, got)
		}
		patch := s.request(t, http.MethodPatch, resource+"customers/"+id, "application/merge-patch+json", `{"phone":null,"title":"Dr."}`, p.auth)
		if patch.status != http.StatusOK || patch.decode(t)["phone"] != nil || patch.decode(t)["title"] != "Dr." || patch.decode(t)["svnr"] != "1237010180" {
			t.Errorf("patch: %d %s", patch.status, patch.body)
		}
		if r := s.request(t, http.MethodPatch, resource+"customers/"+id, "application/json", `{"last_name":null}`, p.auth); r.status != http.StatusUnprocessableEntity {
			t.Errorf("clearing a required field: %d %s", r.status, r.body)
		}
		if r := s.request(t, http.MethodPatch, resource+"customers/"+id, "application/json", `{"title":"X"}`, other.auth); r.status != http.StatusNotFound {
			t.Errorf("another company's patch: %d %s", r.status, r.body)
		}
		if r := other.get(t, "customers/"+id); r.status != http.StatusNotFound {
			t.Errorf("another company's read: %d %s", r.status, r.body)
		}
		for _, bad := range []string{"customers/0", "customers/01", "customers/abc", "notes/019CD6CF-68F8-70C6-A6A3-A4506513270E"} {
			if r := p.get(t, bad); r.status != http.StatusNotFound {
				t.Errorf("GET %s: %d", bad, r.status)
			}
		}
		p.listed(t, "customers?limit=500", id)
		if r := p.get(t, "customers?limit=0&cursor=%%%&include_deleted=maybe&customer_id=1"); r.status != http.StatusUnprocessableEntity || len(fieldsOf(t, r)) != 4 {
			t.Errorf("bad list parameters: %d %s", r.status, r.body)
		}
		if r := s.request(t, http.MethodPost, resource+"customers", "text/plain", "{}", p.auth); r.status != http.StatusUnsupportedMediaType {
			t.Errorf("text/plain body: %d", r.status)
		}
		if r := p.post(t, "customers", `{"first_name":"`+strings.Repeat("a", 1<<20)+`"}`); r.status != http.StatusRequestEntityTooLarge {
			t.Errorf("a body over 1 MiB: %d", r.status)
		}
	})
}

// TestFeedResumes: the first page, the last page's cursor, and a resume later that sees only what changed.
func TestFeedResumes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		var last string
		for i := range 5 {
			r := p.post(t, "notes", fmt.Sprintf(`{"customer_id":%d,"text":"note %d"}`, p.customer, i))
			last = r.decode(t)["id"].(string)
		}
		p.listed(t, "notes", last)
		var got []string
		cursor := ""
		for {
			r := p.get(t, "notes?limit=2"+cursor).decode(t)
			for _, o := range r["data"].([]any) {
				got = append(got, o.(map[string]any)["id"].(string))
			}
			cursor = "&cursor=" + r["next_cursor"].(string)
			if !r["has_more"].(bool) {
				break
			}
		}
		if len(got) != 5 {
			t.Fatalf("paged %d notes, want 5", len(got))
		}
		if r := p.get(t, "notes?limit=2"+cursor).decode(t); len(r["data"].([]any)) != 0 || r["next_cursor"] == "" {
			t.Errorf("resume with nothing new: %v", r)
		}
		later := p.post(t, "notes", fmt.Sprintf(`{"customer_id":%d,"text":"later"}`, p.customer)).decode(t)["id"].(string)
		if data := p.listed(t, "notes?limit=2"+cursor, later); len(data) != 1 {
			t.Errorf("resume after a write: %v", data)
		}
	})
}

// TestConcurrentIdempotentCreates: twins of one request with one key create one object.
func TestConcurrentIdempotentCreates(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		body := fmt.Sprintf(`{"customer_id":%d,"text":"once"}`, p.customer)
		key := "Idempotency-Key: " + uuid.NewString()
		var wg sync.WaitGroup
		bodies := make([]string, 10)
		for i := range bodies {
			wg.Go(func() {
				r := p.post(t, "notes", body, key)
				if r.status != http.StatusCreated {
					t.Errorf("twin %d: %d %s", i, r.status, r.body)
				}
				bodies[i] = string(r.body)
			})
		}
		wg.Wait()
		for _, b := range bodies {
			if b != bodies[0] {
				t.Fatalf("twins answered differently:\n%s\n%s", bodies[0], b)
			}
		}
		id := p.post(t, "notes", body).decode(t)["id"].(string) // a request without a key is another note
		if data := p.listed(t, "notes", id); len(data) != 2 {
			t.Errorf("%d notes, want the twins' one and the keyless one", len(data))
		}
	})
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// TestMedicalFeeServicePatch: PATCH recomputes the total, may cancel, and is 409 once the service is not open.
func TestMedicalFeeServicePatch(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		body := fmt.Sprintf(`{"customer_id":%d,"user_id":%q,"performed_on":"2026-03-10","code":"RR24","name":"24 h blood pressure","unit_price":"85.00","discount_percent":"10"}`, p.customer, p.doctor)
		created := p.post(t, "medical-fee-services", body)
		if created.status != http.StatusCreated || created.decode(t)["total"] != "76.50" || created.decode(t)["status"] != "open" {
			t.Fatalf("create: %d %s", created.status, created.body)
		}
		path := resource + "medical-fee-services/" + created.decode(t)["id"].(string)
		patch := func(body string) reply {
			return s.request(t, http.MethodPatch, path, "application/merge-patch+json", body, p.auth)
		}
		if r := patch(`{"quantity":"2"}`); r.status != http.StatusOK || r.decode(t)["total"] != "153.00" {
			t.Errorf("patch quantity: %d %s", r.status, r.body)
		}
		if r := patch(`{"total":"1.00"}`); r.status != http.StatusUnprocessableEntity {
			t.Errorf("patch the total: %d %s", r.status, r.body)
		}
		if r := patch(`{"status":"cancelled"}`); r.status != http.StatusOK || r.decode(t)["status"] != "cancelled" {
			t.Errorf("cancel: %d %s", r.status, r.body)
		}
		if r := patch(`{"name":"X"}`); r.status != http.StatusConflict {
			t.Errorf("patch a cancelled service: %d %s", r.status, r.body)
		}
	})
}
