// Holds docs/contract.md §11 The audit trail.

package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
)

// auditEvent is an event as GET audit-events answers it.
type auditEvent struct {
	Agent struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"agent"`
	Source  struct{ Address string } `json:"source"`
	TraceID string                   `json:"trace_id"`
	Action  string                   `json:"action"`
	Section string                   `json:"section"`
	Object  string                   `json:"object_id"`
	Outcome struct {
		Status int    `json:"status"`
		Reason string `json:"reason"`
	} `json:"outcome"`
	Customers []int64 `json:"customer_ids"`
}

// auditEvents reads every event of the token's company after cursor.
func (s *server) auditEvents(t *testing.T, token, query string) ([]auditEvent, []byte) {
	t.Helper()
	var all []auditEvent
	var raw []byte
	cursor := ""
	for {
		r := s.request(t, http.MethodGet, "/api/oauth/v2/resource/audit-events?limit=500"+query+cursor, "", "", "Authorization: Bearer "+token)
		if r.status != http.StatusOK {
			t.Fatalf("audit-events: %d %s", r.status, r.body)
		}
		raw = append(raw, r.body...)
		var page struct {
			Data       []auditEvent `json:"data"`
			NextCursor string       `json:"next_cursor"`
			HasMore    bool         `json:"has_more"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Data...)
		if !page.HasMore {
			return all, raw
		}
		cursor = "&cursor=" + page.NextCursor
	}
}

// expectedAction is the action an event must name for a call, as
// docs/contract.md §11 lists them.
func expectedAction(method, path string) string {
	segs := strings.Split(strings.TrimPrefix(path, "/api/oauth/v2/resource/"), "/")
	switch {
	case strings.HasSuffix(path, "/upload") || (method == "POST" && path == "/api/oauth/v2/resource/files"):
		return "upload"
	case method == "POST" && path == "/api/oauth/v2/resource/customers/match":
		return "match" // names the candidates answered: none for a refusal
	case segs[0] == "booking" && method == "GET":
		return "list"
	case strings.HasSuffix(path, "/download"):
		return "download"
	case method == "GET" && (len(segs) == 2 || segs[0] == "company"):
		return "read"
	case method == "GET":
		return "list"
	case method == "POST" && len(segs) <= 2:
		return "create"
	case method == "DELETE":
		return "delete"
	}
	return "update"
}

// TestAuditTrail walks every operation of the document that reaches a
// company's data, with every right and with none: each call is exactly one
// event, with its action, section, status and customers. Then: audit:read
// is never a default scope; sixteen concurrent clients leave one event per
// answered request and an intact chain; export and verify; an audit store
// that cannot be written serves no patient data; no name reaches an event.
func TestAuditTrail(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, anna := withPatient(t, b, 1<<20)
		other := s.newCompany(t, 1<<20)
		theirs := s.newCustomer(t, other)
		all := s.newClient(t, c, "")
		full := s.tokenFor(t, all)
		auditor := s.tokenFor(t, s.newClient(t, c, "audit:read"))
		none := s.tokenFor(t, s.newClient(t, c, "company:read"))
		note := s.request(t, http.MethodPost, "/api/oauth/v2/resource/notes", "application/json",
			fmt.Sprintf(`{"customer_id":%d,"text":"Blutdruck gemessen."}`, anna), "Authorization: Bearer "+full).decode(t)["id"].(string)
		file := s.upload(t, "/api/gdt/upload", gdtHeaders(c, anna), filePart("befund.pdf", pdfOfSize(2000)))
		if file.status != http.StatusOK {
			t.Fatalf("upload: %d", file.status)
		}
		fileID := file.Files[0].ID
		before, _ := s.auditEvents(t, auditor, "")
		// The operator's patient (admin customer create), the note, the upload.
		if len(before) != 3 || before[0].Agent.Type != "operator" || before[0].Action != "create" || before[0].Section != "customers" ||
			before[0].Object != fmt.Sprint(anna) || before[0].Outcome.Status != 201 || before[0].Customers[0] != anna ||
			before[1].Action != "create" || before[1].Customers[0] != anna || before[2].Agent.Type != "device" {
			t.Fatalf("events before the walk: %+v", before)
		}

		// The walk: every operation under the resource prefix and the doors.
		type call struct {
			method, path string
			status       int
			customers    []int64
		}
		var calls []call
		paths := documentOf(t, s).doc["paths"].(map[string]any)
		var templates []string
		for p := range paths {
			if strings.HasPrefix(p, "/api/oauth/v2/resource/") || strings.HasSuffix(p, "/upload") {
				templates = append(templates, p)
			}
		}
		sort.Strings(templates)
		for _, token := range []string{full, none} {
			for _, p := range templates {
				var methods []string
				for m := range paths[p].(map[string]any) {
					if m != "parameters" {
						methods = append(methods, strings.ToUpper(m))
					}
				}
				sort.Strings(methods)
				for _, method := range methods {
					target := strings.ReplaceAll(p, "{id}", "019cd6df-a538-78f7-9da1-494c73cf256d")
					var want []int64
					switch {
					case p == "/api/oauth/v2/resource/customers/match":
					case strings.HasPrefix(p, "/api/oauth/v2/resource/customers/"):
						target = strings.ReplaceAll(p, "{id}", fmt.Sprint(anna))
						want = []int64{anna} // read, or refused: the company's own customer is named either way
					case p == "/api/oauth/v2/resource/notes/{id}":
						target = strings.ReplaceAll(p, "{id}", note)
						if token == full {
							want = []int64{anna}
						}
					case strings.HasPrefix(p, "/api/oauth/v2/resource/files/{id}"):
						target = strings.ReplaceAll(p, "{id}", fileID)
						if token == full {
							want = []int64{anna}
						}
					}
					var r reply
					if strings.HasSuffix(p, "/upload") {
						up := s.upload(t, p, gdtHeaders(c, theirs)) // no file, and another company's patient
						r = reply{status: up.status}
					} else {
						r = s.requestUndocumented(t, method, target, "application/json", "{}", "Authorization: Bearer "+token)
					}
					if token == full && method == "GET" && slices.Contains([]string{"customers", "notes", "files"}, strings.TrimPrefix(p, "/api/oauth/v2/resource/")) {
						want = pageCustomers(t, r.body) // a list names every customer on its page
					}
					calls = append(calls, call{method, p, r.status, want})
					if strings.HasSuffix(p, "/upload") {
						break // the doors take no token: once is enough
					}
				}
			}
			templates = slices.DeleteFunc(templates, func(p string) bool { return strings.HasSuffix(p, "/upload") })
		}
		events, raw := s.auditEvents(t, auditor, "")
		events = events[len(before)+1:] // after the first listing's own event
		if len(events) < len(calls) {
			t.Fatalf("%d calls, %d events", len(calls), len(events))
		}
		for i, cl := range calls {
			e := events[i]
			section := strings.Split(strings.TrimPrefix(cl.path, "/api/oauth/v2/resource/"), "/")[0]
			if strings.HasSuffix(cl.path, "/upload") {
				section = "files"
			}
			if e.Action != expectedAction(cl.method, cl.path) || e.Section != section || e.Outcome.Status != cl.status ||
				fmt.Sprint(e.Customers) != fmt.Sprint(orEmpty(cl.customers)) {
				t.Errorf("%s %s (%d): event %+v, want action %s, section %s, customers %v", cl.method, cl.path, cl.status, e,
					expectedAction(cl.method, cl.path), section, cl.customers)
			}
			if cl.status >= 400 && e.Outcome.Reason == "" {
				t.Errorf("%s %s: a refusal without its reason: %+v", cl.method, cl.path, e)
			}
			if e.Agent.Type == "client" && (e.Agent.Name != "Integrator" || e.Source.Address == "" || len(e.TraceID) != 32) {
				t.Errorf("%s %s: agent %+v, source %q, trace %q", cl.method, cl.path, e.Agent, e.Source.Address, e.TraceID)
			}
		}
		if bytes.Contains(raw, []byte("Anna")) || bytes.Contains(raw, []byte("Berger")) || bytes.Contains(raw, []byte("Blutdruck")) {
			t.Error("an event holds a name or clinical text")
		}
		// "Who accessed Anna's data?" — by customer.
		mine, _ := s.auditEvents(t, auditor, fmt.Sprintf("&customer_id=%d", anna))
		for _, e := range mine {
			if !slices.Contains(e.Customers, anna) {
				t.Errorf("customer_id=%d lists %+v", anna, e)
			}
		}
		if len(mine) < 6 {
			t.Errorf("customer_id=%d: %d events", anna, len(mine))
		}
		if r := s.request(t, http.MethodGet, "/api/oauth/v2/resource/audit-events", "", "", "Authorization: Bearer "+full); r.status != http.StatusForbidden {
			t.Errorf("a client made without --scopes reads the audit trail: %d", r.status)
		}

		// Sixteen concurrent clients: one event per answered request.
		var answered atomic.Int64
		var wg sync.WaitGroup
		mark, _ := s.auditEvents(t, auditor, "")
		for i := range 16 {
			wg.Go(func() {
				for j := range 5 {
					var r reply
					if (i+j)%2 == 0 {
						r = s.requestUndocumented(t, http.MethodGet, fmt.Sprintf("/api/oauth/v2/resource/customers/%d", anna), "", "", "Authorization: Bearer "+full)
					} else {
						r = s.requestUndocumented(t, http.MethodPost, "/api/oauth/v2/resource/notes", "application/json",
							fmt.Sprintf(`{"customer_id":%d,"text":"x"}`, anna), "Authorization: Bearer "+full)
					}
					if r.status == http.StatusOK || r.status == http.StatusCreated {
						answered.Add(1)
					}
				}
			})
		}
		wg.Wait()
		after, _ := s.auditEvents(t, auditor, "&agent="+all.ID)
		var successes int64
		for _, e := range after {
			if e.Outcome.Status < 300 {
				successes++
			}
		}
		if answered.Load() != 80 || successes-countSuccesses(mark, all.ID) != 80 {
			t.Errorf("80 requests, %d answered, %d new successful events", answered.Load(), successes-countSuccesses(mark, all.ID))
		}
		var verified struct {
			Checked int64 `json:"events_checked"`
			Intact  bool  `json:"intact"`
		}
		s.praxis(t, &verified, "admin", "audit", "verify", "--company", c.ID, "--json")
		if !verified.Intact || verified.Checked < int64(len(after)) {
			t.Errorf("verify: %+v", verified)
		}
		cmd := exec.Command(binary, "admin", "audit", "export", "--company", c.ID) //nolint:gosec // the built binary
		cmd.Env = s.env
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); lines++ {
			var fhir map[string]any
			if err := json.Unmarshal(sc.Bytes(), &fhir); err != nil || fhir["resourceType"] != "AuditEvent" {
				t.Fatalf("export line %d: %v %s", lines+1, err, sc.Bytes())
			}
		}
		if lines < len(after) {
			t.Errorf("export: %d lines, want at least %d", lines, len(after))
		}

		// Every group commit is measured: its events and its oldest one's wait.
		if m := s.requestUndocumented(t, http.MethodGet, "/metrics", "", ""); !bytes.Contains(m.body, []byte("praxis_audit_batch_events_count ")) ||
			!bytes.Contains(m.body, []byte("praxis_audit_batch_wait_seconds_count ")) {
			t.Error("the audit group commits are not measured (praxis_audit_batch_events, praxis_audit_batch_wait_seconds)")
		}

		// An audit store that cannot be written: no patient data is served.
		db := s.openDB(t)
		defer db.Close()
		if _, err := db.Exec("ALTER TABLE audit_blocks RENAME TO audit_blocks_away"); err != nil {
			t.Fatal(err)
		}
		r := s.requestUndocumented(t, http.MethodGet, fmt.Sprintf("/api/oauth/v2/resource/customers/%d", anna), "", "", "Authorization: Bearer "+full)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || bytes.Contains(r.body, []byte("Anna")) {
			t.Errorf("read with the audit store gone: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
		}
		if m := s.requestUndocumented(t, http.MethodGet, "/metrics", "", ""); !bytes.Contains(m.body, []byte("praxis_audit_write_failures_total 1")) {
			t.Error("the refused read is not counted in praxis_audit_write_failures_total")
		}
		w := s.requestUndocumented(t, http.MethodPost, "/api/oauth/v2/resource/notes", "application/json",
			fmt.Sprintf(`{"customer_id":%d,"text":"lost?"}`, anna), "Authorization: Bearer "+full)
		if w.status != http.StatusServiceUnavailable {
			t.Errorf("write with the audit store gone: %d %s", w.status, w.body)
		}
		if _, err := db.Exec("ALTER TABLE audit_blocks_away RENAME TO audit_blocks"); err != nil {
			t.Fatal(err)
		}
		var lost int
		if err := db.NewSelect().TableExpr("records").ColumnExpr("count(*)").Where("CAST(payload AS TEXT) LIKE ?", "%lost?%").Scan(t.Context(), &lost); err != nil || lost != 0 {
			t.Errorf("a write whose event could not be recorded was kept: %d, %v", lost, err)
		}
		s.praxis(t, &verified, "admin", "audit", "verify", "--company", c.ID, "--json")
		if !verified.Intact {
			t.Errorf("verify after the outage: %+v", verified)
		}
	})
}

// pageCustomers are the customers of a list page: each item's
// customer_id, or its id for the customers section.
func pageCustomers(t *testing.T, body []byte) []int64 {
	t.Helper()
	var page struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, item := range page.Data {
		id, ok := item["customer_id"].(float64)
		if !ok {
			id, _ = item["id"].(float64)
		}
		if id > 0 && !slices.Contains(ids, int64(id)) {
			ids = append(ids, int64(id))
		}
	}
	slices.Sort(ids)
	return ids
}

func orEmpty(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

func countSuccesses(events []auditEvent, agent string) int64 {
	var n int64
	for _, e := range events {
		if e.Agent.ID == agent && e.Outcome.Status < 300 {
			n++
		}
	}
	return n
}

// TestAuditSurvivesKill9: under a load of reads the server is killed with
// SIGKILL; after a restart, every request that was answered 200 has its
// event (found by the trace id the answer named).
func TestAuditSurvivesKill9(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, anna := withPatient(t, b, 1<<20)
		token := s.tokenFor(t, s.newClient(t, c, ""))
		var mu sync.Mutex
		var answered []string
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 8 {
			wg.Go(func() {
				client := &http.Client{Timeout: 5 * time.Second}
				for {
					select {
					case <-stop:
						return
					default:
					}
					req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/oauth/v2/resource/customers/%d", s.url, anna), nil)
					req.Header.Set("Authorization", "Bearer "+token)
					resp, err := client.Do(req)
					if err != nil {
						return // the server is gone
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						parts := strings.Split(resp.Header.Get("Traceparent"), "-")
						if len(parts) == 4 {
							mu.Lock()
							answered = append(answered, parts[1])
							mu.Unlock()
						}
					}
				}
			})
		}
		time.Sleep(400 * time.Millisecond)
		_ = s.cmd.Process.Kill()
		s.exited <- <-s.exited // gone; its cleanup finds it so
		close(stop)
		wg.Wait()
		r := s.replica(t)
		events, _ := r.auditEvents(t, r.tokenFor(t, r.newClient(t, c, "audit:read")), "")
		traces := map[string]bool{}
		for _, e := range events {
			traces[e.TraceID] = true
		}
		missing := 0
		for _, id := range answered {
			if !traces[id] {
				missing++
			}
		}
		t.Logf("%d reads answered 200 before the kill", len(answered))
		if len(answered) < 20 || missing > 0 {
			t.Errorf("%d reads answered 200 before the kill, %d of them without an event", len(answered), missing)
		}
		var verified struct {
			Intact bool `json:"intact"`
		}
		r.praxis(t, &verified, "admin", "audit", "verify", "--company", c.ID, "--json")
		if !verified.Intact {
			t.Error("the chain is broken after the kill")
		}
	})
}

// TestAuditCheckpointCatchesARewrittenChain: someone with the database's
// password edits an event and seals every later one again; the chain then
// verifies on its own, but not against the head verify reported before.
func TestAuditCheckpointCatchesARewrittenChain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s, c, anna := withPatient(t, b, 1<<20)
		token := s.tokenFor(t, s.newClient(t, c, ""))
		for range 3 {
			s.request(t, http.MethodGet, fmt.Sprintf("/api/oauth/v2/resource/customers/%d", anna), "", "", "Authorization: Bearer "+token)
		}
		var before struct {
			Head   string `json:"head"`
			Intact bool   `json:"intact"`
		}
		s.praxis(t, &before, "admin", "audit", "verify", "--company", c.ID, "--json")
		// The operator's creation of the patient, then the three reads.
		if !before.Intact || !strings.HasPrefix(before.Head, "4:") {
			t.Fatalf("verify: %+v", before)
		}
		// The rewrite: the first read names another address, and every event
		// from there is sealed again, the head moved along.
		db := s.openDB(t)
		defer db.Close()
		company, err := domain.ParseCompanyID(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		var blocks []struct {
			FirstSeq int64  `bun:"first_seq"`
			Events   []byte `bun:"events"`
		}
		if err := db.NewSelect().TableExpr("audit_blocks").Column("first_seq", "events").Where("company_id = ?", uuid.UUID(company)).
			OrderExpr("first_seq").Scan(t.Context(), &blocks); err != nil {
			t.Fatal(err)
		}
		link, rewritten := audit.Link{}, false
		for _, b := range blocks {
			var entries []struct {
				Hash  []byte          `json:"h"`
				Event json.RawMessage `json:"e"`
			}
			if err := json.Unmarshal(b.Events, &entries); err != nil {
				t.Fatal(err)
			}
			prev := link.Hash
			for k := range entries {
				if !rewritten && bytes.Contains(entries[k].Event, []byte("127.0.0.1")) {
					entries[k].Event, rewritten = bytes.Replace(entries[k].Event, []byte("127.0.0.1"), []byte("10.9.9.9"), 1), true
				}
				sealed := audit.Seal(company, link, entries[k].Event)
				entries[k].Hash, link = sealed.Hash, sealed.Link()
			}
			raw, err := json.Marshal(entries)
			if err != nil {
				t.Fatal(err)
			}
			if prev == nil {
				prev = []byte{}
			}
			if _, err := db.NewUpdate().TableExpr("audit_blocks").Set("events = ?", raw).Set("prev_hash = ?", prev).
				Where("company_id = ?", uuid.UUID(company)).Where("first_seq = ?", b.FirstSeq).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if !rewritten {
			t.Fatal("no event with the address to rewrite")
		}
		if _, err := db.NewUpdate().TableExpr("audit_heads").Set("hash = ?", link.Hash).Where("company_id = ?", uuid.UUID(company)).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		var after struct {
			Intact bool `json:"intact"`
		}
		s.praxis(t, &after, "admin", "audit", "verify", "--company", c.ID, "--json")
		if !after.Intact {
			t.Fatal("the rewritten chain should verify on its own: the checkpoint is what finds it")
		}
		cmd := exec.Command(binary, "admin", "audit", "verify", "--company", c.ID, "--checkpoint", before.Head) //nolint:gosec // the built binary
		cmd.Env = s.env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "sealed again") {
			t.Errorf("verify --checkpoint %s: %v\n%s", before.Head, err, out)
		}
	})
}
