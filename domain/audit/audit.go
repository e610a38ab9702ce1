// Package audit is the record of every access to patient data
// (docs/contract.md §11): one event per access, shaped after FHIR
// AuditEvent / IHE BALP, chained per company by hashes so that an edit or a
// deletion is found.
package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
)

// Actions an event records.
const (
	ActionRead     = "read"
	ActionList     = "list"
	ActionCreate   = "create"
	ActionUpdate   = "update"
	ActionDelete   = "delete"
	ActionDownload = "download"
	ActionUpload   = "upload"
	ActionImport   = "import"
	ActionExport   = "export"
	// A company restored from a copy of the database (admin company restore).
	ActionRestore = "restore"
	// A native match (POST customers/match): the candidates answered.
	ActionMatch = "match"
	// The FHIR door's interactions (adapters/fhir): a read and a search of
	// the same data, told apart from the native API's.
	ActionFHIRRead   = "fhir-read"
	ActionFHIRSearch = "fhir-search"
	ActionFHIRCreate = "fhir-create"
	ActionFHIRUpdate = "fhir-update"
	// A Bulk Data export (kick-off, status, download, delete, and each file
	// it wrote, which names the customers the file holds).
	ActionFHIRExport = "fhir-export"
	// Patient/$match: the candidates answered are the customers it names.
	ActionFHIRMatch = "fhir-match"
)

// Agent types: who acted.
const (
	AgentClient   = "client"
	AgentStaff    = "staff"
	AgentDevice   = "device"
	AgentOperator = "operator"
	AgentSystem   = "system" // praxis itself: the webhook dispatcher disabling an endpoint
)

// Agent is who acted: an OAuth client, a staff member, a device (the upload
// doors), the operator (import and export).
type Agent struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Source is where the request came from, after the trusted proxies.
type Source struct {
	Address string `json:"address"`
}

// Outcome is the answer's HTTP status and, for a refusal, why.
type Outcome struct {
	Status int    `json:"status"`
	Reason string `json:"reason"`
}

// Event is one access, as the API answers it. Ids only: never a name, a
// birth date or clinical text.
type Event struct {
	ID          string              `json:"id"`
	Time        time.Time           `json:"time"`
	Agent       Agent               `json:"agent"`
	Source      Source              `json:"source"`
	TraceID     string              `json:"trace_id"`
	Action      string              `json:"action"`
	Section     string              `json:"section"`
	ObjectID    string              `json:"object_id"`
	Outcome     Outcome             `json:"outcome"`
	CustomerIDs []domain.CustomerID `json:"customer_ids"`
}

// New is an event of now with a new id; its customers are set with Touch.
func New(at time.Time) Event {
	return Event{ID: uuid.Must(uuid.NewV7()).String(), Time: at.UTC().Truncate(time.Millisecond), CustomerIDs: []domain.CustomerID{}}
}

// Canonical is the event's one spelling, which the chain hashes and the
// store keeps: its fields in a fixed order, the customers sorted and once.
func (e Event) Canonical() []byte { return e.AppendCanonical(make([]byte, 0, 384)) }

// AppendCanonical appends Canonical's spelling to b: a store sealing a
// block spells every event into one buffer of its own.
func (e Event) AppendCanonical(b []byte) []byte {
	e.Time = e.Time.UTC()
	ids := slices.Clone(e.CustomerIDs)
	slices.Sort(ids)
	e.CustomerIDs = slices.Compact(ids)
	if e.CustomerIDs == nil {
		e.CustomerIDs = []domain.CustomerID{}
	}
	if out, ok := e.appendPlain(b); ok {
		return out
	}
	j, err := json.Marshal(e)
	if err != nil {
		panic(err) // strings, numbers and a time: it always marshals
	}
	return append(b, j...)
}

// appendPlain spells the event byte for byte as encoding/json does, when
// every string is printable ASCII that JSON writes unescaped and the time's
// year has four digits: nearly every event, at a fraction of reflection's
// cost (every request that touches data writes one). ok is false for any
// other event, which json.Marshal then spells.
func (e Event) appendPlain(b []byte) (_ []byte, ok bool) {
	if y := e.Time.Year(); y < 0 || y > 9999 {
		return nil, false
	}
	for _, s := range [...]string{e.ID, e.Agent.Type, e.Agent.ID, e.Agent.Name, e.Source.Address, e.TraceID, e.Action,
		e.Section, e.ObjectID, e.Outcome.Reason} {
		if !plainJSON(s) {
			return nil, false
		}
	}
	b = append(append(b, `{"id":"`...), e.ID...)
	b = e.Time.AppendFormat(append(b, `","time":"`...), time.RFC3339Nano)
	b = append(append(b, `","agent":{"type":"`...), e.Agent.Type...)
	b = append(append(b, `","id":"`...), e.Agent.ID...)
	b = append(append(b, `","name":"`...), e.Agent.Name...)
	b = append(append(b, `"},"source":{"address":"`...), e.Source.Address...)
	b = append(append(b, `"},"trace_id":"`...), e.TraceID...)
	b = append(append(b, `","action":"`...), e.Action...)
	b = append(append(b, `","section":"`...), e.Section...)
	b = append(append(b, `","object_id":"`...), e.ObjectID...)
	b = strconv.AppendInt(append(b, `","outcome":{"status":`...), int64(e.Outcome.Status), 10)
	b = append(append(b, `,"reason":"`...), e.Outcome.Reason...)
	b = append(b, `"},"customer_ids":[`...)
	for i, id := range e.CustomerIDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return append(b, "]}"...), true
}

// plainJSON tells whether encoding/json writes s as it is between its
// quotes: printable ASCII without the quote, the backslash and the three
// characters it escapes for HTML (<, >, &).
func plainJSON(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// Reaches tells whether the event spelled by a canonical payload names
// customer, reading only its customer_ids, which the canonical spelling
// puts last (a query by customer skips most events of a block unread). ok
// is false when the payload does not end so; the caller then reads it
// whole.
func Reaches(payload []byte, customer domain.CustomerID) (reaches, ok bool) {
	const key = `"customer_ids":[`
	at := bytes.LastIndex(payload, []byte(key))
	if at < 0 || !bytes.HasSuffix(payload, []byte("]}")) {
		return false, false
	}
	list := payload[at+len(key) : len(payload)-2]
	for len(list) > 0 {
		n, rest, _ := bytes.Cut(list, []byte{','})
		id, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return false, false
		}
		if domain.CustomerID(id) == customer {
			return true, true
		}
		list = rest
	}
	return false, true
}

// Link is a position in a company's chain: the sequence number of an event
// and its hash. The chain starts at Link{} (sequence 0, no hash).
type Link struct {
	Seq  int64
	Hash []byte
}

// String spells a link as a checkpoint is kept outside the database:
// "<seq>:<hash in hex>".
func (l Link) String() string { return fmt.Sprintf("%d:%x", l.Seq, l.Hash) }

// ParseLink reads what String wrote.
func ParseLink(s string) (Link, error) {
	seq, hash, ok := strings.Cut(s, ":")
	var l Link
	if _, err := fmt.Sscan(seq, &l.Seq); !ok || err != nil || l.Seq < 1 {
		return Link{}, fmt.Errorf("checkpoint %q is not <seq>:<hash>", s)
	}
	b, err := hex.DecodeString(hash)
	if err != nil || len(b) != sha256.Size {
		return Link{}, fmt.Errorf("checkpoint %q is not <seq>:<hash>", s)
	}
	l.Hash = b
	return l, nil
}

// Sealed is an event in its company's chain.
type Sealed struct {
	Company  domain.CompanyID
	Seq      int64
	Payload  []byte // Canonical()
	PrevHash []byte
	Hash     []byte
	// Index is what the store's index says of the event, where queries
	// find it; nil where a store keeps none beside the events.
	Index *Index
}

// Index is where a store's queries find an event: by time within [From,
// To], and by each customer in Customers. An index that disagrees with
// the event hides it from a query, whatever the chain says.
type Index struct {
	From, To  time.Time
	Customers map[domain.CustomerID]bool
}

// indexed checks that the index finds s where its content says it is.
func (s Sealed) indexed() error {
	if s.Index == nil {
		return nil
	}
	var e struct {
		Time        time.Time           `json:"time"`
		CustomerIDs []domain.CustomerID `json:"customer_ids"`
	}
	if err := json.Unmarshal(s.Payload, &e); err != nil {
		return fmt.Errorf("event %d does not read: %w", s.Seq, err)
	}
	if e.Time.Before(s.Index.From) || e.Time.After(s.Index.To) {
		return fmt.Errorf("event %d is indexed under the times %s to %s, not under its own time %s: a query by time does not find it",
			s.Seq, s.Index.From.UTC().Format(time.RFC3339), s.Index.To.UTC().Format(time.RFC3339), e.Time.UTC().Format(time.RFC3339))
	}
	for _, c := range e.CustomerIDs {
		if !s.Index.Customers[c] {
			return fmt.Errorf("event %d is not indexed under one of the customers it names: a query by that customer does not find it", s.Seq)
		}
	}
	return nil
}

// Seal puts the canonical payload after prev in company's chain: the hash
// covers the previous hash, the company, the sequence number and the payload.
func Seal(company domain.CompanyID, prev Link, payload []byte) Sealed {
	s := Sealed{Company: company, Seq: prev.Seq + 1, Payload: payload, PrevHash: prev.Hash}
	s.Hash = hashOf(company, s.Seq, prev.Hash, payload)
	return s
}

func hashOf(company domain.CompanyID, seq int64, prev, payload []byte) []byte {
	h := sha256.New()
	h.Write(prev)
	h.Write(company[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(seq)) //nolint:gosec // the sequence's bits as they are, as binary.Write wrote them
	h.Write(n[:])
	h.Write(payload)
	return h.Sum(nil)
}

// Link is where s leaves the chain for the next event.
func (s Sealed) Link() Link { return Link{Seq: s.Seq, Hash: s.Hash} }

// Verifier walks a company's chain in sequence order from a checkpoint and
// names the first broken link.
type Verifier struct {
	company domain.CompanyID
	at      Link
	Checked int64
}

// NewVerifier starts at a checkpoint: the chain's start, or where a sweep
// cut it.
func NewVerifier(company domain.CompanyID, from Link) *Verifier {
	return &Verifier{company: company, at: from}
}

// Next checks the next stored event.
func (v *Verifier) Next(s Sealed) error {
	switch {
	case s.Seq != v.at.Seq+1:
		return fmt.Errorf("event %d follows event %d: %d event(s) are missing", s.Seq, v.at.Seq, s.Seq-v.at.Seq-1)
	case !bytes.Equal(s.PrevHash, v.at.Hash):
		return fmt.Errorf("event %d does not name the hash of event %d", s.Seq, v.at.Seq)
	case !bytes.Equal(s.Hash, hashOf(v.company, s.Seq, s.PrevHash, s.Payload)):
		return fmt.Errorf("event %d was changed after it was written: its hash does not match its content", s.Seq)
	}
	v.at = s.Link()
	v.Checked++
	return nil
}

// End checks that the walk reached the head the store keeps.
func (v *Verifier) End(head Link) error {
	if head.Seq != v.at.Seq || !bytes.Equal(head.Hash, v.at.Hash) {
		return fmt.Errorf("the chain ends at event %d, but the company's head is event %d: events after %d are missing", v.at.Seq, head.Seq, v.at.Seq)
	}
	return nil
}

// Verify checks a company's chain from its checkpoint to its head: walk
// hands the stored events in order. It answers how many events it checked
// and the first broken link.
//
// The chain alone proves that no event was changed or removed by someone
// who did not seal the rest again. Checkpoints kept outside the database
// (the servers log the heads hourly) prove more: whoever rewrites the chain
// from some event on cannot make it pass through a link recorded before.
func Verify(company domain.CompanyID, from, head Link, walk func(fn func(Sealed) error) error, checkpoints ...Link) (int64, error) {
	v := NewVerifier(company, from)
	want := map[int64][]byte{}
	for _, c := range checkpoints {
		switch {
		case c.Seq > head.Seq:
			return 0, fmt.Errorf("checkpoint %s lies after the chain's head, event %d: events were removed from its end", c, head.Seq)
		case c.Seq == from.Seq && !bytes.Equal(c.Hash, from.Hash):
			return 0, fmt.Errorf("the chain starts from event %d, but not with the hash of checkpoint %s", from.Seq, c)
		case c.Seq > from.Seq:
			want[c.Seq] = c.Hash
		}
	}
	var broken error
	if err := walk(func(s Sealed) error {
		if broken == nil {
			broken = v.Next(s)
		}
		if broken == nil {
			broken = s.indexed()
		}
		if h, ok := want[s.Seq]; broken == nil && ok && !bytes.Equal(h, s.Hash) {
			broken = fmt.Errorf("event %d is not the one checkpoint %s recorded: the chain was sealed again from there or before", s.Seq, Link{Seq: s.Seq, Hash: h})
		}
		return nil
	}); err != nil {
		return v.Checked, err
	}
	if broken != nil {
		return v.Checked, broken
	}
	return v.Checked, v.End(head)
}

// NextCursor is the opaque cursor of the page after the event at seq, as
// both doors hand it out (the API's audit-events list, the settings' audit
// page): one of the sync cursors, named for the trail.
func NextCursor(seq int64) string { return domain.Cursor{Change: seq, ID: "audit"}.Encode() }

// ParseCursor reads a cursor NextCursor made: the sequence number after
// which the next page starts.
func ParseCursor(s string) (int64, error) {
	cur, err := domain.ParseCursor(s)
	if err != nil || cur.ID != "audit" || cur.Change < 0 {
		return 0, &domain.ValidationError{Field: "cursor", Message: "is not a cursor this API handed out"}
	}
	return cur.Change, nil
}

// Query narrows a company's events and pages them in sequence order.
type Query struct {
	Customer *domain.CustomerID
	Agent    string
	From, To *time.Time
	After    int64 // the last sequence number of the previous page
	Limit    int
}

// Page is one page of events in sequence order.
type Page struct {
	Events  [][]byte // canonical payloads
	Last    int64
	HasMore bool
}

// Access is the event of one request, filled while it is served: the
// handlers and use cases add the customers they touch; a write that records
// its event in its own transaction marks it written.
type Access struct {
	mu       sync.Mutex
	event    Event
	complete func(*Event)
	written  bool
	skip     bool
}

// NewAccess starts the event of a request; complete fills in, when the
// event is taken, what the door learns while the request is served (the
// agent once its token is read, the section and action).
func NewAccess(e Event, complete func(*Event)) *Access { return &Access{event: e, complete: complete} }

type accessKey struct{}

// With carries a into the request's context.
func With(ctx context.Context, a *Access) context.Context {
	return context.WithValue(ctx, accessKey{}, a)
}

// From is the access of ctx, or nil outside a request that is audited.
func From(ctx context.Context) *Access {
	a, _ := ctx.Value(accessKey{}).(*Access)
	return a
}

// Touch records that the request reached these customers' data. An id
// the last one repeats is not kept twice: a page of one patient's records
// touches that patient once per row.
func Touch(ctx context.Context, ids ...domain.CustomerID) {
	if a := From(ctx); a != nil {
		a.mu.Lock()
		for _, id := range ids {
			if n := len(a.event.CustomerIDs); n == 0 || a.event.CustomerIDs[n-1] != id {
				a.event.CustomerIDs = append(a.event.CustomerIDs, id)
			}
		}
		a.mu.Unlock()
	}
}

// Event is the access's event with its outcome.
func (a *Access) Event(status int, reason string) Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.event
	e.CustomerIDs = slices.Clone(e.CustomerIDs)
	if a.complete != nil {
		a.complete(&e)
	}
	e.Outcome = Outcome{Status: status, Reason: reason}
	return e
}

// Skip marks a request that reached no one's data and that the trail does
// not keep when it succeeds: a device's empty long poll, which would
// otherwise be an event every half minute per device.
func Skip(ctx context.Context) {
	if a := From(ctx); a != nil {
		a.mu.Lock()
		a.skip = true
		a.mu.Unlock()
	}
}

// Skipped reports whether Skip marked the request.
func (a *Access) Skipped() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.skip
}

// Created names the object a request created: its route cannot.
func Created(ctx context.Context, id string) {
	if a := From(ctx); a != nil {
		a.mu.Lock()
		a.event.ObjectID = id
		a.mu.Unlock()
	}
}

// MarkWritten records that the event went into the write's transaction:
// it is not written again.
func (a *Access) MarkWritten() {
	a.mu.Lock()
	a.written = true
	a.mu.Unlock()
}

// Written reports whether the event is in the store already.
func (a *Access) Written() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.written
}

// BALP is the event as a FHIR R4 AuditEvent after the IHE Basic Audit Log
// Patterns: a RESTful interaction, its agent and network address, the
// object reached, and one entity per patient ("with Patient" profiles).
func (e Event) BALP(company domain.CompanyID) map[string]any {
	interaction := map[string]string{ActionRead: "read", ActionList: "search-type", ActionCreate: "create", ActionUpdate: "update",
		ActionDelete: "delete", ActionDownload: "read", ActionUpload: "create", ActionImport: "create", ActionExport: "search-type", ActionRestore: "update",
		ActionFHIRRead: "read", ActionFHIRSearch: "search-type", ActionFHIRCreate: "create", ActionFHIRUpdate: "update", ActionFHIRExport: "search-type",
		ActionFHIRMatch: "operation", ActionMatch: "operation"}[e.Action]
	crud := map[string]string{"read": "R", "search-type": "E", "create": "C", "update": "U", "delete": "D", "operation": "E"}[interaction]
	outcome := "0"
	switch {
	case e.Outcome.Status >= 500:
		outcome = "8"
	case e.Outcome.Status >= 400:
		outcome = "4"
	}
	entities := []any{}
	if e.ObjectID != "" || e.Section != "" {
		entities = append(entities, map[string]any{
			"what": map[string]any{"identifier": map[string]any{"system": "urn:praxis:" + e.Section, "value": e.ObjectID}},
			"type": map[string]any{"system": "http://terminology.hl7.org/CodeSystem/audit-entity-type", "code": "2", "display": "System Object"},
		})
	}
	for _, c := range e.CustomerIDs {
		entities = append(entities, map[string]any{
			"what": map[string]any{"reference": fmt.Sprintf("Patient/%d", c)},
			"type": map[string]any{"system": "http://terminology.hl7.org/CodeSystem/audit-entity-type", "code": "1", "display": "Person"},
			"role": map[string]any{"system": "http://terminology.hl7.org/CodeSystem/object-role", "code": "1", "display": "Patient"},
		})
	}
	return map[string]any{
		"resourceType": "AuditEvent",
		"id":           e.ID,
		"meta":         map[string]any{"profile": []string{"https://profiles.ihe.net/ITI/BALP/StructureDefinition/IHE.BasicAudit." + balpProfile(interaction, len(e.CustomerIDs) > 0)}},
		"type":         map[string]any{"system": "http://terminology.hl7.org/CodeSystem/audit-event-type", "code": "rest", "display": "RESTful Operation"},
		"subtype":      []any{map[string]any{"system": "http://hl7.org/fhir/restful-interaction", "code": interaction}},
		"action":       crud,
		"recorded":     e.Time.UTC().Format(time.RFC3339Nano),
		"outcome":      outcome,
		"outcomeDesc":  fmt.Sprintf("%d %s", e.Outcome.Status, e.Outcome.Reason),
		"agent": []any{map[string]any{
			"type":      map[string]any{"system": "urn:praxis:agent-type", "code": e.Agent.Type},
			"who":       map[string]any{"identifier": map[string]any{"value": e.Agent.ID}, "display": e.Agent.Name},
			"requestor": true,
			"network":   map[string]any{"address": e.Source.Address, "type": "2"},
		}},
		"source": map[string]any{
			"site":     company.String(),
			"observer": map[string]any{"display": "praxis"},
			"type":     []any{map[string]any{"system": "http://terminology.hl7.org/CodeSystem/security-source-type", "code": "4", "display": "Application Server"}},
		},
		"entity":    entities,
		"extension": []any{map[string]any{"url": "urn:praxis:trace-id", "valueString": e.TraceID}},
	}
}

func balpProfile(interaction string, patient bool) string {
	name := map[string]string{"read": "Read", "search-type": "Query", "create": "Create", "update": "Update", "delete": "Delete"}[interaction]
	if patient {
		return "Patient" + name
	}
	return name
}
