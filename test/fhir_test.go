// Holds docs/contract.md §15 The FHIR door.

package test

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

const fhirBase = "/fhir/R4/"

// fhir sends one request to the FHIR door.
func (p practice) fhir(t *testing.T, path string, headers ...string) reply {
	t.Helper()
	return p.s.requestUndocumented(t, http.MethodGet, fhirBase+path, "", "", append([]string{p.auth}, headers...)...)
}

// fhirListed waits until a search lists id: on PostgreSQL a write enters
// the sync feed once no older transaction is still open (the feed's
// guarantee, docs/integrators/sync.md), which other tests' may be.
func (p practice) fhirListed(t *testing.T, query, id string) {
	t.Helper()
	eventually(t, 10*time.Second, query+" lists "+id, func() bool {
		return slices.Contains(readBundle(t, p.fhir(t, query)).ids["match"], id)
	})
}

// outcome checks that r is an OperationOutcome of status and issue code.
func outcome(t *testing.T, what string, r reply, status int, code string) {
	t.Helper()
	var o struct {
		ResourceType string `json:"resourceType"`
		Issue        []struct {
			Code        string `json:"code"`
			Diagnostics string `json:"diagnostics"`
		} `json:"issue"`
	}
	if r.status != status || json.Unmarshal(r.body, &o) != nil || o.ResourceType != "OperationOutcome" || len(o.Issue) != 1 || o.Issue[0].Code != code ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "application/fhir+json") {
		t.Errorf("%s: %d %s %s, want %d an OperationOutcome of %s", what, r.status, r.header.Get("Content-Type"), r.body, status, code)
	}
}

// searchset is a Bundle's entries' ids by search mode, and its next link.
type searchset struct {
	ids      map[string][]string
	next     string
	resource []map[string]any
}

func readBundle(t *testing.T, r reply) searchset {
	t.Helper()
	var b struct {
		ResourceType string `json:"resourceType"`
		Type         string `json:"type"`
		Link         []struct{ Relation, URL string }
		Entry        []struct {
			FullURL  string         `json:"fullUrl"`
			Resource map[string]any `json:"resource"`
			Search   struct{ Mode string }
		}
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &b) != nil || b.ResourceType != "Bundle" || b.Type != "searchset" {
		t.Fatalf("not a searchset: %d %s", r.status, r.body)
	}
	s := searchset{ids: map[string][]string{}}
	for _, e := range b.Entry {
		id, _ := e.Resource["id"].(string)
		if !strings.HasSuffix(e.FullURL, "/"+e.Resource["resourceType"].(string)+"/"+id) {
			t.Errorf("fullUrl %s for %s/%s", e.FullURL, e.Resource["resourceType"], id)
		}
		s.ids[e.Search.Mode] = append(s.ids[e.Search.Mode], id)
		s.resource = append(s.resource, e.Resource)
	}
	for _, l := range b.Link {
		if l.Relation == "next" {
			s.next = l.URL
		}
	}
	return s
}

// onlyPage checks that a search answers want (in order) on one page, with
// no next link after it.
func onlyPage(t *testing.T, p practice, query string, want ...string) {
	t.Helper()
	if got := readBundle(t, p.fhir(t, query)); !slices.Equal(got.ids["match"], want) || got.next != "" {
		t.Errorf("%s: %v (next %q), want %v and no next link", query, got.ids["match"], got.next, want)
	}
}

// TestFHIRPatientsOnATCore: a customer is an AT Core patient: the SVNR
// with its system and type, the KVNR, the practice's number as the local
// id, the gender mapped and unknown where the record holds none; the
// searches integrators use find it, and only it; a read carries the
// version as a weak ETag that If-None-Match answers 304; nothing of
// another company is found; every refusal is an OperationOutcome.
func TestFHIRPatientsOnATCore(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		r := p.post(t, "customers", `{"first_name":"Maria","last_name":"Huber","birth_date":"1980-01-01","sex":"female","svnr":"1237010180","kvnr":"A123456780","title":"Mag."}`)
		if r.status != http.StatusCreated {
			t.Fatalf("customer: %d %s", r.status, r.body)
		}
		maria := fmt.Sprint(int64(r.decode(t)["id"].(float64)))
		anna := fmt.Sprint(p.customer)
		p.fhirListed(t, "Patient?_count=500", maria)

		read := p.fhir(t, "Patient/"+maria)
		if read.status != http.StatusOK || read.header.Get("ETag") != `W/"1"` {
			t.Fatalf("read: %d %s (ETag %q)", read.status, read.body, read.header.Get("ETag"))
		}
		var patient struct {
			ID        string
			Gender    string
			BirthDate string
			Meta      struct{ VersionID, LastUpdated string }
			Name      []struct {
				Family        string
				Given, Prefix []string
			}
			Identifier []struct {
				System, Value string
				Type          struct {
					Coding []struct{ System, Code string }
				}
			}
		}
		if err := json.Unmarshal(read.body, &patient); err != nil {
			t.Fatal(err)
		}
		ids := map[string]string{}
		for _, i := range patient.Identifier {
			ids[i.Type.Coding[0].Code] = i.System + "|" + i.Value
		}
		want := map[string]string{"SS": "urn:oid:1.2.40.0.10.1.4.3.1|1237010180", "KVZ10": "http://fhir.de/sid/gkv/kvid-10|A123456780",
			"PI": "urn:praxis:" + p.company.ID + ":customers|" + maria}
		if fmt.Sprint(ids) != fmt.Sprint(want) || patient.Gender != "female" || patient.BirthDate != "1980-01-01" || patient.Meta.VersionID != "1" ||
			patient.Name[0].Family != "Huber" || patient.Name[0].Given[0] != "Maria" || patient.Name[0].Prefix[0] != "Mag." {
			t.Errorf("the patient: %s", read.body)
		}
		if g := readPatient(t, p, anna)["gender"]; g != "unknown" {
			t.Errorf("a customer without sex: gender %v, want unknown", g)
		}
		if r := p.fhir(t, "Patient/"+maria, `If-None-Match: W/"1"`); r.status != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("If-None-Match of the current version: %d %s", r.status, r.body)
		}
		if r := p.fhir(t, "Patient/"+maria, `If-None-Match: W/"7"`); r.status != http.StatusOK {
			t.Errorf("If-None-Match of another version: %d", r.status)
		}

		for _, c := range []struct{ query, want string }{
			{"identifier=urn:oid:1.2.40.0.10.1.4.3.1|1237010180", maria},
			{"identifier=1237010180", maria},
			{"identifier=http://fhir.de/sid/gkv/kvid-10|A123456780", maria},
			{"identifier=" + url.QueryEscape("urn:praxis:"+p.company.ID+":customers|"+anna), anna},
			{"identifier=urn:oid:1.2.40.0.10.1.4.3.1|9994210469", ""},
			{"family=hub", maria},
			{"family=HÜBER", maria}, // folded: Hüber = Hueber = Huber
			{"family=Hueb", maria},
			{"name=hub", maria},
			{"name=anna", anna},
			{"family:exact=Huber", maria},
			{"family:exact=huber", ""},
			{"family:contains=ube", maria},
			{"phonetic=Hupper", maria}, // Kölner Phonetik: both 17
			{"gender=unknown", anna},
			{"birthdate=ne1980-01", anna},
			{"given=ANNA", anna},
			{"family=Huber&given=Anna", ""},
			{"family=Huber,Berger", anna + "," + maria}, // in the order of the feed
			{"birthdate=1980-01", maria},
			{"birthdate=ge1980-02-01", anna},
			{"gender=female", maria},
			{"_id=" + anna + "," + maria, anna + "," + maria},
			{"_id=" + maria + "&family=Berger", ""},
			{"_lastUpdated=ge2000-01-01&_count=1", anna},
			{"_lastUpdated=lt2000-01-01", ""},
		} {
			got := readBundle(t, p.fhir(t, "Patient?"+c.query))
			if strings.Join(got.ids["match"], ",") != c.want {
				t.Errorf("Patient?%s: %v, want %s", c.query, got.ids["match"], c.want)
			}
		}

		// In an order: _sort's keys, "-" descending, page by page on its own cursor.
		for _, c := range []struct{ query, want string }{
			{"_sort=family", anna + "," + maria}, // Berger, Huber
			{"_sort=-family", maria + "," + anna},
			{"_sort=birthdate", maria + "," + anna}, // 1980-01-01, 1980-02-29
			{"_sort=-_lastUpdated", maria + "," + anna},
			{"family=Huber,Berger&_sort=-given", maria + "," + anna},
			{"gender=female&_sort=family", maria},
		} {
			var got []string
			for next, pages := "Patient?"+c.query+"&_count=1", 0; next != "" && pages < 5; pages++ {
				page := readBundle(t, p.fhir(t, next))
				got = append(got, page.ids["match"]...)
				next = strings.TrimPrefix(page.next, s.url+fhirBase)
			}
			if strings.Join(got, ",") != c.want {
				t.Errorf("Patient?%s by next links: %v, want %s", c.query, got, c.want)
			}
		}
		sorted := readBundle(t, p.fhir(t, "Patient?_sort=family&_count=1"))
		nextURL, err := url.Parse(sorted.next)
		if err != nil {
			t.Fatal(err)
		}
		cursor := "_cursor=" + nextURL.Query().Get("_cursor")
		outcome(t, "a sorted page's cursor in another order", p.fhir(t, "Patient?_sort=given&"+cursor), http.StatusBadRequest, "invalid")
		outcome(t, "a sorted page's cursor without its sort", p.fhir(t, "Patient?"+cursor), http.StatusBadRequest, "invalid")
		outcome(t, "a _sort key not served", p.fhir(t, "Patient?_sort=address"), http.StatusBadRequest, "invalid")
		outcome(t, "_sort on a type whose search is not in the query", p.fhir(t, "Practitioner?_sort=family"), http.StatusBadRequest, "invalid")

		// How many: _total=accurate on every page, _summary=count alone.
		total := p.fhir(t, "Patient?family=Huber,Berger&_total=accurate&_count=1").decode(t)
		if total["total"] != float64(2) {
			t.Errorf("_total=accurate: %v", total["total"])
		}
		count := p.fhir(t, "Patient?family=hub&_summary=count").decode(t)
		if count["total"] != float64(1) || count["entry"] != nil {
			t.Errorf("_summary=count: total %v, entries %v", count["total"], count["entry"])
		}

		// Refusals, each an OperationOutcome.
		other := newPractice(t, s)
		outcome(t, "another company's patient", other.fhir(t, "Patient/"+maria), http.StatusNotFound, "not-found")
		if got := readBundle(t, other.fhir(t, "Patient?identifier=1237010180")); len(got.ids["match"]) != 0 {
			t.Errorf("another company finds %v", got.ids)
		}
		if got := readBundle(t, other.fhir(t, "Patient?_id="+maria)); len(got.ids["match"]) != 0 {
			t.Errorf("another company finds by _id %v", got.ids)
		}
		noToken := s.requestUndocumented(t, http.MethodGet, fhirBase+"Patient", "", "")
		outcome(t, "no token", noToken, http.StatusUnauthorized, "login")
		if !strings.HasPrefix(noToken.header.Get("WWW-Authenticate"), "Bearer realm=") {
			t.Errorf("no token: challenge %q", noToken.header.Get("WWW-Authenticate"))
		}
		outcome(t, "a wrong token", s.requestUndocumented(t, http.MethodGet, fhirBase+"Patient", "", "", "Authorization: Bearer nope"), http.StatusUnauthorized, "login")
		notes := practice{s: s, company: p.company, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, "notes:read"))}
		outcome(t, "without customers:read", notes.fhir(t, "Patient/"+maria), http.StatusForbidden, "forbidden")
		if got := readBundle(t, p.fhir(t, "Organization?_lastUpdated=lt2000-01-01")); len(got.ids["match"]) != 0 {
			t.Errorf("the company, changed before 2000: %v", got.ids)
		}
		if got := readBundle(t, p.fhir(t, "Organization")); !slices.Equal(got.ids["match"], []string{p.company.ID}) {
			t.Errorf("the company: %v", got.ids)
		}
		outcome(t, "an unknown type", p.fhir(t, "Medication"), http.StatusNotFound, "not-supported")
		outcome(t, "an unknown parameter", p.fhir(t, "Patient?nickname=Huber"), http.StatusBadRequest, "invalid")
		outcome(t, "a modifier not served", p.fhir(t, "Patient?family:text=Huber"), http.StatusBadRequest, "invalid")
		outcome(t, "a modifier on a parameter without any", p.fhir(t, "Patient?birthdate:exact=1980"), http.StatusBadRequest, "invalid")
		outcome(t, "an SVNR with a wrong check digit", p.fhir(t, "Patient?identifier=urn:oid:1.2.40.0.10.1.4.3.1|1237010181"), http.StatusBadRequest, "invalid")
		outcome(t, "a contains-search of two letters", p.fhir(t, "Patient?family:contains=ub"), http.StatusBadRequest, "invalid")
		outcome(t, "a _total not served", p.fhir(t, "Patient?_total=some"), http.StatusBadRequest, "invalid")
		outcome(t, "a _summary not served", p.fhir(t, "Patient?_summary=true"), http.StatusBadRequest, "invalid")
		outcome(t, "_total on a type whose search is not counted", p.fhir(t, "Practitioner?_total=accurate"), http.StatusBadRequest, "invalid")
		outcome(t, "a malformed reference", p.fhir(t, "Appointment?patient=Patient/abc"), http.StatusBadRequest, "invalid")
		outcome(t, "a patient search on a type without one", p.fhir(t, "Practitioner?patient=1"), http.StatusBadRequest, "invalid")
		outcome(t, "a date that is none", p.fhir(t, "Patient?birthdate=1980-13"), http.StatusBadRequest, "invalid")
		outcome(t, "_count out of range", p.fhir(t, "Patient?_count=0"), http.StatusBadRequest, "invalid")
		outcome(t, "a cursor not handed out", p.fhir(t, "Patient?_cursor=xyz"), http.StatusBadRequest, "invalid")
		outcome(t, "an _include not served", p.fhir(t, "Patient?_include=Patient:link"), http.StatusBadRequest, "invalid")
		outcome(t, "an id that is no FHIR id", p.fhir(t, "Patient/a_b"), http.StatusBadRequest, "invalid")
		outcome(t, "a missing patient", p.fhir(t, "Patient/999999"), http.StatusNotFound, "not-found")
		outcome(t, "a uuid that is no object", p.fhir(t, "Appointment/0194a0e8-0000-7000-8000-000000000000"), http.StatusNotFound, "not-found")
		outcome(t, "an interaction not served", s.requestUndocumented(t, http.MethodDelete, fhirBase+"Patient/"+maria, "", "", p.auth), http.StatusNotFound, "not-supported")
	})
}

func readPatient(t *testing.T, p practice, id string) map[string]any {
	t.Helper()
	r := p.fhir(t, "Patient/"+id)
	if r.status != http.StatusOK {
		t.Fatalf("Patient/%s: %d %s", id, r.status, r.body)
	}
	return r.decode(t)
}

// TestFHIRSearchPagesOnTheSyncClock: a client paging patients by next
// links while others create and change patients sees every patient that
// existed when it began, and one again only at a newer version (a change
// moves it on the sync clock, as in the native sync), and the last page
// has no next link; the appointments' patients come along
// with _include, once each, and the audit trail names the FHIR reads with
// the patients they reached.
func TestFHIRSearchPagesOnTheSyncClock(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[len(backends)-1])
	p := newPractice(t, s)
	before := []string{fmt.Sprint(p.customer)}
	for i := range 11 {
		r := p.post(t, "customers", fmt.Sprintf(`{"first_name":"P%d","last_name":"Paging","birth_date":"1990-01-01"}`, i))
		before = append(before, fmt.Sprint(int64(r.decode(t)["id"].(float64))))
	}
	p.fhirListed(t, "Patient?_count=500", before[len(before)-1])
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // another integrator writes throughout
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p.post(t, "customers", fmt.Sprintf(`{"first_name":"N%d","last_name":"Writer","birth_date":"1990-01-01"}`, i))
			id := before[i%len(before)]
			p.s.requestUndocumented(t, http.MethodPatch, resource+"customers/"+id, "application/merge-patch+json", fmt.Sprintf(`{"phone":"+43155500%02d"}`, i%100), p.auth)
		}
	}()
	seen := map[string][]int{} // the versions a patient was seen at
	next := fhirBase + "Patient?_count=3"
	pages := 0
	for next != "" && pages < 200 {
		page := readBundle(t, p.s.requestUndocumented(t, http.MethodGet, strings.TrimPrefix(next, p.s.url), "", "", p.auth))
		for _, r := range page.resource {
			var v int
			fmt.Sscan(r["meta"].(map[string]any)["versionId"].(string), &v)
			seen[r["id"].(string)] = append(seen[r["id"].(string)], v)
		}
		next, pages = page.next, pages+1
	}
	close(stop)
	wg.Wait()
	if next != "" {
		t.Fatalf("no end after %d pages", pages)
	}
	for _, id := range before { // seen once, and again only when changed since: as the native sync
		if len(seen[id]) == 0 || !slices.IsSorted(seen[id]) || len(slices.Compact(slices.Clone(seen[id]))) != len(seen[id]) {
			t.Errorf("patient %s seen at versions %v while others wrote", id, seen[id])
		}
	}

	// Appointments with their patients included, each once.
	last := ""
	for range 2 {
		r := p.post(t, "appointments", fmt.Sprintf(`{"customer_id":%d,"user_id":%q,"location_id":%q,"service_id":%q,"start":"2026-03-10T09:00:00+01:00"}`,
			p.customer, p.doctor, p.location, p.service))
		if r.status != http.StatusCreated {
			t.Fatalf("appointment: %d %s", r.status, r.body)
		}
		last = r.decode(t)["id"].(string)
	}
	p.fhirListed(t, "Appointment?_count=500", last)
	with := readBundle(t, p.fhir(t, "Appointment?patient=Patient/"+fmt.Sprint(p.customer)+"&_include=Appointment:patient&date=2026-03-10"))
	if len(with.ids["match"]) != 2 || !slices.Equal(with.ids["include"], []string{fmt.Sprint(p.customer)}) {
		t.Errorf("appointments with their patient: %v", with.ids)
	}
	if got := readBundle(t, p.fhir(t, "Appointment?date=2026-03-11")); len(got.ids["match"]) != 0 {
		t.Errorf("appointments of another day: %v", got.ids)
	}

	// The audit trail names the FHIR read and the patient.
	auditor := practice{s: s, company: p.company, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, "audit:read"))}
	events := auditor.get(t, fmt.Sprintf("audit-events?customer_id=%d&limit=500", p.customer)).decode(t)["data"].([]any)
	actions := map[string]bool{}
	for _, e := range events {
		ev := e.(map[string]any)
		actions[ev["action"].(string)+" "+ev["section"].(string)] = true
	}
	if !actions["fhir-search appointments"] || !actions["fhir-search customers"] {
		t.Errorf("the audit trail of the patient: %v", actions)
	}
}

// TestFHIRFirstDay: an integrator's first day with a FHIR client library
// from npm, signed in with a signed assertion, and every resource of a practice seeded with every section
// held to the R4 StructureDefinitions by a validator (test/clients/fhir).
func TestFHIRFirstDay(t *testing.T) {
	t.Parallel()
	modules, err := filepath.Abs("node/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@medplum", "core")); err != nil {
		testenv.Missing(t, "@medplum/core (make node-tools)", err)
	}
	s := startServer(t, backends[0])
	var demo struct {
		CompanyID   string  `json:"company_id"`
		CustomerIDs []int64 `json:"customer_ids"`
	}
	s.praxis(t, &demo, "demo")
	// The integrator's client signs in with its key pair.
	key := newECKey(t, "k1")
	der, err := x509.MarshalPKCS8PrivateKey(key.jwk.Key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pemFile, jwksFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jwksFile, keySet(t, key), 0o600); err != nil {
		t.Fatal(err)
	}
	var client oauthClient
	s.praxis(t, &client, "admin", "client", "create", "--company", demo.CompanyID, "--name", "FHIR integrator", "--jwks-file", jwksFile, "--json")
	cmd := exec.Command("node", "clients/fhir/first_day.cjs")
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "PRAXIS_URL="+s.url, "CLIENT_ID="+client.ID, "KEY_PEM="+pemFile,
		fmt.Sprintf("CUSTOMER_ID=%d", demo.CustomerIDs[0]))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "fhir first day done") {
		t.Fatalf("the first day: %v\n%s", err, out)
	}
	t.Log(strings.TrimSpace(string(out)))
}

// fhirWrite sends a FHIR write with a body.
func (p practice) fhirWrite(t *testing.T, method, path, body string, headers ...string) reply {
	t.Helper()
	return p.s.requestUndocumented(t, method, fhirBase+path, "application/fhir+json", body, append([]string{p.auth}, headers...)...)
}

// TestFHIRWrites: a Patient is created (Location, weak ETag, retried by its
// Idempotency-Key once) and updated with If-Match in either form; an update
// keeps what FHIR does not carry, a stale one is 412 with the current
// version; an Appointment is booked by the booking rules, a taken slot 409;
// every refusal an OperationOutcome, nothing written by it.
func TestFHIRWrites(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		patient := `{"resourceType":"Patient","name":[{"family":"Steiner","given":["Eva"]}],"gender":"female","birthDate":"1975-04-03",` +
			`"identifier":[{"system":"urn:oid:1.2.40.0.10.1.4.3.1","value":"1237010180"}],"telecom":[{"system":"phone","value":"+4315550100"}]}`
		created := p.fhirWrite(t, http.MethodPost, "Patient", patient, "Idempotency-Key: eva-1")
		if created.status != http.StatusCreated || created.header.Get("ETag") != `W/"1"` {
			t.Fatalf("create: %d %s (ETag %q)", created.status, created.body, created.header.Get("ETag"))
		}
		id := created.decode(t)["id"].(string)
		if loc := created.header.Get("Location"); loc != s.url+fhirBase+"Patient/"+id+"/_history/1" {
			t.Errorf("Location %q", loc)
		}
		if r := s.requestUndocumented(t, http.MethodGet, strings.TrimPrefix(created.header.Get("Location"), s.url), "", "", p.auth); r.status != http.StatusOK {
			t.Errorf("the Location read: %d %s", r.status, r.body)
		}
		again := p.fhirWrite(t, http.MethodPost, "Patient", patient, "Idempotency-Key: eva-1")
		if again.status != http.StatusCreated || again.decode(t)["id"] != id || again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("the retry: %d %s", again.status, again.body)
		}
		outcome(t, "the key with another body", p.fhirWrite(t, http.MethodPost, "Patient", strings.Replace(patient, "Eva", "Eve", 1), "Idempotency-Key: eva-1"),
			http.StatusUnprocessableEntity, "invalid")
		native := p.get(t, "customers/"+id).decode(t)
		if native["first_name"] != "Eva" || native["last_name"] != "Steiner" || native["sex"] != "female" || native["svnr"] != "1237010180" || native["phone"] != "+4315550100" {
			t.Errorf("stored: %v", native)
		}
		// What FHIR does not carry, set natively, survives an update.
		if r := p.s.requestUndocumented(t, http.MethodPatch, resource+"customers/"+id, "application/merge-patch+json", `{"insurer":"oegk","alerts":["Penicillin"]}`, p.auth); r.status != http.StatusOK {
			t.Fatalf("native patch: %d %s", r.status, r.body)
		}
		update := strings.Replace(strings.Replace(patient, `"resourceType":"Patient"`, `"resourceType":"Patient","id":"`+id+`"`, 1), "+4315550100", "+4315550111", 1)
		outcome(t, "a stale If-Match", p.fhirWrite(t, http.MethodPut, "Patient/"+id, update, `If-Match: W/"1"`), http.StatusPreconditionFailed, "conflict")
		updated := p.fhirWrite(t, http.MethodPut, "Patient/"+id, update, `If-Match: W/"2"`)
		if updated.status != http.StatusOK || updated.header.Get("ETag") != `W/"3"` {
			t.Fatalf("update: %d %s", updated.status, updated.body)
		}
		if r := p.fhirWrite(t, http.MethodPut, "Patient/"+id, strings.Replace(update, "+4315550111", "+4315550122", 1), `If-Match: "3"`); r.status != http.StatusOK {
			t.Errorf("a strong If-Match: %d %s", r.status, r.body)
		}
		native = p.get(t, "customers/"+id).decode(t)
		if native["phone"] != "+4315550122" || native["insurer"] != "oegk" || fmt.Sprint(native["alerts"]) != "[Penicillin]" {
			t.Errorf("after the updates: %v", native)
		}
		stale := p.fhirWrite(t, http.MethodPut, "Patient/"+id, update, `If-Match: W/"2"`)
		if stale.status != http.StatusPreconditionFailed || stale.header.Get("ETag") != `W/"4"` {
			t.Errorf("stale: %d %s (ETag %q)", stale.status, stale.body, stale.header.Get("ETag"))
		}

		// Refusals: nothing written.
		outcome(t, "a type only read", p.fhirWrite(t, http.MethodPost, "Practitioner", `{"resourceType":"Practitioner"}`), http.StatusMethodNotAllowed, "not-supported")
		outcome(t, "another type in the body", p.fhirWrite(t, http.MethodPost, "Patient", `{"resourceType":"Practitioner"}`), http.StatusBadRequest, "invalid")
		outcome(t, "not JSON", p.fhirWrite(t, http.MethodPost, "Patient", `{"resourceType":`), http.StatusBadRequest, "structure")
		outcome(t, "a name that is no list", p.fhirWrite(t, http.MethodPost, "Patient", `{"resourceType":"Patient","name":"Eva"}`), http.StatusBadRequest, "structure")
		outcome(t, "a gender outside the value set", p.fhirWrite(t, http.MethodPost, "Patient", strings.Replace(patient, `"female"`, `"f"`, 1)), http.StatusBadRequest, "code-invalid")
		outcome(t, "no family name", p.fhirWrite(t, http.MethodPost, "Patient", `{"resourceType":"Patient","name":[{"given":["X"]}],"birthDate":"1980-01-01"}`), http.StatusUnprocessableEntity, "invalid")
		outcome(t, "another id in the body", p.fhirWrite(t, http.MethodPut, "Patient/"+id, strings.Replace(update, `"id":"`+id+`"`, `"id":"999"`, 1)), http.StatusBadRequest, "invalid")
		outcome(t, "the wrong media type", s.requestUndocumented(t, http.MethodPost, fhirBase+"Patient", "text/plain", patient, p.auth), http.StatusUnsupportedMediaType, "not-supported")
		outcome(t, "another company's patient", newPractice(t, s).fhirWrite(t, http.MethodPut, "Patient/"+id, update), http.StatusNotFound, "not-found")
		p.fhirListed(t, "Patient?_count=500", id)
		if got := readBundle(t, p.fhir(t, "Patient?family=Steiner")); len(got.ids["match"]) != 1 {
			t.Errorf("patients after the refusals: %v", got.ids)
		}

		// An appointment, booked by the booking rules.
		day := bookingDay(t)
		start := p.slots(t, day, "")[0]["start"].(string)
		appointment := fmt.Sprintf(`{"resourceType":"Appointment","status":"booked","start":%q,"comment":"Kontrolle","participant":[`+
			`{"actor":{"reference":"Patient/%s"},"status":"accepted"},{"actor":{"reference":"Practitioner/%s"},"status":"accepted"},`+
			`{"actor":{"reference":"Location/%s"},"status":"accepted"},{"actor":{"reference":"HealthcareService/%s"},"status":"accepted"}]}`,
			start, id, p.doctor, p.location, p.service)
		booked := p.fhirWrite(t, http.MethodPost, "Appointment", appointment)
		if booked.status != http.StatusCreated || booked.decode(t)["status"] != "booked" {
			t.Fatalf("booking: %d %s", booked.status, booked.body)
		}
		outcome(t, "the taken slot", p.fhirWrite(t, http.MethodPost, "Appointment", appointment), http.StatusConflict, "conflict")
		outcome(t, "an appointment update", p.fhirWrite(t, http.MethodPut, "Appointment/"+booked.decode(t)["id"].(string), appointment), http.StatusMethodNotAllowed, "not-supported")
		outcome(t, "a participant of no kind", p.fhirWrite(t, http.MethodPost, "Appointment", strings.Replace(appointment, "Location/", "Device/", 1)), http.StatusBadRequest, "invalid")
		outcome(t, "a cancelled appointment to book", p.fhirWrite(t, http.MethodPost, "Appointment", strings.Replace(appointment, `"booked"`, `"cancelled"`, 1)), http.StatusUnprocessableEntity, "business-rule")
	})
}

// TestFHIRLabReportsAndDeviceOrders: a lab result is a DiagnosticReport
// whose rows are Observations of their own, named as its results (value
// and unit as the lab wrote them, the reference range, the flag as an
// interpretation, a text result as valueString): read by id, found by an
// Observation search with the measurements, included with the report, not
// seen without lab-results:read; a device order is a ServiceRequest with
// the practice's order number (PLAC), its procedure and tests, its status
// as a request's.
func TestFHIRLabReportsAndDeviceOrders(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	p := newPractice(t, s)
	lab := p.post(t, "lab-results", p.example(domain.KindOf("lab-results"), ""))
	order := p.post(t, "device-orders", p.example(domain.KindOf("device-orders"), ""))
	if lab.status != http.StatusCreated || order.status != http.StatusCreated {
		t.Fatalf("lab result %d %s, device order %d %s", lab.status, lab.body, order.status, order.body)
	}
	var report struct {
		Status    string
		Subject   struct{ Reference string }
		Issued    string
		Performer []struct{ Display string }
		Result    []struct{ Reference string }
	}
	labID := lab.decode(t)["id"].(string)
	if err := json.Unmarshal(p.fhir(t, "DiagnosticReport/"+labID).body, &report); err != nil {
		t.Fatal(err)
	}
	rows := []string{labID + ".r1", labID + ".r2"}
	if report.Status != "final" || report.Subject.Reference != fmt.Sprint("Patient/", p.customer) || report.Issued == "" ||
		len(report.Performer) != 1 || report.Performer[0].Display != "Labor Dr. Weiss" || len(report.Result) != 2 ||
		report.Result[0].Reference != "Observation/"+rows[0] || report.Result[1].Reference != "Observation/"+rows[1] {
		t.Fatalf("the report: %+v", report)
	}
	type row struct {
		ID            string
		Status        string
		Category      []struct{ Coding []struct{ Code string } }
		Code          struct{ Text string }
		Subject       struct{ Reference string }
		ValueQuantity *struct {
			Value json.Number
			Unit  string
		}
		ValueString    string
		ReferenceRange []struct{ Low, High struct{ Value json.Number } }
		Interpretation []struct{ Coding []struct{ Code string } }
	}
	var hba1c, colour row
	if err := json.Unmarshal(p.fhir(t, "Observation/"+rows[0]).body, &hba1c); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(p.fhir(t, "Observation/"+rows[1]).body, &colour); err != nil {
		t.Fatal(err)
	}
	if hba1c.ID != rows[0] || hba1c.Status != "final" || len(hba1c.Category) != 1 || hba1c.Category[0].Coding[0].Code != "laboratory" ||
		hba1c.Subject.Reference != fmt.Sprint("Patient/", p.customer) || hba1c.Code.Text != "HbA1c" || hba1c.ValueQuantity == nil ||
		hba1c.ValueQuantity.Value != "6.1" || hba1c.ValueQuantity.Unit != "%" || len(hba1c.ReferenceRange) != 1 || hba1c.ReferenceRange[0].Low.Value != "4.0" ||
		hba1c.ReferenceRange[0].High.Value != "5.6" || len(hba1c.Interpretation) != 1 || hba1c.Interpretation[0].Coding[0].Code != "H" {
		t.Errorf("the HbA1c row: %+v", hba1c)
	}
	if colour.ID != rows[1] || colour.ValueString != "yellow" || colour.ValueQuantity != nil || colour.Interpretation != nil {
		t.Errorf("the text row: %+v", colour)
	}
	outcome(t, "a row the report does not have", p.fhir(t, "Observation/"+labID+".r3"), http.StatusNotFound, "not-found")
	outcome(t, "a row number that is none", p.fhir(t, "Observation/"+labID+".r0"), http.StatusNotFound, "not-found")
	// Found with the measurements, by its LOINC code, and with the report.
	p.fhirListed(t, fmt.Sprintf("Observation?patient=Patient/%d&code=http://loinc.org|4548-4", p.customer), rows[0])
	if byID := readBundle(t, p.fhir(t, "Observation?_id="+rows[1]+","+rows[0])); !slices.Equal(byID.ids["match"], rows) {
		t.Errorf("Observation?_id= the rows: %v", byID.ids)
	}
	if with := readBundle(t, p.fhir(t, "DiagnosticReport?_id="+labID+"&_include=DiagnosticReport:result")); !slices.Equal(with.ids["match"], []string{labID}) ||
		!slices.Equal(with.ids["include"], rows) {
		t.Errorf("_include=DiagnosticReport:result: %v", with.ids)
	}
	measurementsOnly := practice{s: s, company: p.company, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, "measurements:read"))}
	if got := readBundle(t, measurementsOnly.fhir(t, "Observation?_count=100")); slices.Contains(got.ids["match"], rows[0]) {
		t.Errorf("a grant without lab-results:read found a lab row: %v", got.ids)
	}
	outcome(t, "a lab row without lab-results:read", measurementsOnly.fhir(t, "Observation/"+rows[0]), http.StatusNotFound, "not-found")

	var request struct {
		Status, Intent string
		Subject        struct{ Reference string }
		Identifier     []struct {
			Type  struct{ Coding []struct{ Code string } }
			Value string
		}
		Code        struct{ Text string }
		OrderDetail []struct{ Text string }
	}
	number := fmt.Sprint(order.decode(t)["number"])
	if err := json.Unmarshal(p.fhir(t, "ServiceRequest/"+order.decode(t)["id"].(string)).body, &request); err != nil {
		t.Fatal(err)
	}
	if request.Status != "active" || request.Intent != "order" || request.Subject.Reference != fmt.Sprint("Patient/", p.customer) ||
		len(request.Identifier) != 1 || request.Identifier[0].Value != number || request.Identifier[0].Type.Coding[0].Code != "PLAC" ||
		request.Code.Text != "EKG04" || len(request.OrderDetail) != 1 || request.OrderDetail[0].Text != "RUHE" {
		t.Errorf("the service request: %+v", request)
	}
	found := readBundle(t, p.fhir(t, fmt.Sprintf("ServiceRequest?patient=Patient/%d&status=active", p.customer)))
	if !slices.Equal(found.ids["match"], []string{order.decode(t)["id"].(string)}) {
		t.Errorf("active requests of the patient: %v", found.ids)
	}
	if none := readBundle(t, p.fhir(t, "ServiceRequest?status=completed")); len(none.ids["match"]) != 0 {
		t.Errorf("completed requests: %v", none.ids)
	}
}

// TestFHIRDocumentSearchReachesTheQuery: DocumentReference's parameters
// are conditions of the files' query, not a filter of feed pages: a match
// behind more non-matching files than a search used to read comes on the
// first page, every page is full, and the last has no next link.
func TestFHIRDocumentSearchReachesTheQuery(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p, other := newPractice(t, s), newPractice(t, s)
		upload := func(p practice, category string, n int) []string {
			parts := []part{fieldPart("customer_id", fmt.Sprint(p.customer)), fieldPart("category", category)}
			for i := range n {
				parts = append(parts, filePart(fmt.Sprintf("%s-%d.pdf", category, i), pdfOfSize(1000+i)))
			}
			created := p.postFiles(t, parts...)
			if created.status != http.StatusCreated {
				t.Fatalf("POST files: %d %s", created.status, created.body)
			}
			var ids []string
			for _, f := range created.decode(t)["data"].([]any) {
				ids = append(ids, f.(map[string]any)["id"].(string))
			}
			return ids
		}
		images := upload(p, "image", 12)
		letter := upload(p, "letter", 1)
		upload(other, "letter", 1)
		// The sync feed holds a change back while an older transaction (of
		// any test on the server) may still commit before it.
		eventually(t, time.Minute, "the 13 files on the feed", func() bool {
			return len(readBundle(t, p.fhir(t, "DocumentReference?_count=100")).ids["match"]) == 13
		})
		paged := func(query string) (ids []string, pages int) {
			t.Helper()
			for next := "DocumentReference?" + query; next != ""; pages++ {
				if pages == 20 {
					t.Fatalf("%s: more than 20 pages", query)
				}
				page := readBundle(t, p.fhir(t, next))
				if len(page.ids["match"]) == 0 {
					t.Errorf("%s: page %d is empty (next %q)", query, pages+1, page.next)
				}
				ids = append(ids, page.ids["match"]...)
				next = strings.TrimPrefix(page.next, s.url+fhirBase)
			}
			return ids, pages
		}
		for _, c := range []struct {
			query string
			want  []string
			pages int
		}{
			{"category=letter&_count=1", letter, 1},
			{"category=http://example.org|letter&_count=1", letter, 1}, // the system is not compared
			{"contenttype=application/pdf&category=letter,report&_count=1", letter, 1},
			{"_id=" + letter[0] + "," + images[0] + "&category=letter", letter, 1},
			{"category=image&date=ge2000-01-01&_count=5", images, 3},
			{"date=eq" + time.Now().UTC().Format("2006-01-02") + "&category=letter&_count=1", letter, 1},
		} {
			got, pages := paged(c.query) // one upload's files are one change, in the order of their ids
			if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(c.want))) || pages != c.pages {
				t.Errorf("DocumentReference?%s: %v in %d pages, want %v in %d", c.query, got, pages, c.want, c.pages)
			}
		}
		onlyPage(t, p, "DocumentReference?date=lt2000-01-01")
		onlyPage(t, p, "DocumentReference?category=other")
		onlyPage(t, p, "DocumentReference?category=letter&contenttype=image/png")
		outcome(t, "a malformed date", p.fhir(t, "DocumentReference?date=gt2026-13"), http.StatusBadRequest, "invalid")
	})
}

// TestFHIRObservationSearchReachesTheQuery: Observation's code and date and
// DiagnosticReport's date are conditions of the query on the rows the store
// keeps beside each measurement and lab result (and on a GDT result's
// time of examination): a lab row behind more measurements than a search
// used to read comes on the first page, and a search that the GDT results
// cannot answer ends without a next link however many other files there are.
func TestFHIRObservationSearchReachesTheQuery(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		for range 12 {
			if r := p.post(t, "measurements", p.example(domain.KindOf("measurements"), "")); r.status != http.StatusCreated {
				t.Fatalf("POST measurements: %d %s", r.status, r.body)
			}
		}
		lab := p.post(t, "lab-results", p.example(domain.KindOf("lab-results"), "")) // HbA1c (4548-4) collected 2026-03-10
		if lab.status != http.StatusCreated {
			t.Fatalf("POST lab-results: %d %s", lab.status, lab.body)
		}
		labID := lab.decode(t)["id"].(string)
		parts := []part{fieldPart("customer_id", fmt.Sprint(p.customer)), fieldPart("category", "report")}
		for i := range 12 {
			parts = append(parts, filePart(fmt.Sprintf("brief-%d.pdf", i), pdfOfSize(1000+i)))
		}
		if r := p.postFiles(t, parts...); r.status != http.StatusCreated {
			t.Fatalf("POST files: %d %s", r.status, r.body)
		}
		eventually(t, time.Minute, "the measurements and the lab rows on the feed", func() bool {
			return len(readBundle(t, p.fhir(t, "Observation?_count=100")).ids["match"]) == 14
		})
		onlyPage(t, p, "Observation?code=4548-4&_count=1", labID+".r1")
		onlyPage(t, p, "Observation?code=http://loinc.org|4548-4&date=2026-03-10&_count=1", labID+".r1")
		onlyPage(t, p, "Observation?code=4548-4,9999-9&date=ge2026-03-10T07:00:00Z&_count=1", labID+".r1")
		onlyPage(t, p, "Observation?code=4548-4&date=2026-03-11")
		onlyPage(t, p, "DiagnosticReport?date=2026-03-10&_count=1", labID)
		onlyPage(t, p, "DiagnosticReport?date=2026-03-11&_count=1")
		// Reports of ten rows, one of them glucose: a page counts the rows
		// that match, so twelve reports' glucose rows fill a page of twelve.
		var rows []string
		for i := range 12 {
			results := make([]string, 10)
			for j := range 9 {
				results[j] = fmt.Sprintf(`{"name":"Wert %d","value":"%d","unit":"mg/dL"}`, j, j)
			}
			results[9] = `{"name":"Glucose","loinc_code":"2345-7","value":"98","unit":"mg/dL"}`
			id := p.post(t, "lab-results", fmt.Sprintf(`{"customer_id":%d,"collected_at":"2026-03-%02dT08:00:00+01:00","reported_at":"2026-03-%02dT16:00:00+01:00","results":[%s]}`,
				p.customer, 11+i, 11+i, strings.Join(results, ","))).decode(t)["id"].(string)
			rows = append(rows, id+".r10")
		}
		eventually(t, time.Minute, "the glucose rows on the feed", func() bool {
			return len(readBundle(t, p.fhir(t, "Observation?code=2345-7&_count=100")).ids["match"]) == 12
		})
		onlyPage(t, p, "Observation?code=2345-7&_count=12", rows...)
	})
}

// TestFHIRClinicalSearchesReachTheQuery: Condition's, Appointment's and
// ServiceRequest's parameters are conditions of the query on the payload's
// fields and the record's creation: a match behind more non-matching
// records than a search used to read comes on the first page, with no
// next link after it.
func TestFHIRClinicalSearchesReachTheQuery(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		created := func(section, body string) string {
			t.Helper()
			r := p.post(t, section, body)
			if r.status != http.StatusCreated {
				t.Fatalf("POST %s: %d %s", section, r.status, r.body)
			}
			return r.decode(t)["id"].(string)
		}
		diagnosis, appointment := p.example(domain.KindOf("diagnoses"), ""), p.example(domain.KindOf("appointments"), "")
		for i := range 12 { // I10 on 2026-03-10; appointments on 2026-03-10, 09:00 +01:00 onwards
			created("diagnoses", diagnosis)
			start := time.Date(2026, 3, 10, 9, 0, 0, 0, time.FixedZone("", 3600)).Add(time.Duration(i) * 30 * time.Minute)
			created("appointments", strings.NewReplacer(`"2026-03-10T09:00:00+01:00"`, strconv.Quote(start.Format(time.RFC3339)),
				`"2026-03-10T09:20:00+01:00"`, strconv.Quote(start.Add(20*time.Minute).Format(time.RFC3339))).Replace(appointment))
		}
		diabetes := created("diagnoses", strings.NewReplacer(`"I10"`, `"E11.9"`, `"2026-03-10"`, `"2026-03-01"`).Replace(diagnosis))
		late := created("appointments", strings.NewReplacer(`2026-03-10T09:`, `2026-03-12T09:`).Replace(appointment))
		order := created("device-orders", p.example(domain.KindOf("device-orders"), ""))
		eventually(t, time.Minute, "the diagnoses and appointments on the feed", func() bool {
			return len(readBundle(t, p.fhir(t, "Condition?_count=100")).ids["match"]) == 13 &&
				len(readBundle(t, p.fhir(t, "Appointment?_count=100")).ids["match"]) == 13
		})
		onlyPage(t, p, "Condition?code=E11.9&_count=1", diabetes)
		onlyPage(t, p, "Condition?code=http://hl7.org/fhir/sid/icd-10|E11.9,C50&_count=1", diabetes)
		onlyPage(t, p, "Condition?recorded-date=lt2026-03-10&_count=1", diabetes)
		onlyPage(t, p, "Condition?recorded-date=2026-03&code=E11.9&_count=1", diabetes)
		onlyPage(t, p, "Condition?recorded-date=2026-03-02")
		onlyPage(t, p, "Condition?_lastUpdated=lt2000-01-01")
		onlyPage(t, p, "Condition?_lastUpdated=ne2000-01-01&code=E11.9&_count=1", diabetes)
		onlyPage(t, p, "Appointment?date=2026-03-12&_count=1", late)
		onlyPage(t, p, "Appointment?date=ge2026-03-11T00:00:00Z&status=booked&practitioner=Practitioner/"+p.doctor+"&_count=1", late)
		onlyPage(t, p, "Appointment?date=2026-03-12&location=Location/"+p.location+"&_count=1", late)
		onlyPage(t, p, "Appointment?date=2026-03-12&status=cancelled")
		onlyPage(t, p, "Appointment?date=2026-03-12&practitioner=Practitioner/"+domain.NewObjectID())
		onlyPage(t, p, "ServiceRequest?status=active&authored="+time.Now().UTC().Format("2006-01-02"), order)
		onlyPage(t, p, "ServiceRequest?authored=lt2000-01-01")
		onlyPage(t, p, "ServiceRequest?_id="+order+"&status=completed")
		onlyPage(t, p, "ServiceRequest?_id="+order+"&status=active", order)
		outcome(t, "a malformed date", p.fhir(t, "Appointment?date=2026-02-30"), http.StatusBadRequest, "invalid")
	})
}

// TestFHIRCatalogueSearches: the staff's and catalogue's flags and a
// schedule's actors are conditions of the query; their names are matched
// in memory over the whole section (it is small), so a match behind more
// than ten pages of others still comes on the first page.
func TestFHIRCatalogueSearches(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		for range 12 {
			seedUser(t, s, p.company.ID, "assistant")
		}
		left := seedRecord(t, s, p.company.ID, "users", `{"first_name":"Ali","last_name":"Öztürk","role":"doctor","active":false}`)
		closed := seedRecord(t, s, p.company.ID, "locations", `{"name":"Filiale Nord","address":{"street":"Nordweg 2","postal_code":"1210","city":"Wien","country":"AT"},"phone":null,"email":null,"online_bookable":false,"active":false}`)
		onlyPage(t, p, "Practitioner?family="+url.QueryEscape("ÖZT")+"&_count=1", left)
		onlyPage(t, p, "Practitioner?active=false&_count=1", left)
		onlyPage(t, p, "Practitioner?active=false,maybe&family="+url.QueryEscape("öz"), left)
		onlyPage(t, p, "Practitioner?active=true&family="+url.QueryEscape("öz"))
		onlyPage(t, p, "Location?status=inactive", closed)
		onlyPage(t, p, "Location?status=active", p.location)
		onlyPage(t, p, "Location?name=filiale&status=active")
		onlyPage(t, p, "HealthcareService?active=true&name=check", p.service)
		onlyPage(t, p, "HealthcareService?active=false")
		onlyPage(t, p, "Schedule?actor=Location/"+p.service)
		schedules := readBundle(t, p.fhir(t, "Schedule?actor=Practitioner/"+p.doctor)).ids["match"]
		if len(schedules) != 1 {
			t.Fatalf("the doctor's schedules: %v", schedules)
		}
		onlyPage(t, p, "Schedule?actor="+p.service, schedules...)
		onlyPage(t, p, "Schedule?actor=HealthcareService/"+p.service+"&_id="+schedules[0], schedules...)
		onlyPage(t, p, "Schedule?actor=Location/"+closed+",HealthcareService/"+p.service+"&active=true", schedules...)
	})
}

// TestFHIRFilesAsDocuments: a stored file is a DocumentReference of its
// patient whose attachment names its Binary; the Binary answers the bytes
// as stored, with their sniffed type, as an attachment; Binary is read by
// id only; another company's file is not found either way; the read is in
// the audit trail under the patient.
func TestFHIRFilesAsDocuments(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	p, other := newPractice(t, s), newPractice(t, s)
	pdf := pdfOfSize(20_000)
	created := p.postFiles(t, fieldPart("customer_id", fmt.Sprint(p.customer)), fieldPart("category", "lab"), fieldPart("description", "Blutbild"),
		filePart("labor.pdf", pdf))
	if created.status != http.StatusCreated {
		t.Fatalf("POST files: %d %s", created.status, created.body)
	}
	id := created.decode(t)["data"].([]any)[0].(map[string]any)["id"].(string)
	p.fhirListed(t, fmt.Sprintf("DocumentReference?patient=Patient/%d&category=lab", p.customer), id)
	var doc struct {
		Status      string
		Subject     struct{ Reference string }
		Description string
		Content     []struct {
			Attachment struct {
				ContentType, URL, Title string
				Size                    int
			}
		}
	}
	if err := json.Unmarshal(p.fhir(t, "DocumentReference/"+id).body, &doc); err != nil {
		t.Fatal(err)
	}
	att := doc.Content[0].Attachment
	if doc.Status != "current" || doc.Subject.Reference != fmt.Sprint("Patient/", p.customer) || doc.Description != "Blutbild" ||
		att.ContentType != "application/pdf" || att.URL != "Binary/"+id || att.Title != "labor.pdf" || att.Size != len(pdf) {
		t.Fatalf("the document: %+v", doc)
	}
	bin := p.fhir(t, att.URL)
	if bin.status != http.StatusOK || !bytes.Equal(bin.body, pdf) || bin.header.Get("Content-Type") != "application/pdf" ||
		bin.header.Get("Content-Disposition") != "attachment; filename=labor.pdf" || bin.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("the Binary: %d, %d bytes, %v", bin.status, len(bin.body), bin.header)
	}
	outcome(t, "a search of Binary", p.fhir(t, "Binary?_id="+id), http.StatusNotFound, "not-supported")
	outcome(t, "another company's document", other.fhir(t, "DocumentReference/"+id), http.StatusNotFound, "not-found")
	outcome(t, "another company's Binary", other.fhir(t, "Binary/"+id), http.StatusNotFound, "not-found")
	if got := readBundle(t, other.fhir(t, "DocumentReference?_count=500")); slices.Contains(got.ids["match"], id) {
		t.Error("another company lists the document")
	}
	auditor := s.tokenFor(t, s.newClient(t, p.company, "audit:read"))
	events, _ := s.auditEvents(t, auditor, fmt.Sprintf("&customer_id=%d", p.customer))
	read := false
	for _, e := range events {
		read = read || (e.Action == "fhir-read" && e.Section == "files" && e.Object == id)
	}
	if !read {
		t.Errorf("no fhir-read of the Binary under the patient: %+v", events)
	}
}

// TestFHIRSlots: a service assignment is a Schedule; its Slots are the
// booking's free starts, the same ones GET booking/slots answers, with
// the same ids in every search; a booked slot is no longer found; a
// search is a window of dates whose next link is the window after; bad
// windows and another company's schedule are refused.
func TestFHIRSlots(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	p, other := newPractice(t, s), newPractice(t, s)
	day := bookingDay(t)
	schedules := readBundle(t, p.fhir(t, "Schedule?actor=Practitioner/"+p.doctor)).ids["match"]
	if len(schedules) != 1 {
		t.Fatalf("the doctor's schedules: %v", schedules)
	}
	query := "Slot?schedule=Schedule/" + schedules[0] + "&start=ge" + day + "&start=le" + day
	first, again := readBundle(t, p.fhir(t, query)), readBundle(t, p.fhir(t, query))
	native := p.slots(t, day, "")
	if len(first.ids["match"]) == 0 || len(first.ids["match"]) != len(native) || !slices.Equal(first.ids["match"], again.ids["match"]) {
		t.Fatalf("slots %v then %v; the booking API has %d", first.ids["match"], again.ids["match"], len(native))
	}
	if next, _ := time.Parse(time.DateOnly, day); !strings.Contains(first.next, "start=ge"+next.AddDate(0, 0, 1).Format(time.DateOnly)) {
		t.Errorf("the next window: %s", first.next)
	}
	slot := first.resource[0]
	if slot["status"] != "free" || slot["start"] != native[0]["start"] || slot["end"] != native[0]["end"] {
		t.Errorf("the first slot %v, the booking API's %v", slot, native[0])
	}
	id := slot["id"].(string)
	if r := p.fhir(t, "Slot/"+id); r.status != http.StatusOK || r.decode(t)["start"] != slot["start"] {
		t.Fatalf("read %s: %d %s", id, r.status, r.body)
	}
	if booked := p.post(t, "booking/appointments", p.booking(slot["start"].(string), newPatient)); booked.status != http.StatusCreated {
		t.Fatalf("booking the slot: %d %s", booked.status, booked.body)
	}
	outcome(t, "a booked slot", p.fhir(t, "Slot/"+id), http.StatusNotFound, "not-found")
	if after := readBundle(t, p.fhir(t, query)); slices.Contains(after.ids["match"], id) {
		t.Error("a booked slot is still listed")
	}
	far, _ := time.Parse(time.DateOnly, day)
	for _, bad := range []struct{ query, why string }{
		{"Slot?start=ge" + day, "no schedule"},
		{"Slot?schedule=Schedule/" + schedules[0] + "&start=ge" + day + "&start=le" + far.AddDate(0, 0, 40).Format(time.DateOnly), "a window of 41 days"},
		{"Slot?schedule=Schedule/" + schedules[0] + "&start=ge2026-13-01", "a date that is none"},
		{"Slot?schedule=Schedule/" + schedules[0] + "&practitioner=Practitioner/" + p.doctor, "a parameter not served"},
	} {
		outcome(t, bad.why, p.fhir(t, bad.query), http.StatusBadRequest, "invalid")
	}
	outcome(t, "another company's schedule", other.fhir(t, query), http.StatusNotFound, "not-found")
	outcome(t, "another company's slot", other.fhir(t, "Slot/"+first.ids["match"][1]), http.StatusNotFound, "not-found")
}

// TestFHIRGDTResultsAsReports: a device's GDT result is a DiagnosticReport
// beside the lab reports: the examination, its findings as conclusion, the
// file as presented form, each test (8410) an Observation of its own with
// its value (a decimal comma read), unit, normal range and limit indicator,
// named as the report's result; a search pages through the lab reports and
// then the results, each once, one a page; an Observation search pages
// through the lab rows and then the tests; the exports of DiagnosticReport
// and Observation hold both; a file that is no GDT result is no report.
func TestFHIRGDTResultsAsReports(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	p := newPractice(t, s)
	lab := p.post(t, "lab-results", p.example(domain.KindOf("lab-results"), ""))
	if lab.status != http.StatusCreated {
		t.Fatalf("lab result: %d %s", lab.status, lab.body)
	}
	result := gdtRecord([2]string{"8000", "6310"}, [2]string{"9218", "02.10"}, [2]string{"8316", "EKG1"}, [2]string{"3000", fmt.Sprint(p.customer)},
		[2]string{"6200", "10032026"}, [2]string{"6201", "0915"}, [2]string{"8402", "EKG04"}, [2]string{"6220", "Sinusrhythmus"},
		[2]string{"8410", "HF"}, [2]string{"8411", "Herzfrequenz"}, [2]string{"8420", "72,5"}, [2]string{"8421", "/min"},
		[2]string{"8461", "60"}, [2]string{"8462", "100"},
		[2]string{"8410", "QTC"}, [2]string{"8411", "QTc"}, [2]string{"8420", "480"}, [2]string{"8421", "ms"}, [2]string{"8422", "+"},
		[2]string{"8470", "verlängert"})
	up := s.upload(t, "/api/gdt/upload", gdtHeaders(p.company, p.customer), filePart("ekg.gdt", result), filePart("ekg.pdf", pdfOfSize(2000)))
	if up.status != http.StatusOK || len(up.Files) != 2 {
		t.Fatalf("upload: %d %q", up.status, up.Message)
	}
	gdtID, pdfID, labID := up.Files[0].ID, up.Files[1].ID, lab.decode(t)["id"].(string)

	var report struct {
		ResourceType, Status, Conclusion, EffectiveDateTime string
		Code                                                struct{ Text string }
		Subject                                             struct{ Reference string }
		PresentedForm                                       []struct{ URL string }
		Result                                              []struct{ Reference string }
	}
	if err := json.Unmarshal(p.fhir(t, "DiagnosticReport/"+gdtID).body, &report); err != nil {
		t.Fatal(err)
	}
	tests := []string{gdtID + ".t1", gdtID + ".t2"}
	if report.ResourceType != "DiagnosticReport" || report.Status != "final" || report.Code.Text != "EKG04" || report.Conclusion != "Sinusrhythmus" ||
		report.EffectiveDateTime != "2026-03-10T09:15:00+01:00" || report.Subject.Reference != fmt.Sprint("Patient/", p.customer) ||
		len(report.PresentedForm) != 1 || report.PresentedForm[0].URL != "Binary/"+gdtID || len(report.Result) != 2 ||
		report.Result[0].Reference != "Observation/"+tests[0] || report.Result[1].Reference != "Observation/"+tests[1] {
		t.Fatalf("the GDT report: %+v", report)
	}
	type test struct {
		ID, EffectiveDateTime string
		Code                  struct{ Coding []struct{ Code string } }
		ValueQuantity         struct {
			Value json.Number
			Unit  string
		}
		ReferenceRange []struct{ Low, High struct{ Value json.Number } }
		Interpretation []struct{ Coding []struct{ Code string } }
		Note           []struct{ Text string }
	}
	var hf, qtc test
	if err := json.Unmarshal(p.fhir(t, "Observation/"+tests[0]).body, &hf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(p.fhir(t, "Observation/"+tests[1]).body, &qtc); err != nil {
		t.Fatal(err)
	}
	if hf.ID != tests[0] || hf.EffectiveDateTime != report.EffectiveDateTime || hf.Code.Coding[0].Code != "HF" || hf.ValueQuantity.Value != "72.5" || hf.ValueQuantity.Unit != "/min" || len(hf.ReferenceRange) != 1 ||
		hf.ReferenceRange[0].Low.Value != "60" || hf.ReferenceRange[0].High.Value != "100" || hf.Interpretation != nil {
		t.Errorf("the heart rate: %+v", hf)
	}
	if qtc.ValueQuantity.Value != "480" || len(qtc.Interpretation) != 1 || qtc.Interpretation[0].Coding[0].Code != "H" || len(qtc.Note) != 1 || qtc.Note[0].Text != "verlängert" {
		t.Errorf("the QTc: %+v", qtc)
	}
	outcome(t, "a file that is no GDT result", p.fhir(t, "DiagnosticReport/"+pdfID), http.StatusNotFound, "not-found")

	// One a page: the lab report, then the GDT result, then the end.
	var seen []string
	next := "DiagnosticReport?_count=1&patient=Patient/" + fmt.Sprint(p.customer)
	for range 6 {
		page := readBundle(t, p.fhir(t, next))
		seen = append(seen, page.ids["match"]...)
		if page.next == "" {
			break
		}
		next = strings.TrimPrefix(page.next, s.url+fhirBase)
	}
	if !slices.Equal(seen, []string{labID, gdtID}) {
		t.Errorf("paged %v, want the lab report, then the GDT result", seen)
	}
	if with := readBundle(t, p.fhir(t, "DiagnosticReport?_id="+gdtID+"&_include=DiagnosticReport:result")); !slices.Equal(with.ids["match"], []string{gdtID}) ||
		!slices.Equal(with.ids["include"], tests) {
		t.Errorf("_include=DiagnosticReport:result: %v", with.ids)
	}
	// Two a page: the lab report's rows, then the GDT result's tests, then the end.
	labRows := []string{labID + ".r1", labID + ".r2"}
	var observed []string
	next = "Observation?_count=2&patient=Patient/" + fmt.Sprint(p.customer)
	for range 6 {
		page := readBundle(t, p.fhir(t, next))
		if len(page.ids["match"]) > 2 {
			t.Errorf("a page of %d observations for _count=2", len(page.ids["match"]))
		}
		observed = append(observed, page.ids["match"]...)
		if page.next == "" {
			break
		}
		next = strings.TrimPrefix(page.next, s.url+fhirBase)
	}
	if want := append(slices.Clone(labRows), tests...); !slices.Equal(observed, want) {
		t.Errorf("paged observations %v, want %v", observed, want)
	}
	if dated := readBundle(t, p.fhir(t, "DiagnosticReport?date=2026-03-10&_count=100")); !slices.Contains(dated.ids["match"], gdtID) {
		t.Errorf("the GDT result by its examination's date: %v", dated.ids)
	}
	// issued, status and the tests' date in the query: the GDT result was
	// stored today and is final; the lab reported on 2026-03-10.
	onlyPage(t, p, "DiagnosticReport?issued="+time.Now().UTC().Format("2006-01-02")+"&status=final&_count=100", gdtID)
	onlyPage(t, p, "DiagnosticReport?issued=2026-03-10&_count=100", labID)
	onlyPage(t, p, "DiagnosticReport?status=preliminary,corrected")
	onlyPage(t, p, "Observation?date=2026-03-10T09:15:00%2B01:00&_count=100", tests...)
	labOnly := practice{s: s, company: p.company, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, "lab-results:read"))}
	if got := readBundle(t, labOnly.fhir(t, "DiagnosticReport?_count=100")); !slices.Equal(got.ids["match"], []string{labID}) || got.next != "" {
		t.Errorf("a grant without files:read: %v (next %q), want the lab report only", got.ids, got.next)
	}
	outcome(t, "a GDT result without files:read", labOnly.fhir(t, "DiagnosticReport/"+gdtID), http.StatusNotFound, "not-found")
	_, exported := p.exported(t, p.kickOff(t, "$export?_type=DiagnosticReport,Observation"))
	if got := idsOf(exported["DiagnosticReport"]); !slices.Equal(got, sortedOf(labID, gdtID)) {
		t.Errorf("exported reports %v", got)
	}
	if got := idsOf(exported["Observation"]); !slices.Equal(got, sortedOf(append(labRows, tests...)...)) {
		t.Errorf("exported observations %v", got)
	}
}

func sortedOf(ids ...string) []string { slices.Sort(ids); return ids }
