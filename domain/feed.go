package domain

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// The sync feed: every list is in change order, a keyset over (change, id).
// A change stamp orders writes by commit (the store's change clock), so a
// client that only follows its cursor receives every write exactly once.

// Cursor is a position in a section's feed: after the object id written at
// change. A sorted search's cursor (ListQuery.Sort) is instead after the
// object id whose sort keys are Keys, in the order Order spells.
type Cursor struct {
	Change int64
	ID     string
	Order  string
	Keys   []string
}

type cursorJSON struct {
	V int      `json:"v"`
	C int64    `json:"c"`
	I string   `json:"i"`
	O string   `json:"o,omitempty"`
	K []string `json:"k,omitempty"`
}

// Encode is the opaque form handed to clients: base64url of a small versioned
// object, so that its layout can change without breaking cursors in use.
func (c Cursor) Encode() string {
	b, _ := json.Marshal(cursorJSON{V: 1, C: c.Change, I: c.ID, O: c.Order, K: c.Keys})
	return base64.RawURLEncoding.EncodeToString(b)
}

// maxCursor is the longest cursor read: a sorted search's holds its keys
// (names, a date), a feed's two numbers and an id.
const maxCursor = 2048

// ParseCursor reads a cursor that Encode made.
func ParseCursor(s string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(s) > maxCursor {
		return Cursor{}, invalid("cursor", "is not a cursor this API handed out")
	}
	var c cursorJSON
	if err := json.Unmarshal(b, &c); err != nil || c.V != 1 || c.C < 0 {
		return Cursor{}, invalid("cursor", "is not a cursor this API handed out")
	}
	return Cursor{Change: c.C, ID: c.I, Order: c.O, Keys: c.K}, nil
}

// Page sizes of every list.
const (
	DefaultPageSize = 100
	MaxPageSize     = 500
)

// ListQuery is one page request of a section's feed.
type ListQuery struct {
	Limit int
	// After is where the previous page ended; nil starts at the beginning.
	After *Cursor
	// From and Below keep the changes at or above From and below Below (0:
	// no bound): an export's range on the change clock — from an earlier
	// export's cut, below its own —, one consistent state however the feed
	// moves on while it is read.
	From, Below int64
	// UpdatedSince keeps objects written at or after it: a filter, not a position.
	UpdatedSince *time.Time
	// IncludeDeleted lists tombstones in their place in the feed.
	IncludeDeleted bool
	// Customer keeps a customer's records only.
	Customer *CustomerID
	// Calendar narrows a calendar kind's list (appointments).
	Calendar CalendarFilter
	// Dump lists every committed change, also those the feed still holds
	// back because an older transaction may yet commit before them: for a
	// one-pass read (an export) that no client resumes later.
	Dump bool
	// IncludeCustomers answers the customers of the page's records beside
	// it (include=customer; needs customers:read).
	IncludeCustomers bool
	// Fields keeps objects whose payload field (one of the kind's Filters)
	// has the value.
	Fields map[string]string
	// Where keeps the objects that meet every condition — the files' list:
	// SearchStored, SearchCategory, SearchContentType, SearchExamination,
	// SearchID, and for GDT results SearchCode and SearchObserved; a
	// generic section's: SearchPayload, SearchStored, SearchID, and where
	// it declares HookObserved SearchCode and SearchObserved, held by one
	// of its observed rows — a filter of the feed, whose order, cursor and
	// hold-back stay.
	Where []Condition
	// Search keeps the customers that meet every condition (the customers'
	// list only: domain/patient_search.go); the feed's order and cursor stay.
	Search []Condition
	// Total asks for the count of what the filters keep, besides the page.
	Total TotalMode
	// Sort answers a search in the order of these keys, then the id,
	// instead of the feed's (the customers' list only).
	Sort []SortBy
}

// Searches tells whether q is a patient search (Search, Total or Sort):
// it reads the store's index and answers what is committed now.
func (q ListQuery) Searches() bool {
	return len(q.Search) > 0 || q.Total != TotalNone || len(q.Sort) > 0
}

// MaxBatchIDs is how many objects one read by ids (ids=) may ask for.
const MaxBatchIDs = 100

// BatchQuery is a read of many objects of one section by id (ids=).
type BatchQuery struct {
	IDs              []string
	IncludeDeleted   bool
	IncludeCustomers bool
}

// CalendarFilter keeps the appointments of one user, of one location, or
// whose start lies on the local dates From … To. The use case turns the
// dates into the instants StartsFrom and StartsBefore in the company's zone.
type CalendarFilter struct {
	User, Location           *UUID
	From, To                 *Date
	StartsFrom, StartsBefore *time.Time
}

// Instants sets StartsFrom and StartsBefore from the dates, read in zone.
func (f *CalendarFilter) Instants(zone *time.Location) {
	if f.From != nil {
		t := f.From.Time()
		from := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, zone)
		f.StartsFrom = &from
	}
	if f.To != nil {
		t := f.To.Time()
		before := time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, zone)
		f.StartsBefore = &before
	}
}

// Any reports whether the filter narrows anything.
func (f CalendarFilter) Any() bool {
	return f.User != nil || f.Location != nil || f.StartsFrom != nil || f.StartsBefore != nil
}
