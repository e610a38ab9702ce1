// Holds docs/contract.md §15 The FHIR door: Bulk Data export.

package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// manifest is a completed export's status answer.
type manifest struct {
	TransactionTime     string `json:"transactionTime"`
	Request             string `json:"request"`
	RequiresAccessToken bool   `json:"requiresAccessToken"`
	Output              []struct {
		Type  string `json:"type"`
		URL   string `json:"url"`
		Count int    `json:"count"`
	} `json:"output"`
	Error []any `json:"error"`
}

// kickOff starts an export and answers its status URL.
func (p practice) kickOff(t *testing.T, query string) string {
	t.Helper()
	r := p.fhir(t, query, "Prefer: respond-async", "Accept: application/fhir+json")
	loc := r.header.Get("Content-Location")
	if r.status != http.StatusAccepted || !strings.HasPrefix(loc, p.s.url+fhirBase+"$export-status/") {
		t.Fatalf("kick-off %s: %d %s (Content-Location %q)", query, r.status, r.body, loc)
	}
	return strings.TrimPrefix(loc, p.s.url)
}

// exported polls an export to its end and answers its manifest and the
// resources of its files by type.
func (p practice) exported(t *testing.T, status string) (manifest, map[string][]map[string]any) {
	t.Helper()
	var r reply
	eventually(t, 30*time.Second, "the export "+status+" completes", func() bool {
		r = p.s.requestUndocumented(t, http.MethodGet, status, "", "", p.auth)
		if r.status == http.StatusAccepted && (r.header.Get("X-Progress") == "" || r.header.Get("Retry-After") == "") {
			t.Errorf("in progress without X-Progress and Retry-After: %v", r.header)
		}
		return r.status != http.StatusAccepted
	})
	var m manifest
	if r.status != http.StatusOK || json.Unmarshal(r.body, &m) != nil || !m.RequiresAccessToken || r.header.Get("Expires") == "" {
		t.Fatalf("the manifest: %d %s", r.status, r.body)
	}
	got := map[string][]map[string]any{}
	for _, o := range m.Output {
		file := strings.TrimPrefix(o.URL, p.s.url)
		if anon := p.s.requestUndocumented(t, http.MethodGet, file, "", ""); anon.status != http.StatusUnauthorized {
			t.Errorf("a file without the token: %d", anon.status)
		}
		f := p.s.requestUndocumented(t, http.MethodGet, file, "", "", p.auth)
		if f.status != http.StatusOK || f.header.Get("Content-Type") != "application/fhir+ndjson" {
			t.Fatalf("file %s: %d %s %s", file, f.status, f.header.Get("Content-Type"), f.body)
		}
		lines := 0
		sc := bufio.NewScanner(bytes.NewReader(f.body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var res map[string]any
			if err := json.Unmarshal(sc.Bytes(), &res); err != nil || res["resourceType"] != o.Type {
				t.Fatalf("a line of the %s file: %s", o.Type, sc.Bytes())
			}
			got[o.Type] = append(got[o.Type], res)
			lines++
		}
		if lines != o.Count {
			t.Errorf("%s: %d lines, the manifest counts %d", o.Type, lines, o.Count)
		}
	}
	return m, got
}

func idsOf(resources []map[string]any) []string {
	var ids []string
	for _, r := range resources {
		ids = append(ids, r["id"].(string))
	}
	slices.Sort(ids)
	return ids
}

// TestFHIRBulkExport: an export is one consistent state of the practice
// in NDJSON files behind the token; an export _since the first one's
// transactionTime holds exactly what changed after it; Patient/$export
// keeps to the compartment; a deleted export is gone; another client sees
// none of it; each file's audit event names the patients it holds; bad
// kick-offs are OperationOutcomes.
func TestFHIRBulkExport(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		var patients []string
		for i := range 3 {
			r := p.post(t, "customers", fmt.Sprintf(`{"first_name":"Eva%d","last_name":"Export","birth_date":"1970-01-0%d"}`, i, i+1))
			if r.status != http.StatusCreated {
				t.Fatalf("customer: %d %s", r.status, r.body)
			}
			patients = append(patients, fmt.Sprint(int64(r.decode(t)["id"].(float64))))
		}
		patients = append(patients, fmt.Sprint(p.customer))
		slices.Sort(patients)
		m := p.post(t, "measurements", fmt.Sprintf(`{"customer_id":%s,"measured_at":"2026-03-01T09:00:00Z","type":"weight","name":null,"loinc_code":"29463-7","value":"72.5","unit":"kg","components":[],"source":"manual","note":null}`, patients[0]))
		if m.status != http.StatusCreated {
			t.Fatalf("measurement: %d %s", m.status, m.body)
		}
		p.fhirListed(t, "Observation?_count=500", m.decode(t)["id"].(string))

		for _, bad := range []struct{ query, header, why string }{
			{"$export?_type=Patient", "", "without Prefer: respond-async"},
			{"$export?_type=Patient,Gizmo", "Prefer: respond-async", "an unknown type"},
			{"$export?_typeFilter=Patient%3Fgender%3Dfemale", "Prefer: respond-async", "a parameter not served"},
			{"$export?_since=yesterday", "Prefer: respond-async", "a malformed _since"},
			{"$export?_outputFormat=text/csv", "Prefer: respond-async", "another format"},
			{"Patient/$export?_type=Practitioner", "Prefer: respond-async", "a type outside the compartment"},
		} {
			var headers []string
			if bad.header != "" {
				headers = append(headers, bad.header)
			}
			outcome(t, bad.why, p.fhir(t, bad.query, headers...), http.StatusBadRequest, "invalid")
		}
		narrow := practice{s: s, company: p.company, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, "customers:read"))}
		outcome(t, "a type the grant may not read", narrow.fhir(t, "$export?_type=Observation", "Prefer: respond-async"), http.StatusForbidden, "forbidden")

		status := p.kickOff(t, "$export?_type=Patient,Observation,Practitioner")
		first, got := p.exported(t, status)
		if !slices.Equal(idsOf(got["Patient"]), patients) || len(got["Observation"]) != 1 || len(got["Practitioner"]) != 1 {
			t.Fatalf("the first export: patients %v (want %v), %d observations, %d practitioners",
				idsOf(got["Patient"]), patients, len(got["Observation"]), len(got["Practitioner"]))
		}
		if !strings.HasSuffix(first.Request, "/fhir/R4/$export?_type=Patient,Observation,Practitioner") {
			t.Errorf("the manifest's request: %q", first.Request)
		}

		// Another client of the company, and another company, see nothing of it.
		other := practice{s: s, company: p.company, auth: "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, sectionScopes()))}
		stranger := newPractice(t, s)
		for _, q := range []practice{other, stranger} {
			outcome(t, "another client's status", q.fhir(t, strings.TrimPrefix(status, fhirBase)), http.StatusNotFound, "not-found")
			outcome(t, "another client's file", q.fhir(t, strings.TrimPrefix(strings.TrimPrefix(first.Output[0].URL, s.url), fhirBase)), http.StatusNotFound, "not-found")
		}

		// One change after the first export: the next, _since its
		// transactionTime, holds exactly it.
		changed := patients[1]
		if r := p.s.requestUndocumented(t, http.MethodPatch, resource+"customers/"+changed, "application/merge-patch+json", `{"phone":"+4315550199"}`, p.auth); r.status != http.StatusOK {
			t.Fatalf("patch: %d %s", r.status, r.body)
		}
		p.fhirListed(t, "Patient?_lastUpdated=ge"+url.QueryEscape(first.TransactionTime[:len("2006-01-02T15:04:05")]+"Z"), changed)
		_, since := p.exported(t, p.kickOff(t, "$export?_type=Patient,Observation&_since="+url.QueryEscape(first.TransactionTime)))
		if !slices.Equal(idsOf(since["Patient"]), []string{changed}) || len(since["Observation"]) != 0 {
			t.Errorf("the export since the first: %v", since)
		}

		// The patient compartment: every type with a patient, no master data.
		_, compartment := p.exported(t, p.kickOff(t, "Patient/$export"))
		if len(compartment["Patient"]) != len(patients) || len(compartment["Observation"]) != 1 || len(compartment["Practitioner"]) != 0 || len(compartment["Organization"]) != 0 {
			t.Errorf("Patient/$export: %v", compartment)
		}

		// Each file's event names the patients it holds: "who accessed
		// patient X" finds the export.
		auditor := s.tokenFor(t, s.newClient(t, p.company, "audit:read"))
		events, _ := s.auditEvents(t, auditor, "&customer_id="+patients[2])
		found := false
		for _, e := range events {
			found = found || (e.Action == "fhir-export" && strings.HasPrefix(e.Object, strings.TrimPrefix(status, fhirBase+"$export-status/")+"/"))
		}
		if !found {
			t.Errorf("no fhir-export event of the first export names patient %s: %+v", patients[2], events)
		}

		// Deleted: its status and files are gone.
		if r := p.s.requestUndocumented(t, http.MethodDelete, status, "", "", p.auth); r.status != http.StatusAccepted {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		outcome(t, "a deleted export's status", p.fhir(t, strings.TrimPrefix(status, fhirBase)), http.StatusNotFound, "not-found")
		outcome(t, "a deleted export's file", p.fhir(t, strings.TrimPrefix(strings.TrimPrefix(first.Output[0].URL, s.url), fhirBase)), http.StatusNotFound, "not-found")
		outcome(t, "a status that is no uuid", p.fhir(t, "$export-status/nope"), http.StatusNotFound, "not-found")
	})
}

// TestFHIRExportOutlivesItsReplica: the job is in the database and its
// files in the blob store. The replica that took the kick-off is killed
// at once (SIGKILL: whatever it held, PostgreSQL rolls back); the other
// one answers the status, runs the job once the dead one's lease has run
// out (or takes it up before it was claimed) and serves the files; a
// replica started afterwards serves the same manifest and files.
//
// (A replica frozen inside a transaction — SIGSTOP — would keep the job's
// row locked, and the others skip a locked job until it wakes: the test
// once did that, and the job waited for the frozen replica.)
func TestFHIRExportOutlivesItsReplica(t *testing.T) {
	t.Parallel()
	a := startServer(t, backends[1], "PRAXIS_EXPORT_LEASE=2s")
	b := a.replica(t)
	p := newPractice(t, a)
	var want []string
	for i := range 30 {
		r := p.post(t, "customers", fmt.Sprintf(`{"first_name":"Replica%d","last_name":"Export","birth_date":"1990-01-01"}`, i))
		if r.status != http.StatusCreated {
			t.Fatalf("customer: %d %s", r.status, r.body)
		}
		want = append(want, fmt.Sprint(int64(r.decode(t)["id"].(float64))))
	}
	// The export holds what the feed holds at kick-off: wait for the last write.
	p.fhirListed(t, "Patient?_count=500", want[len(want)-1])
	want = append(want, fmt.Sprint(p.customer))
	slices.Sort(want)

	status := p.kickOff(t, "$export?_type=Patient")
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	onB := practice{s: b, company: p.company, auth: p.auth}
	m, got := onB.exported(t, status)
	if !slices.Equal(idsOf(got["Patient"]), want) {
		t.Fatalf("exported by the other replica: %v, want %v", idsOf(got["Patient"]), want)
	}
	// A replica started afterwards serves the same files, whole.
	c := b.replica(t)
	again, gotAgain := practice{s: c, company: p.company, auth: p.auth}.exported(t, status)
	if !slices.Equal(idsOf(gotAgain["Patient"]), want) || again.Output[0].URL != strings.Replace(m.Output[0].URL, b.url, c.url, 1) {
		t.Errorf("from a new replica: %v %v", again.Output, idsOf(gotAgain["Patient"]))
	}
}
