// Holds docs/contract.md §12 Webhooks.

package test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
)

// receiver is an integrator's webhook receiver on loopback: it verifies
// every delivery with the official Standard Webhooks library and keeps
// what it acknowledged, in arrival order.
type receiver struct {
	srv  *httptest.Server
	mode atomic.Int32 // receiverUp, receiverDown (503), receiverGone (410)

	mu        sync.Mutex
	verifiers []*standardwebhooks.Webhook
	events    []receivedEvent
	badSigs   int
	raw       []rawDelivery
}

const (
	receiverUp int32 = iota
	receiverDown
	receiverGone
)

type receivedEvent struct {
	ID   string
	Type string
	Data struct {
		Section    string `json:"section"`
		ID         string `json:"id"`
		CustomerID *int64 `json:"customer_id"`
		Cursor     string `json:"cursor"`
		Version    int64  `json:"version"`
	}
}

// rawDelivery is a delivery as it came, for checks with other secrets.
type rawDelivery struct {
	header http.Header
	body   []byte
}

// position is where the event stands in the feed: (change, section, id).
func (e receivedEvent) position(t *testing.T) webhook.Position {
	c, err := domain.ParseCursor(e.Data.Cursor)
	if err != nil {
		t.Fatalf("event %s: cursor %q: %v", e.ID, e.Data.Cursor, err)
	}
	return webhook.Position{Change: c.Change, Section: e.Data.Section, ID: e.Data.ID}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		switch r.mode.Load() {
		case receiverDown:
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		case receiverGone:
			w.WriteHeader(http.StatusGone)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.raw = append(r.raw, rawDelivery{req.Header.Clone(), body})
		verified := false
		for _, v := range r.verifiers {
			if v.Verify(body, req.Header) == nil {
				verified = true
			}
		}
		var ev receivedEvent
		err := json.Unmarshal(body, &ev)
		if !verified || err != nil || len(body) > webhook.MaxBody {
			r.badSigs++
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		ev.ID = req.Header.Get("webhook-id")
		r.events = append(r.events, ev)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// trust makes the receiver accept signatures of secret (and of the secrets before it).
func (r *receiver) trust(t *testing.T, secret string) {
	t.Helper()
	v, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.verifiers = append(r.verifiers, v)
	r.mu.Unlock()
}

func (r *receiver) received() []receivedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedEvent(nil), r.events...)
}

// once is events with each webhook-id kept at its first delivery: delivery
// is at least once (docs/contract.md §12) — an acknowledged event whose
// position was not yet saved when the endpoint changed (a secret rotated)
// comes again, with its webhook-id, and a receiver drops it by that id.
func once(events []receivedEvent) []receivedEvent {
	seen := map[string]bool{}
	var out []receivedEvent
	for _, e := range events {
		if !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, e)
		}
	}
	return out
}

// deliveryWait bounds a wait for a delivery. The dispatcher reads the
// change feed, which on PostgreSQL serves a change once no transaction is
// open below it anywhere on the server; under make test other packages'
// tests share that server (a clean clone's make test once waited past 10 s).
// A passing wait ends as soon as the delivery came.
const deliveryWait = time.Minute

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// webhookEnv is a server whose endpoints may be on loopback, that looks for
// changes often, and whose leases are short; the key is the same for every
// process of one test, as on every replica of a deployment.
func webhookEnv(t *testing.T, scale string) []string {
	key, err := webhook.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"PRAXIS_WEBHOOK_ALLOW_PRIVATE=true", "PRAXIS_WEBHOOK_POLL=20ms", "PRAXIS_WEBHOOK_LEASE=2s",
		"PRAXIS_WEBHOOK_KEY=" + key, "PRAXIS_WEBHOOK_TIME_SCALE=" + scale,
		unlimitedRates}
}

// everyScope is the catalogue and the opt-in scopes.
func everyScope() string { return domain.SupportedScopes().String() }

// sectionScopes are both scopes of every section, the opt-in sections'
// (devices) included, without the audit trail's and webhooks'.
func sectionScopes() string {
	var out domain.Scopes
	for _, s := range domain.Sections {
		out = append(out, domain.ReadScope(s.Slug), domain.WriteScope(s.Slug))
	}
	return out.String()
}

type endpointReply struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	EventTypes     []string `json:"event_types"`
	Enabled        bool     `json:"enabled"`
	Status         string   `json:"status"`
	DisabledReason *string  `json:"disabled_reason"`
	Cursor         string   `json:"cursor"`
	Failures       int      `json:"failures"`
	Secret         string   `json:"secret"`
}

func (r reply) endpoint(t *testing.T) endpointReply {
	t.Helper()
	var e endpointReply
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("%d %s: %v", r.status, r.body, err)
	}
	return e
}

const endpointsPath = "/api/oauth/v2/resource/webhook-endpoints"

func (s *server) register(t *testing.T, token, url string, types ...string) endpointReply {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"url": url, "event_types": types})
	r := s.request(t, http.MethodPost, endpointsPath, "application/json", string(body), "Authorization: Bearer "+token)
	if r.status != http.StatusCreated {
		t.Fatalf("register %s: %d %s", url, r.status, r.body)
	}
	e := r.endpoint(t)
	if !strings.HasPrefix(e.Secret, "whsec_") || r.header.Get("Location") != endpointsPath+"/"+e.ID {
		t.Fatalf("register: secret %q, Location %q", e.Secret, r.header.Get("Location"))
	}
	return e
}

func (s *server) getEndpoint(t *testing.T, token, id string) endpointReply {
	t.Helper()
	r := s.request(t, http.MethodGet, endpointsPath+"/"+id, "", "", "Authorization: Bearer "+token)
	if r.status != http.StatusOK {
		t.Fatalf("get endpoint: %d %s", r.status, r.body)
	}
	e := r.endpoint(t)
	if e.Secret != "" {
		t.Fatal("a GET answers the secret")
	}
	return e
}

// create creates an object of section and answers its id.
func (s *server) create(t *testing.T, token, section, body string) string {
	t.Helper()
	r := s.request(t, http.MethodPost, "/api/oauth/v2/resource/"+section, "application/json", body, "Authorization: Bearer "+token)
	if r.status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", section, r.status, r.body)
	}
	return fmt.Sprint(r.decode(t)["id"])
}

// TestWebhookEndpoints: registration and its refusals, the Standard
// Webhooks wire, rotation with overlap, replay, 410, the delivery log and
// another company, on both backends (docs/contract.md §12).
func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		rcv := newReceiver(t)

		// Without the operator's allowance, loopback is refused at registration.
		if b.name == "postgres" {
			// A shared database without PRAXIS_WEBHOOK_KEY has nothing to seal
			// secrets with: no endpoint is made, and the answer says what it is
			// (a setting the operator left out), not an outage to retry.
			keyless := startServer(t, b)
			kc := keyless.newCompany(t, 1<<20)
			r := keyless.request(t, http.MethodPost, endpointsPath, "application/json", `{"url":"https://integrator.example/hook","event_types":["*"]}`,
				"Authorization: Bearer "+keyless.tokenFor(t, keyless.newClient(t, kc, everyScope())))
			if r.status != http.StatusConflict || r.header.Get("Retry-After") != "" || !strings.Contains(string(r.body), `"webhooks-disabled"`) {
				t.Errorf("register without a key: %d (Retry-After %q) %s", r.status, r.header.Get("Retry-After"), r.body)
			}
			if r := keyless.request(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusOK {
				t.Errorf("readyz without a webhook key: %d %s", r.status, r.body)
			}
		}
		key, _ := webhook.NewKey()
		strict := startServer(t, b, "PRAXIS_WEBHOOK_KEY="+key)
		sc := strict.newCompany(t, 1<<20)
		strictToken := strict.tokenFor(t, strict.newClient(t, sc, everyScope()))
		for _, url := range []string{"https://127.0.0.1/hook", "https://127.1.2.3:8443/hook", "https://[::1]/hook", "https://localhost/hook",
			"https://api.localhost/hook", "http://integrator.example/hook", rcv.srv.URL, "https://user:pw@integrator.example/hook", "not a url"} {
			body, _ := json.Marshal(map[string]any{"url": url, "event_types": []string{"*"}})
			r := strict.request(t, http.MethodPost, endpointsPath, "application/json", string(body), "Authorization: Bearer "+strictToken)
			if r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), `"url"`) {
				t.Errorf("register %s without the allowance: %d %s", url, r.status, r.body)
			}
		}
		noScope := strict.tokenFor(t, strict.newClient(t, sc, ""))
		if r := strict.request(t, http.MethodGet, endpointsPath, "", "", "Authorization: Bearer "+noScope); r.status != http.StatusForbidden {
			t.Errorf("webhooks without webhooks:read: %d", r.status)
		}
		notesOnly := strict.tokenFor(t, strict.newClient(t, sc, "webhooks:write notes:read"))
		body := `{"url":"https://integrator.example/hook","event_types":["notes.created","customers.updated"]}`
		if r := strict.request(t, http.MethodPost, endpointsPath, "application/json", body, "Authorization: Bearer "+notesOnly); r.status != http.StatusUnprocessableEntity ||
			!strings.Contains(string(r.body), "customers:read") {
			t.Errorf("a subscription beyond the client's read scopes: %d %s", r.status, r.body)
		}
		for _, bad := range []string{`{"url":"https://integrator.example/hook","event_types":["notes.read"]}`, `{"url":"https://integrator.example/hook","event_types":[]}`,
			`{"url":"https://integrator.example/hook","event_types":["*","notes.created"]}`, `{"url":"https://integrator.example/hook","event_types":"*"}`,
			`{"url":"https://integrator.example/hook","event_types":["*"],"secret":"whsec_mine"}`, `[]`} {
			if r := strict.request(t, http.MethodPost, endpointsPath, "application/json", bad, "Authorization: Bearer "+strictToken); r.status != http.StatusUnprocessableEntity {
				t.Errorf("register %s: %d %s", bad, r.status, r.body)
			}
		}
		if r := strict.request(t, http.MethodPost, endpointsPath, "application/json", `{"url":`, "Authorization: Bearer "+strictToken); r.status != http.StatusBadRequest {
			t.Errorf("malformed body: %d", r.status)
		}

		// One worker for two endpoints: they take turns.
		s := startServer(t, b, append(webhookEnv(t, "0.00001"), "PRAXIS_WEBHOOK_WORKERS=1")...)
		c := s.newCompany(t, 1<<20)
		patient := s.newCustomer(t, c)
		token := s.tokenFor(t, s.newClient(t, c, everyScope()))
		e := s.register(t, token, rcv.srv.URL+"/hook", "notes.created", "customers.updated")
		rcv.trust(t, e.Secret)
		second := newReceiver(t)
		second.trust(t, s.register(t, token, second.srv.URL+"/hook", "notes.created").Secret)
		if e.Status != "active" || !e.Enabled {
			t.Fatalf("new endpoint: %+v", e)
		}
		note := s.create(t, token, "notes", fmt.Sprintf(`{"customer_id":%d,"text":"Kontrolle in 2 Wochen"}`, patient))
		waitFor(t, deliveryWait, "the note's event", func() bool { return len(once(rcv.received())) == 1 })
		waitFor(t, deliveryWait, "the note's event at the second endpoint", func() bool { return len(once(second.received())) == 1 })
		got := rcv.received()[0]
		if got.Type != "notes.created" || got.Data.Section != "notes" || got.Data.ID != note || got.Data.CustomerID == nil || *got.Data.CustomerID != patient ||
			got.Data.Version != 1 {
			t.Fatalf("event: %+v", got)
		}
		if raw := string(rcv.raw[0].body); strings.Contains(raw, "Kontrolle") || strings.Contains(raw, "Berger") {
			t.Errorf("an event carries patient detail: %s", raw)
		}
		// The event's cursor resumes the section's sync just past the note.
		r := s.request(t, http.MethodGet, "/api/oauth/v2/resource/notes?cursor="+got.Data.Cursor, "", "", "Authorization: Bearer "+token)
		if r.status != http.StatusOK || !strings.Contains(string(r.body), `"data":[]`) {
			t.Errorf("sync after the event's cursor: %d %s", r.status, r.body)
		}

		// Rotation: both secrets sign during the overlap; each alone verifies.
		r = s.request(t, http.MethodPost, endpointsPath+"/"+e.ID+"/rotate-secret", "application/json", `{"overlap_seconds":3600}`, "Authorization: Bearer "+token)
		rotated := r.endpoint(t)
		if r.status != http.StatusOK || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.Secret == e.Secret {
			t.Fatalf("rotate: %d %s", r.status, r.body)
		}
		if r := s.request(t, http.MethodPatch, "/api/oauth/v2/resource/customers/"+fmt.Sprint(patient), "application/merge-patch+json", `{"title":"Dr."}`, "Authorization: Bearer "+token); r.status != http.StatusOK {
			t.Fatalf("PATCH customer: %d %s", r.status, r.body)
		}
		waitFor(t, deliveryWait, "the customer's event", func() bool { return len(once(rcv.received())) == 2 })
		first := once(rcv.received())
		rcv.mu.Lock()
		var last rawDelivery
		for _, d := range rcv.raw {
			if d.header.Get("webhook-id") == first[1].ID {
				last = d
			}
		}
		rcv.mu.Unlock()
		for _, secret := range []string{e.Secret, rotated.Secret} {
			v, _ := standardwebhooks.NewWebhook(secret)
			if err := v.Verify(last.body, last.header); err != nil {
				t.Errorf("during the overlap, a receiver with one secret refuses: %v", err)
			}
		}
		if sigs := strings.Fields(last.header.Get("webhook-signature")); len(sigs) != 2 {
			t.Errorf("signatures during the overlap: %q", sigs)
		}
		if ev := first[1]; ev.Type != "customers.updated" || ev.Data.ID != fmt.Sprint(patient) || ev.Data.Version < 2 {
			t.Errorf("event: %+v", ev)
		}
		// Replay from the first event's cursor: both events come again, in
		// order, each with its webhook-id.
		before := len(rcv.received())
		r = s.request(t, http.MethodPost, endpointsPath+"/"+e.ID+"/replay", "application/json", fmt.Sprintf(`{"cursor":%q}`, got.Data.Cursor), "Authorization: Bearer "+token)
		if r.status != http.StatusAccepted {
			t.Fatalf("replay: %d %s", r.status, r.body)
		}
		waitFor(t, deliveryWait, "the replayed events", func() bool { return len(once(rcv.received()[before:])) == 2 })
		if again := once(rcv.received()[before:]); again[0].ID != first[0].ID || again[1].ID != first[1].ID {
			t.Errorf("replayed: %+v, first %+v", again, first)
		}

		// 410 disables the endpoint, and the company is told in its audit trail.
		rcv.mode.Store(receiverGone)
		s.create(t, token, "notes", fmt.Sprintf(`{"customer_id":%d,"text":"Befund besprochen"}`, patient))
		waitFor(t, deliveryWait, "the endpoint disabled after 410", func() bool { return s.getEndpoint(t, token, e.ID).Status == "disabled" })
		if d := s.getEndpoint(t, token, e.ID); d.Enabled || d.DisabledReason == nil || !strings.Contains(*d.DisabledReason, "410") {
			t.Errorf("after 410: %+v", d)
		}
		events, _ := s.auditEvents(t, token, "&agent=webhooks")
		if len(events) != 1 || events[0].Agent.Type != "system" || events[0].Object != e.ID || !strings.Contains(events[0].Outcome.Reason, "410") {
			t.Errorf("audit of the disabling: %+v", events)
		}

		// The delivery log, newest first: the 410, then the deliveries.
		r = s.request(t, http.MethodGet, endpointsPath+"/"+e.ID+"/deliveries?limit=2", "", "", "Authorization: Bearer "+token)
		var log struct {
			Data []struct {
				WebhookID string `json:"webhook_id"`
				Status    *int   `json:"status"`
				Outcome   string `json:"outcome"`
			} `json:"data"`
			NextCursor string `json:"next_cursor"`
			HasMore    bool   `json:"has_more"`
		}
		if err := json.Unmarshal(r.body, &log); err != nil || len(log.Data) != 2 || !log.HasMore || log.Data[0].Outcome != "gone" ||
			*log.Data[0].Status != http.StatusGone || log.Data[1].Outcome != "delivered" {
			t.Errorf("delivery log: %d %s", r.status, r.body)
		}
		r = s.request(t, http.MethodGet, endpointsPath+"/"+e.ID+"/deliveries?cursor="+log.NextCursor, "", "", "Authorization: Bearer "+token)
		if !strings.Contains(string(r.body), `"has_more":false`) || strings.Count(string(r.body), `"webhook_id"`) != 3 {
			t.Errorf("delivery log, second page: %s", r.body)
		}

		// Another company sees none of it.
		other := s.newCompany(t, 1<<20)
		otherToken := s.tokenFor(t, s.newClient(t, other, everyScope()))
		for _, path := range []string{endpointsPath + "/" + e.ID, endpointsPath + "/" + e.ID + "/deliveries"} {
			if r := s.request(t, http.MethodGet, path, "", "", "Authorization: Bearer "+otherToken); r.status != http.StatusNotFound {
				t.Errorf("another company's GET %s: %d", path, r.status)
			}
		}
		for _, m := range []string{http.MethodPatch, http.MethodDelete} {
			if r := s.request(t, m, endpointsPath+"/"+e.ID, "application/json", `{"enabled":true}`, "Authorization: Bearer "+otherToken); r.status != http.StatusNotFound {
				t.Errorf("another company's %s: %d", m, r.status)
			}
		}
		if r := s.request(t, http.MethodGet, endpointsPath, "", "", "Authorization: Bearer "+otherToken); string(r.body) != `{"data":[]}` {
			t.Errorf("another company's list: %s", r.body)
		}
		if r := s.request(t, http.MethodDelete, endpointsPath+"/"+e.ID, "", "", "Authorization: Bearer "+token); r.status != http.StatusNoContent {
			t.Errorf("delete: %d", r.status)
		}
		metrics := string(s.requestUndocumented(t, http.MethodGet, "/metrics", "", "").body)
		for _, series := range []string{`praxis_webhook_deliveries_total{outcome="delivered"`, `praxis_webhook_deliveries_total{outcome="gone"`,
			`praxis_webhook_delivery_duration_seconds_bucket{outcome="delivered"`} {
			if !strings.Contains(metrics, series) {
				t.Errorf("/metrics has no %s", series)
			}
		}
		if strings.Contains(metrics, rcv.srv.URL) || strings.Contains(metrics, e.ID) {
			t.Error("/metrics names an endpoint")
		}
	})
}

// loadSections are the ten sections the loss test writes to.
var loadSections = []string{"customers", "notes", "diagnoses", "anamneses", "measurements", "long-term-medications",
	"sports-exemptions", "visit-confirmations", "medical-transports", "lab-results"}

// loadLines writes import lines for objects from..to-1 of the ten
// sections, round robin; a changed text makes a line an update.
func loadLines(t *testing.T, ex domain.ExampleIDs, ids map[int]string, from, to int, edit string) string {
	t.Helper()
	var lines []string
	for i := from; i < to; i++ {
		section := loadSections[i%len(loadSections)]
		var data map[string]any
		if err := json.Unmarshal([]byte(domain.KindOf(section).ExampleWith(ex)), &data); err != nil {
			t.Fatal(err)
		}
		id, quoted := ids[i], fmt.Sprintf("%q", ids[i])
		if section == "customers" {
			quoted = id
			data["svnr"], data["email"] = nil, nil
			data["first_name"] = "Load" + edit
		} else if edit != "" {
			edited := false
			for _, k := range slices.Sorted(maps.Keys(data)) { // a free text: a string with a space
				if v, ok := data[k].(string); ok && strings.Contains(v, " ") && !edited {
					data[k], edited = v+edit, true
				}
			}
			if !edited { // examples of numbers, codes and dates only
				data[map[string]string{"measurements": "note", "visit-confirmations": "accompanying_person"}[section]] = "edited" + edit
			}
		}
		b, _ := json.Marshal(data)
		lines = append(lines, fmt.Sprintf(`{"section":%q,"id":%s,"data":%s}`, section, quoted, b))
	}
	return writeLines(t, lines...)
}

// TestWebhooksLoseNothing: 10,000 changes across ten sections while the
// receiver is down for longer than the whole retry schedule (its hours
// shrunk by PRAXIS_WEBHOOK_TIME_SCALE) until the endpoint is disabled, the
// dispatcher killed with SIGKILL once then and twice during the catch-up
// after re-enabling (on PostgreSQL beside a second replica): every
// object's last change arrives, in feed order, and an event comes twice
// only under its own webhook-id (docs/contract.md §12).
func TestWebhooksLoseNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		const total, updated = 10_000, 500
		rcv := newReceiver(t)
		rcv.mode.Store(receiverDown)
		s := startServer(t, b, webhookEnv(t, "0.00001")...)
		c := s.newCompany(t, 1<<20)
		practice, seeded := practiceFile(t)
		s.praxis(t, nil, "admin", "import", "--company", c.ID, practice)
		ex := domain.ExampleIDs{Customer: 5000, User: seeded["users"], Diagnosis: seeded["diagnoses"], Location: seeded["locations"], Service: seeded["services"], Device: seeded["devices"]}
		client := s.newClient(t, c, everyScope())
		token := s.tokenFor(t, client)
		e := s.register(t, token, rcv.srv.URL+"/hook", "*")
		rcv.trust(t, e.Secret)

		ids := map[int]string{}
		for i := range total {
			if loadSections[i%len(loadSections)] == "customers" {
				ids[i] = fmt.Sprint(10_000 + i)
			} else {
				ids[i] = domain.NewObjectID()
			}
		}
		// Half the changes, a kill, the other half: the receiver is down throughout.
		s.praxis(t, nil, "admin", "import", "--company", c.ID, loadLines(t, ex, ids, 0, total/2, ""))
		waitFor(t, deliveryWait, "a failing endpoint", func() bool { return s.getEndpoint(t, token, e.ID).Failures > 0 })
		_ = s.cmd.Process.Kill()
		s.exited <- <-s.exited
		s = s.replica(t)
		token = s.tokenFor(t, client)
		s.praxis(t, nil, "admin", "import", "--company", c.ID, loadLines(t, ex, ids, total/2, total, ""))
		waitFor(t, 60*time.Second, "the endpoint disabled after failing for its five (shrunk) days", func() bool {
			return s.getEndpoint(t, token, e.ID).Status == "disabled"
		})
		if d := s.getEndpoint(t, token, e.ID); d.DisabledReason == nil || !strings.Contains(*d.DisabledReason, "failing since") || len(rcv.received()) != 0 {
			t.Fatalf("disabled: %+v, %d events acknowledged", d, len(rcv.received()))
		}
		attempts := s.request(t, http.MethodGet, endpointsPath+"/"+e.ID+"/deliveries?limit=500", "", "", "Authorization: Bearer "+token)
		// How many retries fit into the shrunk five days depends on how long
		// the kill's lease took to pass: on a loaded machine (make test with a
		// build beside it) once only two attempts did — the first and a retry.
		if n := strings.Count(string(attempts.body), `"outcome":"throttled"`); n < 2 {
			t.Errorf("%d attempts before the endpoint was disabled, want the schedule's retries", n)
		}

		// Up again: re-enabled, delivery resumes where it stopped. Updates
		// come in meanwhile; the dispatcher is killed twice.
		rcv.mode.Store(receiverUp)
		if r := s.request(t, http.MethodPatch, endpointsPath+"/"+e.ID, "application/json", `{"enabled":true}`, "Authorization: Bearer "+token); r.status != http.StatusOK {
			t.Fatalf("re-enable: %d %s", r.status, r.body)
		}
		if b.name == "postgres" {
			// A second replica beside the one killed twice: they share the
			// endpoint by its lease, one at a time.
			s.replica(t)
		}
		for _, share := range []int{3, 6} {
			waitFor(t, 120*time.Second, fmt.Sprintf("%d0%% delivered", share), func() bool { return len(rcv.received()) >= total*share/10 })
			if share == 3 {
				s.praxis(t, nil, "admin", "import", "--company", c.ID, loadLines(t, ex, ids, 0, updated, "-2"))
			}
			_ = s.cmd.Process.Kill()
			s.exited <- <-s.exited
			s = s.replica(t)
		}

		// Every object's last change arrives: created, or updated for the first 500.
		want := map[string]string{}
		for i := range total {
			section := loadSections[i%len(loadSections)]
			want[section+"/"+ids[i]] = section + ".created"
			if i < updated {
				want[section+"/"+ids[i]] = section + ".updated"
			}
		}
		missing := func() int {
			last := map[string]string{}
			for _, ev := range rcv.received() {
				last[ev.Data.Section+"/"+ev.Data.ID] = ev.Type
			}
			n := 0
			for k, typ := range want {
				if last[k] != typ {
					n++
				}
			}
			return n
		}
		waitFor(t, 180*time.Second, "every object's last change", func() bool { return missing() == 0 })

		events := rcv.received()
		seen := map[string]webhook.Position{}
		var maxPos webhook.Position
		inversions, duplicates := 0, 0
		for _, ev := range events {
			p := ev.position(t)
			if first, ok := seen[ev.ID]; ok {
				duplicates++
				if first != p {
					t.Errorf("webhook-id %s names two changes: %+v and %+v", ev.ID, first, p)
				}
				continue
			}
			seen[ev.ID] = p
			if p.Less(maxPos) {
				inversions++
			}
			maxPos = p
		}
		rcv.mu.Lock()
		bad := rcv.badSigs
		rcv.mu.Unlock()
		t.Logf("%s: %d events acknowledged, %d distinct, %d duplicates (%.2f%%), %d order inversions, %d refused signatures",
			b.name, len(events), len(seen), duplicates, 100*float64(duplicates)/float64(len(events)), inversions, bad)
		if inversions != 0 || duplicates*100 > len(events) || bad != 0 {
			t.Errorf("%d order inversions, %d duplicates of %d events, %d refused signatures", inversions, duplicates, len(events), bad)
		}
	})
}
