package ports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/patientmatch"
	"github.com/praxis-health/praxis/domain/slots"
)

// StoredObject is one object of a generic section as the store keeps it.
type StoredObject struct {
	// ID is a UUID, or a customer number in decimal.
	ID       string
	Customer *domain.CustomerID
	// Payload is the object's fields as answered, a JSON object.
	Payload []byte
	// Version is the object's own count of its changes: 1 when made, one
	// more with every write and with its deletion.
	Version   int64
	Change    int64
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt *time.Time
}

// Append appends o to b as the resource API answers it (a tombstone for a
// deleted object): the one rendering of a stored object, which every door
// that speaks the native JSON writes with.
func (o StoredObject) Append(b []byte, kind *domain.Kind) []byte {
	if o.DeletedAt != nil {
		return domain.AppendTombstone(b, o.ID, kind.NumericIDs(), *o.DeletedAt)
	}
	return domain.AppendObject(b, o.ID, kind.NumericIDs(), o.Payload, o.Version, o.CreatedAt, o.UpdatedAt)
}

// JSON is o as Append writes it, in a buffer sized for it.
func (o StoredObject) JSON(kind *domain.Kind) []byte {
	return o.Append(make([]byte, 0, len(o.Payload)+domain.ObjectOverhead), kind)
}

// ParseObject reads back an object that Append wrote (never a tombstone):
// how an Idempotency-Key's saved answer, kept in the resource API's JSON, is
// the object again. The payload is the fields between the id and the
// version, byte for byte, so that Append renders the object as it was.
func ParseObject(kind *domain.Kind, b []byte) (StoredObject, error) {
	var head struct {
		ID         json.RawMessage `json:"id"`
		CustomerID *int64          `json:"customer_id"`
		Version    int64           `json:"version"`
		CreatedAt  time.Time       `json:"created_at"`
		UpdatedAt  time.Time       `json:"updated_at"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return StoredObject{}, fmt.Errorf("a saved object: %w", err)
	}
	prefix := len(`{"id":`) + len(head.ID)
	end := bytes.LastIndex(b, []byte(`,"version":`))
	if !bytes.HasPrefix(b, []byte(`{"id":`)) || end < prefix || head.Version < 1 {
		return StoredObject{}, errors.New("a saved object: not an object as Append writes it")
	}
	payload := append(append([]byte{'{'}, bytes.TrimPrefix(b[prefix:end], []byte{','})...), '}')
	o := StoredObject{Payload: payload, Version: head.Version, CreatedAt: head.CreatedAt, UpdatedAt: head.UpdatedAt}
	if kind.NumericIDs() {
		o.ID = string(head.ID)
	} else if err := json.Unmarshal(head.ID, &o.ID); err != nil {
		return StoredObject{}, fmt.Errorf("a saved object's id: %w", err)
	}
	if head.CustomerID != nil && kind.HasCustomer() {
		c := domain.CustomerID(*head.CustomerID)
		o.Customer = &c
	}
	return o, nil
}

// AppendObjects appends objs to b as one JSON array, each as Append writes
// it; a nil b gets a buffer that the array fills without growing.
func AppendObjects(b []byte, kind *domain.Kind, objs []StoredObject) []byte {
	if b == nil {
		size := 2
		for _, o := range objs {
			size += len(o.Payload) + domain.ObjectOverhead
		}
		b = make([]byte, 0, size)
	}
	b = append(b, '[')
	for i, o := range objs {
		if i > 0 {
			b = append(b, ',')
		}
		b = o.Append(b, kind)
	}
	return append(b, ']')
}

// Page is one page of a section's feed. Next is where it ended (the
// request's own cursor when it is empty): the resume point of a sync.
type Page struct {
	Items   []StoredObject
	Next    domain.Cursor
	HasMore bool
	// Total is how many objects the query's filters keep, when it asked
	// (ListQuery.Total): counted, or the planner's estimate.
	Total *int64
}

// RecordStore keeps the objects of every generic section: customers in their
// own table, the record kinds in one table. Every call names the company and
// sees only its objects. Writes must run inside Transactor.InTx: each is
// stamped by the change clock of that transaction.
type RecordStore interface {
	// Insert stores a new object. A customer without an id gets the next number.
	Insert(ctx context.Context, company domain.CompanyID, kind *domain.Kind, obj StoredObject) (StoredObject, error)
	// Update replaces a live object's payload; domain.ErrNotFound when there is none.
	Update(ctx context.Context, company domain.CompanyID, kind *domain.Kind, id string, payload []byte, at time.Time) (StoredObject, error)
	// Delete turns a live object into a tombstone.
	Delete(ctx context.Context, company domain.CompanyID, kind *domain.Kind, id string, at time.Time) error
	// Get returns a live object; domain.ErrNotFound for a missing, deleted or
	// another company's one. forUpdate locks it for the rest of the transaction.
	Get(ctx context.Context, company domain.CompanyID, kind *domain.Kind, id string, forUpdate bool) (StoredObject, error)
	// List pages through the section's feed in change order. Only writes that
	// can no longer be overtaken by an earlier, still open transaction are listed.
	List(ctx context.Context, company domain.CompanyID, kind *domain.Kind, q domain.ListQuery) (Page, error)
	// Lookup finds the live objects of section among ids, for reference checks.
	Lookup(ctx context.Context, company domain.CompanyID, section string, ids []string) (map[string]domain.RefTarget, error)
	// Values lists a top-level field of the kind's live objects whose field
	// match equals value (e.g. the receipt numbers of one register).
	Values(ctx context.Context, company domain.CompanyID, kind *domain.Kind, match, value, field string) ([]string, error)
	// All lists every live object of company-wide kinds (master data) in
	// one query: a list per kind, in id order.
	All(ctx context.Context, company domain.CompanyID, kinds ...*domain.Kind) ([][]StoredObject, error)
	// Existing returns the objects among ids, live or deleted, by id.
	Existing(ctx context.Context, company domain.CompanyID, kind *domain.Kind, ids []string) (map[string]StoredObject, error)
	// Put stores objects under their given ids in one statement: new ones
	// are inserted, existing ones (deleted ones too) replaced and made live.
	// An id taken by another company's object is domain.ErrConflict.
	Put(ctx context.Context, company domain.CompanyID, kind *domain.Kind, objs []StoredObject, existing map[string]StoredObject, at time.Time) error
	// Analyze refreshes the planner's statistics of the tables that hold
	// kinds, after a bulk write (outside a transaction).
	Analyze(ctx context.Context, kinds ...*domain.Kind) error
}

// SavedWrite is a write's first answer as an Idempotency-Key keeps it: the
// outcome, the location, and the value written in the encoding of the use
// case that wrote it (an object as the resource API renders it, which is
// what keys saved by earlier builds hold too).
type SavedWrite struct {
	Outcome  domain.Outcome
	Location string
	Value    []byte
}

// IdempotencyKey identifies a request that may be retried: the client's key
// and a fingerprint of what was asked (method, path, body).
type IdempotencyKey struct {
	Key         string
	Fingerprint []byte
}

// IdempotencyStore keeps the first answer under each key, in the transaction
// of its effect, for 24 hours (IdempotencyWindow): an older key is claimed anew.
type IdempotencyStore interface {
	// Find returns the saved answer of a key claimed and committed within the window, or nil.
	Find(ctx context.Context, company domain.CompanyID, client domain.ClientID, key IdempotencyKey) (*SavedWrite, error)
	// Claim takes key for this transaction. When the key is already taken it
	// returns the saved answer; another fingerprint is domain.ErrIdempotencyKeyReused.
	// A concurrent transaction claiming the same key waits for this one.
	Claim(ctx context.Context, company domain.CompanyID, client domain.ClientID, key IdempotencyKey, at time.Time) (*SavedWrite, error)
	// Save records the answer of a claimed key.
	Save(ctx context.Context, company domain.CompanyID, client domain.ClientID, key IdempotencyKey, answer SavedWrite) error
}

// IdempotencyWindow is how long a key answers retries.
const IdempotencyWindow = 24 * time.Hour

// Written is a write's answer, for each door to render in its own wire:
// what the write came to (its outcome: the status every door answers and
// the audit event records, domain.Outcome), where a made thing is (its
// section and id, "customers/7"), the value the write left (zero when the
// outcome is OutcomeNoContent), and whether this is a retried key's replay
// of the first answer, which the store kept.
type Written[T any] struct {
	Outcome  domain.Outcome
	Location string
	Value    T
	Replayed bool
}

// WrittenObject is the answer of a write to an object of a generic
// section: the object as the write left it (its version is the ETag).
type WrittenObject = Written[StoredObject]

// RecordPage is a page of a section's feed as the records' port answers
// it; with include=customer (ListQuery.IncludeCustomers) the customers its
// objects name beside it, once each: live ones, and tombstones of those
// deleted since.
type RecordPage struct {
	Page
	Customers []StoredObject
}

// Batch is the answer to a read of many objects by id: the found ones in
// the order asked, and the ids found nowhere in the company.
type Batch struct {
	Items    []StoredObject
	NotFound []string
	// Customers are the customers of Items, as in RecordPage, when they
	// were asked for (BatchQuery.IncludeCustomers).
	Customers []StoredObject
}

// Write is how a client names its write: the version it read (If-Match)
// and its Idempotency-Key, either of which may be absent.
type Write struct {
	IfMatch domain.Precondition
	Key     *IdempotencyKey
}

// Records is the driving port of every generic section of the resource API.
type Records interface {
	// List answers a page of the feed; with q.IncludeCustomers, the page's
	// customers beside it.
	List(ctx context.Context, grant domain.Grant, kind *domain.Kind, q domain.ListQuery) (RecordPage, error)
	// Batch answers the objects among ids, in the order asked; tombstones
	// only with q.IncludeDeleted. Another company's ids are not found.
	Batch(ctx context.Context, grant domain.Grant, kind *domain.Kind, q domain.BatchQuery) (Batch, error)
	// Get answers one live object of the company.
	Get(ctx context.Context, grant domain.Grant, kind *domain.Kind, id string) (StoredObject, error)
	// Match answers the patients asked (what is known of one: a customer's
	// fields, patientmatch.FactsOf) may be, best first, at most count (0:
	// all candidates found).
	Match(ctx context.Context, grant domain.Grant, asked patientmatch.Facts, count int) ([]Match, error)
	// MatchOnce is the native match, asked under the request's Idempotency-Key.
	MatchOnce(ctx context.Context, grant domain.Grant, req patientmatch.Request, key *IdempotencyKey) (Written[[]Match], error)
	// Create makes an object of the fields body holds, once judged by the kind.
	Create(ctx context.Context, grant domain.Grant, kind *domain.Kind, body domain.Document, key *IdempotencyKey) (WrittenObject, error)
	// Patch applies a merge patch if the object is still at the version
	// w names (else a *domain.StaleVersion, nothing written).
	Patch(ctx context.Context, grant domain.Grant, kind *domain.Kind, id string, patch domain.Document, w Write) (WrittenObject, error)
}

// Match is one candidate of a match: the customer, its score in [0, 1]
// and its grade.
type Match struct {
	Customer StoredObject
	Score    float64
	Grade    patientmatch.Grade
}

// AppendMatches appends the candidates of a match to b as the resource API
// answers them: {"data":[{"score":…,"grade":…,"customer":{…}}]}.
func AppendMatches(b []byte, matches []Match) []byte {
	b = append(b, `{"data":[`...)
	for i, m := range matches {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"score":`...)
		b = strconv.AppendFloat(b, m.Score, 'f', -1, 64)
		b = append(append(append(b, `,"grade":"`...), m.Grade...), `","customer":`...)
		b = append(m.Customer.Append(b, domain.CustomersKind()), '}')
	}
	return append(b, "]}"...)
}

// ParseMatches reads back what AppendMatches wrote (an Idempotency-Key's
// saved answer).
func ParseMatches(b []byte) ([]Match, error) {
	var saved struct {
		Data []struct {
			Score    float64            `json:"score"`
			Grade    patientmatch.Grade `json:"grade"`
			Customer json.RawMessage    `json:"customer"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &saved); err != nil {
		return nil, fmt.Errorf("a saved match: %w", err)
	}
	matches := make([]Match, len(saved.Data))
	for i, m := range saved.Data {
		customer, err := ParseObject(domain.CustomersKind(), m.Customer)
		if err != nil {
			return nil, err
		}
		matches[i] = Match{Customer: customer, Score: m.Score, Grade: m.Grade}
	}
	return matches, nil
}

// OfferedPage is a page of what the booking widget may book, in id order:
// Next is the cursor after its last (the request's own on an empty page).
type OfferedPage struct {
	Items   []domain.Offering
	Next    domain.Cursor
	HasMore bool
}

// Calendar reads what appointments block of their users' time: the record
// store writes each appointment's span with it, in the same transaction.
type Calendar interface {
	// Busy appends to dst the active spans of users that overlap [from,
	// until), sorted by user, then start.
	Busy(ctx context.Context, company domain.CompanyID, users []domain.UUID, from, until time.Time, dst []slots.Busy) ([]slots.Busy, error)
	// Lock serializes the bookings of one user until the transaction ends.
	Lock(ctx context.Context, company domain.CompanyID, user domain.UUID) error
	// Blocking answers the ids of the active appointments of user whose
	// blocked time overlaps [from, until).
	Blocking(ctx context.Context, company domain.CompanyID, user domain.UUID, from, until time.Time) ([]string, error)
}

// Booking serves a public booking widget (docs/sections.md §1).
type Booking interface {
	// Offered lists the bookable users, locations or services (section), narrowed by q.
	Offered(ctx context.Context, grant domain.Grant, section string, q domain.BookingQuery) (OfferedPage, error)
	// Slots hands answer what the free slots of q depend on (domain.Slots
	// computes them); it holds pooled buffers only while answer runs.
	Slots(ctx context.Context, grant domain.Grant, q domain.SlotRequest, answer func(slots.Query) error) error
	// Book books a free slot; domain.ErrSlotUnavailable when it is not, or no longer, free.
	Book(ctx context.Context, grant domain.Grant, body domain.Document, key *IdempotencyKey) (WrittenObject, error)
}

// Appointments adds the appointments' own step to the generic section.
type Appointments interface {
	// Cancel ends a booked or arrived appointment: its slot is free at once.
	Cancel(ctx context.Context, grant domain.Grant, id string, body domain.Document, w Write) (WrittenObject, error)
}
