// Holds docs/contract.md §4 The resource API: versions and conditional writes.

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
)

// Versions, conditional writes and reads, and reads by id (docs/contract.md
// §4, "Versions"), on both backends.

// versionOf is an answer's version, checked against its ETag.
func versionOf(t *testing.T, r reply) int64 {
	t.Helper()
	v, ok := r.decode(t)["version"].(float64)
	if !ok || r.header.Get("ETag") != fmt.Sprintf(`"%d"`, int64(v)) {
		t.Fatalf("%d: version %v, ETag %q: %s", r.status, r.decode(t)["version"], r.header.Get("ETag"), r.body)
	}
	return int64(v)
}

// TestTwoWritersOneVersion: two integrators read the same customer and
// both write with the version they read: one wins, the other is told 412
// with the current version, and the stored object is the first write.
func TestTwoWritersOneVersion(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		billing := "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, ""))
		booking := "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, ""))
		path := resource + fmt.Sprintf("customers/%d", p.customer)

		read := s.request(t, http.MethodGet, path, "", "", billing)
		if read.status != http.StatusOK || versionOf(t, read) != 1 {
			t.Fatalf("read: %d %s", read.status, read.body)
		}
		etag := read.header.Get("ETag")
		first := s.request(t, http.MethodPatch, path, "application/merge-patch+json", `{"phone":"+4315551234"}`, billing, "If-Match: "+etag)
		if first.status != http.StatusOK || versionOf(t, first) != 2 {
			t.Fatalf("the first writer: %d %s", first.status, first.body)
		}
		second := s.request(t, http.MethodPatch, path, "application/merge-patch+json", `{"phone":"+4315559999"}`, booking, "If-Match: "+etag)
		if second.status != http.StatusPreconditionFailed || second.header.Get("ETag") != `"2"` ||
			second.decode(t)["type"] != "version-mismatch" || second.decode(t)["current_version"] != float64(2) {
			t.Errorf("the second writer: %d %s (ETag %q)", second.status, second.body, second.header.Get("ETag"))
		}
		now := s.request(t, http.MethodGet, path, "", "", booking)
		if now.decode(t)["phone"] != "+4315551234" || versionOf(t, now) != 2 {
			t.Errorf("stored after the race: %s", now.body)
		}

		// If-None-Match: 304 without a body while current, 200 after a change.
		same := s.request(t, http.MethodGet, path, "", "", booking, `If-None-Match: "2"`)
		if same.status != http.StatusNotModified || len(same.body) != 0 || same.header.Get("ETag") != `"2"` {
			t.Errorf("If-None-Match of the current version: %d %q", same.status, same.body)
		}
		if r := s.request(t, http.MethodGet, path, "", "", booking, `If-None-Match: W/"2", "7"`); r.status != http.StatusNotModified {
			t.Errorf("a weak tag of the current version among others: %d", r.status)
		}
		if r := s.request(t, http.MethodPatch, path, "application/json", `{"title":"Mag."}`, billing); r.status != http.StatusOK {
			t.Fatalf("a write without If-Match: %d %s", r.status, r.body) // unsafe between writers, still accepted
		}
		if r := s.request(t, http.MethodGet, path, "", "", booking, `If-None-Match: "2"`); r.status != http.StatusOK || versionOf(t, r) != 3 {
			t.Errorf("If-None-Match of an old version: %d %s", r.status, r.body)
		}

		// Another company's object stays 404, whatever its condition says.
		other := newPractice(t, s)
		if r := s.request(t, http.MethodPatch, path, "application/json", `{"title":"X"}`, other.auth, `If-Match: "3"`); r.status != http.StatusNotFound {
			t.Errorf("another company's PATCH with its version: %d %s", r.status, r.body)
		}
		if r := s.request(t, http.MethodGet, path, "", "", other.auth, `If-None-Match: "3"`); r.status != http.StatusNotFound {
			t.Errorf("another company's conditional read: %d %s", r.status, r.body)
		}
		// Malformed conditions are the request's fault: 422 naming the header, nothing written.
		for _, bad := range []string{`3`, `"three"`, `W/"3"`, `"0"`, `"3`} {
			r := s.request(t, http.MethodPatch, path, "application/json", `{"title":"Y"}`, billing, "If-Match: "+bad)
			if r.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, r), "If-Match") {
				t.Errorf("If-Match %s: %d %s", bad, r.status, r.body)
			}
		}
		if r := s.request(t, http.MethodGet, path, "", "", billing, `If-None-Match: 3`); r.status != http.StatusUnprocessableEntity {
			t.Errorf("If-None-Match 3: %d %s", r.status, r.body)
		}
		if r := s.request(t, http.MethodGet, path, "", "", billing); versionOf(t, r) != 3 {
			t.Errorf("refused conditions wrote: %s", r.body)
		}
	})
}

// TestConcurrentConditionalPatches: 50 PATCHes of one version at once;
// exactly one wins, the 49 others are 412, and the version moved by one.
func TestConcurrentConditionalPatches(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p := newPractice(t, s)
		path := resource + fmt.Sprintf("customers/%d", p.customer)
		for round := int64(1); round <= 2; round++ {
			var mu sync.Mutex
			statuses := map[int]int{}
			var wg sync.WaitGroup
			for i := range 50 {
				wg.Go(func() {
					r := s.request(t, http.MethodPatch, path, "application/json", fmt.Sprintf(`{"phone":"+43155500%02d"}`, i), p.auth,
						fmt.Sprintf(`If-Match: "%d"`, round))
					mu.Lock()
					statuses[r.status]++
					mu.Unlock()
				})
			}
			wg.Wait()
			if statuses[http.StatusOK] != 1 || statuses[http.StatusPreconditionFailed] != 49 {
				t.Errorf("round %d: %v, want one 200 and 49 412", round, statuses)
			}
			if r := p.get(t, fmt.Sprintf("customers/%d", p.customer)); versionOf(t, r) != round+1 {
				t.Errorf("after round %d: %s", round, r.body)
			}
		}
	})
}

// TestRetriedConditionalWrites: a client that lost the answer to its own
// conditional write and retries it with its Idempotency-Key is told its
// first answer, not a 412; the same key with another condition is refused.
// Cancel and the webhook endpoints' PATCH and DELETE take the same rules.
func TestRetriedConditionalWrites(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		key, _ := webhook.NewKey()
		s := startServer(t, b, "PRAXIS_WEBHOOK_KEY="+key)
		p := newPractice(t, s)
		path := resource + fmt.Sprintf("customers/%d", p.customer)
		idem := "Idempotency-Key: " + uuid.NewString()
		first := s.request(t, http.MethodPatch, path, "application/json", `{"title":"Dr."}`, p.auth, `If-Match: "1"`, idem)
		retry := s.request(t, http.MethodPatch, path, "application/json", `{"title":"Dr."}`, p.auth, `If-Match: "1"`, idem)
		if first.status != http.StatusOK || retry.status != http.StatusOK || retry.header.Get("Idempotent-Replayed") != "true" ||
			string(retry.body) != string(first.body) || retry.header.Get("ETag") != `"2"` {
			t.Errorf("a retried PATCH: %d, then %d %q %s", first.status, retry.status, retry.header.Get("Idempotent-Replayed"), retry.body)
		}
		if r := s.request(t, http.MethodPatch, path, "application/json", `{"title":"Dr."}`, p.auth, `If-Match: "2"`, idem); r.status != http.StatusUnprocessableEntity ||
			r.decode(t)["type"] != "idempotency-key-reused" {
			t.Errorf("the key with another If-Match: %d %s", r.status, r.body)
		}
		if r := p.get(t, fmt.Sprintf("customers/%d", p.customer)); versionOf(t, r) != 2 {
			t.Errorf("the retry wrote again: %s", r.body)
		}

		// Cancel: a stale version is refused and leaves the appointment booked.
		appt := p.post(t, "appointments", p.example(domain.AppointmentsKind(), ""))
		if appt.status != http.StatusCreated || versionOf(t, appt) != 1 {
			t.Fatalf("appointment: %d %s", appt.status, appt.body)
		}
		id := appt.decode(t)["id"].(string)
		moved := s.request(t, http.MethodPatch, resource+"appointments/"+id, "application/json", `{"note":"moved"}`, p.auth, `If-Match: "1"`)
		if moved.status != http.StatusOK || versionOf(t, moved) != 2 {
			t.Fatalf("appointment patch: %d %s", moved.status, moved.body)
		}
		cancel := func(etag string, headers ...string) reply {
			return s.request(t, http.MethodPost, resource+"appointments/"+id+"/cancel", "application/json", `{"reason":"customer_request"}`,
				append(headers, p.auth, "If-Match: "+etag)...)
		}
		if r := cancel(`"1"`); r.status != http.StatusPreconditionFailed {
			t.Errorf("cancel of a stale version: %d %s", r.status, r.body)
		}
		cancelKey := "Idempotency-Key: " + uuid.NewString()
		if r := cancel(`"2"`, cancelKey); r.status != http.StatusOK || r.decode(t)["status"] != "cancelled" || versionOf(t, r) != 3 {
			t.Errorf("cancel of the current version: %d %s", r.status, r.body)
		}
		if r := cancel(`"2"`, cancelKey); r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a retried cancel: %d %s", r.status, r.body)
		}

		// Webhook endpoints: PATCH and DELETE name the version they read.
		hooks := "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, everyScope()))
		created := s.request(t, http.MethodPost, endpointsPath, "application/json", `{"url":"https://integrator.example/hook","event_types":["*"]}`, hooks)
		if created.status != http.StatusCreated || created.decode(t)["version"] != float64(1) {
			t.Fatalf("endpoint: %d %s", created.status, created.body)
		}
		ep := endpointsPath + "/" + created.decode(t)["id"].(string)
		if r := s.request(t, http.MethodGet, ep, "", "", hooks, `If-None-Match: "1"`); r.status != http.StatusNotModified {
			t.Errorf("endpoint If-None-Match: %d %s", r.status, r.body)
		}
		changed := s.request(t, http.MethodPatch, ep, "application/json", `{"description":"billing"}`, hooks, `If-Match: "1"`)
		if changed.status != http.StatusOK || versionOf(t, changed) != 2 {
			t.Fatalf("endpoint patch: %d %s", changed.status, changed.body)
		}
		if r := s.request(t, http.MethodDelete, ep, "", "", hooks, `If-Match: "1"`); r.status != http.StatusPreconditionFailed ||
			r.decode(t)["current_version"] != float64(2) {
			t.Errorf("endpoint delete of a stale version: %d %s", r.status, r.body)
		}
		delKey := "Idempotency-Key: " + uuid.NewString()
		for i, want := range []string{"", "true"} {
			r := s.request(t, http.MethodDelete, ep, "", "", hooks, `If-Match: "2"`, delKey)
			if r.status != http.StatusNoContent || r.header.Get("Idempotent-Replayed") != want {
				t.Errorf("endpoint delete %d: %d %q %s", i, r.status, r.header.Get("Idempotent-Replayed"), r.body)
			}
		}
		if r := s.request(t, http.MethodGet, ep, "", "", hooks); r.status != http.StatusNotFound {
			t.Errorf("the deleted endpoint: %d", r.status)
		}
	})
}

// TestReadByIDs: ?ids= answers the objects asked for in the order asked
// and the others as not found, another company's among them; tombstones
// only with include_deleted; include=customer answers the customers once;
// bad input is 422 naming the parameter.
func TestReadByIDs(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		p, other := newPractice(t, s), newPractice(t, s)
		var notes []string
		for i := range 3 {
			r := p.post(t, "notes", fmt.Sprintf(`{"customer_id":%d,"text":"note %d"}`, p.customer, i))
			if r.status != http.StatusCreated {
				t.Fatalf("note: %d %s", r.status, r.body)
			}
			notes = append(notes, r.decode(t)["id"].(string))
		}
		theirs := other.post(t, "notes", fmt.Sprintf(`{"customer_id":%d,"text":"theirs"}`, other.customer)).decode(t)["id"].(string)
		missing := domain.NewObjectID()
		ids := strings.Join([]string{notes[2], missing, theirs, notes[0], notes[2]}, ",")
		r := p.get(t, "notes?ids="+ids)
		var batch struct {
			Data      []map[string]any `json:"data"`
			NotFound  []string         `json:"not_found"`
			Customers []map[string]any `json:"customers"`
		}
		if err := json.Unmarshal(r.body, &batch); err != nil || r.status != http.StatusOK {
			t.Fatalf("ids=: %d %s", r.status, r.body)
		}
		if len(batch.Data) != 2 || batch.Data[0]["id"] != notes[2] || batch.Data[1]["id"] != notes[0] ||
			strings.Join(batch.NotFound, ",") != missing+","+theirs || batch.Customers != nil {
			t.Errorf("ids=: %s", r.body)
		}
		with := p.get(t, "notes?include=customer&ids="+notes[1]+","+notes[0])
		if err := json.Unmarshal(with.body, &batch); err != nil || len(batch.Customers) != 1 || batch.Customers[0]["id"] != float64(p.customer) ||
			batch.Customers[0]["version"] != float64(1) {
			t.Errorf("include=customer: %d %s", with.status, with.body)
		}
		p.listed(t, "notes?limit=500", notes[2]) // on PostgreSQL the feed lists a write once no older transaction is open
		page := p.get(t, "notes?include=customer&limit=2")
		if err := json.Unmarshal(page.body, &batch); err != nil || len(batch.Data) != 2 || len(batch.Customers) != 1 {
			t.Errorf("a page with include=customer: %d %s", page.status, page.body)
		}
		customers := p.get(t, fmt.Sprintf("customers?ids=%d,%d,99999", p.customer, other.customer))
		if err := json.Unmarshal(customers.body, &batch); err != nil || len(batch.Data) != 1 || len(batch.NotFound) != 2 {
			t.Errorf("customers by id: %d %s", customers.status, customers.body)
		}

		// Files, a bespoke section, read by id alike.
		up := s.upload(t, "/api/gdt/upload", gdtHeaders(p.company, p.customer), filePart("befund.pdf", pdfOfSize(1000)))
		theirFile := s.upload(t, "/api/gdt/upload", gdtHeaders(other.company, other.customer), filePart("befund.pdf", pdfOfSize(1000)))
		if up.status != http.StatusOK || theirFile.status != http.StatusOK {
			t.Fatalf("uploads: %d, %d", up.status, theirFile.status)
		}
		files := p.get(t, "files?ids="+theirFile.Files[0].ID+","+up.Files[0].ID)
		if err := json.Unmarshal(files.body, &batch); err != nil || len(batch.Data) != 1 || batch.Data[0]["id"] != up.Files[0].ID ||
			batch.Data[0]["version"] != float64(1) || len(batch.NotFound) != 1 || batch.NotFound[0] != theirFile.Files[0].ID {
			t.Errorf("files by id: %d %s", files.status, files.body)
		}
		if r := p.get(t, "files?ids="+up.Files[0].ID+"&limit=3"); r.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, r), "limit") {
			t.Errorf("files by id with a page's parameter: %d %s", r.status, r.body)
		}

		// Tombstones only with include_deleted: an import deletes a note.
		s.praxis(t, nil, "admin", "import", "--company", p.company.ID, writeLines(t, `{"section":"notes","id":"`+notes[1]+`","deleted":true}`))
		if r := p.get(t, "notes?ids="+notes[1]); !strings.Contains(string(r.body), `"not_found":["`+notes[1]+`"]`) {
			t.Errorf("a deleted note without include_deleted: %s", r.body)
		}
		if r := p.get(t, "notes?include_deleted=true&ids="+notes[1]); !strings.Contains(string(r.body), `"deleted":true`) {
			t.Errorf("a deleted note with include_deleted: %s", r.body)
		}

		// Without customers:read, include=customer is 403 like any missing scope.
		narrow := "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, p.company, "notes:read"))
		if r := s.request(t, http.MethodGet, resource+"notes?include=customer&ids="+notes[0], "", "", narrow); r.status != http.StatusForbidden {
			t.Errorf("include=customer without customers:read: %d %s", r.status, r.body)
		}
		if r := s.request(t, http.MethodGet, resource+"notes?ids="+notes[0], "", "", narrow); r.status != http.StatusOK {
			t.Errorf("ids= with notes:read: %d %s", r.status, r.body)
		}

		hundredOne := strings.TrimSuffix(strings.Repeat(notes[0]+",", 101), ",")
		for query, field := range map[string]string{
			"notes?ids=" + notes[0] + "&limit=10":                           "limit",
			"notes?ids=" + notes[0] + "&cursor=abc":                         "cursor",
			"notes?ids=" + notes[0] + "&updated_since=2026-01-01T00:00:00Z": "updated_since",
			"notes?ids=" + hundredOne:                                       "ids",
			"notes?ids=" + notes[0] + ",7":                                  "ids[1]",
			"notes?ids=":                                                    "ids[0]",
			"customers?ids=" + notes[0]:                                     "ids[0]",
			"customers?include=customer":                                    "include",
			"notes?include=patient":                                         "include",
			"notes?ids=" + notes[0] + "&ids=" + notes[1]:                    "ids",
		} {
			if r := p.get(t, query); r.status != http.StatusUnprocessableEntity || !contains(fieldsOf(t, r), field) {
				t.Errorf("GET %s: %d %s, want 422 naming %s", query, r.status, r.body, field)
			}
		}
	})
}

// TestIdempotencyKeysAcrossBuilds: an Idempotency-Key's first answer is
// kept as every build since the first kept it — the status, the location
// and the body as answered — so a rolling upgrade replays in both
// directions: the row this build saves is the answer it sent, byte for
// byte (what an earlier build replays), and a row as an earlier build saved
// it is replayed by another replica of this one as saved, not as the object
// now stands. Creates, a PATCH, a cancel, a match, and the webhook
// endpoints' PATCH and DELETE (no content).
func TestIdempotencyKeysAcrossBuilds(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		key, _ := webhook.NewKey()
		s := startServer(t, b, "PRAXIS_WEBHOOK_KEY="+key)
		p := newPractice(t, s)
		// The clients' tokens are asked of each process: the embedded
		// token store is the process's own.
		records, webhooks := s.newClient(t, p.company, sectionScopes()), s.newClient(t, p.company, everyScope())
		p.auth = "Authorization: Bearer " + s.tokenFor(t, records)
		hooks := "Authorization: Bearer " + s.tokenFor(t, webhooks)
		endpoint := s.request(t, http.MethodPost, endpointsPath, "application/json", `{"url":"https://integrator.example/hook","event_types":["*"]}`, hooks)
		if endpoint.status != http.StatusCreated {
			t.Fatalf("endpoint: %d %s", endpoint.status, endpoint.body)
		}
		ep := endpointsPath + "/" + endpoint.decode(t)["id"].(string)
		appointment := p.post(t, "appointments", p.example(domain.AppointmentsKind(), ""))
		if appointment.status != http.StatusCreated {
			t.Fatalf("appointment: %d %s", appointment.status, appointment.body)
		}
		customer := fmt.Sprintf("customers/%d", p.customer)
		type write struct {
			name, method, path, body string
			client                   oauthClient
			ifMatch                  string
			// was and then turn the first answer into one an earlier build
			// saved while the object stood otherwise ("" for no content).
			was, then string
		}
		writes := []write{
			{"customer", http.MethodPost, resource + "customers", `{"first_name":"Maria","last_name":"Ueberreiter","birth_date":"1975-03-01"}`, records, "", "Ueberreiter", "Überreiter"},
			{"device order", http.MethodPost, resource + "device-orders", p.example(domain.KindOf("device-orders"), ""), records, "", `"status":"open"`, `"status":"cancelled"`},
			{"patch", http.MethodPatch, resource + customer, `{"title":"Dr."}`, records, `"1"`, `"Dr."`, `"Mag."`},
			{"cancel", http.MethodPost, resource + "appointments/" + appointment.decode(t)["id"].(string) + "/cancel", `{"reason":"customer_request"}`, records, `"1"`, "customer_request", "practice_request"},
			{"match", http.MethodPost, resource + "customers/match", `{"customer":{"last_name":"Berger","birth_date":"1980-02-29"}}`, records, "", `"Berger"`, `"Bergér"`},
			{"endpoint patch", http.MethodPatch, ep, `{"description":"billing"}`, webhooks, `"1"`, "billing", "accounts"},
			{"endpoint delete", http.MethodDelete, ep, "", webhooks, `"2"`, "", ""},
		}
		db := s.openDB(t)
		defer db.Close()
		replica := s.replica(t)
		tokens := map[*server]map[string]string{s: {}, replica: {}}
		for _, w := range writes {
			idem := "Idempotency-Key: " + uuid.NewString()
			headersAt := func(at *server) []string {
				token, ok := tokens[at][w.client.ID]
				if !ok {
					token = at.tokenFor(t, w.client)
					tokens[at][w.client.ID] = token
				}
				headers := []string{"Authorization: Bearer " + token, idem}
				if w.ifMatch != "" {
					headers = append(headers, "If-Match: "+w.ifMatch)
				}
				return headers
			}
			contentType := "application/json"
			if w.body == "" {
				contentType = ""
			}
			first := s.request(t, w.method, w.path, contentType, w.body, headersAt(s)...)
			if first.status >= 300 {
				t.Fatalf("%s: %d %s", w.name, first.status, first.body)
			}
			var row struct {
				Status   int    `bun:"status"`
				Location string `bun:"location"`
				Body     []byte `bun:"body"`
			}
			k := strings.TrimPrefix(idem, "Idempotency-Key: ")
			if err := db.NewSelect().Table("idempotency_keys").Column("status", "location", "body").Where("key = ?", k).Scan(context.Background(), &row); err != nil {
				t.Fatalf("%s: the key's row: %v", w.name, err)
			}
			location := ""
			if first.status == http.StatusCreated {
				location = strings.TrimPrefix(first.header.Get("Location"), resource)
			}
			if row.Status != first.status || string(row.Body) != string(first.body) || (first.status == http.StatusCreated && row.Location != location) {
				t.Errorf("%s: saved %d %q %s, answered %d %q %s", w.name, row.Status, row.Location, row.Body, first.status, location, first.body)
			}
			earlier := row.Body
			if w.was != "" {
				if !strings.Contains(string(row.Body), w.was) {
					t.Fatalf("%s: the answer has no %s: %s", w.name, w.was, row.Body)
				}
				earlier = []byte(strings.Replace(string(row.Body), w.was, w.then, 1))
				if _, err := db.NewUpdate().Table("idempotency_keys").Set("body = ?", earlier).Where("key = ?", k).Exec(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			again := replica.request(t, w.method, w.path, contentType, w.body, headersAt(replica)...)
			if again.status != first.status || string(again.body) != string(earlier) || again.header.Get("Idempotent-Replayed") != "true" ||
				again.header.Get("Location") != first.header.Get("Location") || again.header.Get("ETag") != first.header.Get("ETag") {
				t.Errorf("%s: replayed %d %q %q %q %s, want %d %q %q %s", w.name, again.status, again.header.Get("Idempotent-Replayed"),
					again.header.Get("Location"), again.header.Get("ETag"), again.body, first.status, first.header.Get("Location"), first.header.Get("ETag"), earlier)
			}
		}
	})
}
