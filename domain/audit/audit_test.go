package audit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
)

// TestCanonicalIsOneSpelling: the same event is the same bytes, whatever
// order and repetition its customers came in; the hash covers them.
func TestCanonicalIsOneSpelling(t *testing.T) {
	t.Parallel()
	e := audit.New(time.Date(2026, 11, 24, 9, 0, 0, 0, time.FixedZone("CET", 3600)))
	e.CustomerIDs = []domain.CustomerID{7, 3, 7}
	f := e
	f.CustomerIDs = []domain.CustomerID{3, 7}
	if !bytes.Equal(e.Canonical(), f.Canonical()) || !strings.Contains(string(e.Canonical()), `"customer_ids":[3,7]`) ||
		!strings.Contains(string(e.Canonical()), `"time":"2026-11-24T08:00:00Z"`) {
		t.Errorf("%s\n%s", e.Canonical(), f.Canonical())
	}
}

// FuzzCanonicalSpellsAsEncodingJSON: the chain hashes the canonical bytes,
// so they must never change: whatever the event holds (quotes, HTML
// characters, control and non-ASCII characters, invalid UTF-8, times far
// off), Canonical writes what encoding/json writes of the same event,
// its customers sorted and once.
func FuzzCanonicalSpellsAsEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain-7.x_y:z/ok", `say "hi"`, `a\b`, "<script>&amp;", "\x00\x1f\x7f", "Müller", "\u2028\u2029",
		"\xff\xfe", "ok\ttab", "~ !#$%'()*+,-./;=?@[]^`{|}"} {
		f.Add(s, s, int64(1795749949), int64(977123456), 403, int64(42))
	}
	f.Add("x", "y", int64(-62135596800), int64(0), 200, int64(-1))        // year 1
	f.Add("x", "y", int64(253402300800), int64(0), 200, int64(1))         // year 10000: encoding/json refuses it
	f.Add("x", "y", int64(-62198755200), int64(1), 500, int64(1<<62))     // year -1
	f.Add("x", "y", int64(253402300799), int64(999999999), 200, int64(7)) // the last instant of year 9999
	f.Fuzz(func(t *testing.T, a, b string, seconds, nanos int64, status int, customer int64) {
		e := audit.Event{ID: a, Time: time.Unix(seconds, nanos).In(time.FixedZone("X", 3600)), TraceID: b, Action: a, Section: b, ObjectID: a,
			Agent: audit.Agent{Type: b, ID: a, Name: b}, Source: audit.Source{Address: a}, Outcome: audit.Outcome{Status: status, Reason: b},
			CustomerIDs: []domain.CustomerID{domain.CustomerID(customer), 3, domain.CustomerID(customer)}}
		want := e
		want.Time = e.Time.UTC()
		want.CustomerIDs = slices.Compact(slices.Sorted(slices.Values(e.CustomerIDs)))
		expected, err := json.Marshal(want)
		if err != nil { // a year encoding/json cannot write: Canonical panics as it did
			defer func() {
				if recover() == nil {
					t.Errorf("Canonical of a time encoding/json refuses (%v) did not panic", want.Time)
				}
			}()
		}
		if got := e.Canonical(); !bytes.Equal(got, expected) {
			t.Errorf("Canonical:\n%s\nencoding/json:\n%s", got, expected)
		}
		if got := e.AppendCanonical([]byte("[{")); !bytes.Equal(got, append([]byte("[{"), expected...)) {
			t.Errorf("AppendCanonical after [{:\n%s\nencoding/json:\n%s", got, expected)
		}
	})
}

// TestVerifyNamesTheFirstBrokenLink: a chain checks out; an edited
// payload, a missing event, a reordered pair and a cut-off end are named.
func TestVerifyNamesTheFirstBrokenLink(t *testing.T) {
	t.Parallel()
	company := domain.NewCompanyID()
	var chain []audit.Sealed
	link := audit.Link{}
	for i := range 5 {
		e := audit.New(time.Now())
		e.Section = strings.Repeat("x", i)
		s := audit.Seal(company, link, e.Canonical())
		chain, link = append(chain, s), s.Link()
	}
	verify := func(events []audit.Sealed, from, head audit.Link) error {
		_, err := audit.Verify(company, from, head, func(fn func(audit.Sealed) error) error {
			for _, s := range events {
				if err := fn(s); err != nil {
					return err
				}
			}
			return nil
		})
		return err
	}
	if err := verify(chain, audit.Link{}, link); err != nil {
		t.Fatalf("an intact chain: %v", err)
	}
	if err := verify(chain[2:], chain[1].Link(), link); err != nil {
		t.Errorf("from a checkpoint: %v", err)
	}
	edited := append([]audit.Sealed(nil), chain...)
	edited[2].Payload = bytes.Replace(edited[2].Payload, []byte("xx"), []byte("xy"), 1)
	swapped := append([]audit.Sealed(nil), chain...)
	swapped[1], swapped[2] = swapped[2], swapped[1]
	for name, tc := range map[string]struct {
		events []audit.Sealed
		want   string
	}{
		"edited":    {edited, "event 3 was changed"},
		"missing":   {append(append([]audit.Sealed(nil), chain[:1]...), chain[2:]...), "event 3 follows event 1"},
		"reordered": {swapped, "event 3 follows event 1"},
		"cut off":   {chain[:4], "events after 4 are missing"},
		"other company": {func() []audit.Sealed {
			other := append([]audit.Sealed(nil), chain...)
			other[0] = audit.Seal(domain.NewCompanyID(), audit.Link{}, chain[0].Payload)
			return other
		}(), "event 1 was changed"},
	} {
		if err := verify(tc.events, audit.Link{}, link); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// TestCheckpointCatchesARewrittenChain: whoever edits an event and seals
// every later one again makes a chain that verifies on its own; a
// checkpoint recorded before the edit does not let it pass.
func TestCheckpointCatchesARewrittenChain(t *testing.T) {
	t.Parallel()
	company := domain.NewCompanyID()
	seal := func(payloads [][]byte) ([]audit.Sealed, audit.Link) {
		var chain []audit.Sealed
		link := audit.Link{}
		for _, p := range payloads {
			s := audit.Seal(company, link, p)
			chain, link = append(chain, s), s.Link()
		}
		return chain, link
	}
	payloads := [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`), []byte(`{"n":3}`)}
	original, head := seal(payloads)
	checkpoint, err := audit.ParseLink(original[1].Link().String())
	if err != nil || checkpoint.Seq != 2 {
		t.Fatalf("%v %v", checkpoint, err)
	}
	payloads[0] = []byte(`{"n":0}`)
	rewritten, newHead := seal(payloads)
	walk := func(fn func(audit.Sealed) error) error {
		for _, s := range rewritten {
			if err := fn(s); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := audit.Verify(company, audit.Link{}, newHead, walk); err != nil {
		t.Fatalf("the rewritten chain on its own: %v", err)
	}
	if _, err := audit.Verify(company, audit.Link{}, newHead, walk, checkpoint); err == nil || !strings.Contains(err.Error(), "sealed again") {
		t.Errorf("against the checkpoint: %v", err)
	}
	if _, err := audit.Verify(company, audit.Link{}, original[1].Link(), walk, head); err == nil || !strings.Contains(err.Error(), "after the chain's head") {
		t.Errorf("a checkpoint past the head: %v", err)
	}
	for _, bad := range []string{"", "3", "x:00", "0:" + strings.Repeat("0", 64), "2:abcd"} {
		if _, err := audit.ParseLink(bad); err == nil {
			t.Errorf("ParseLink(%q) accepted", bad)
		}
	}
}

// Reaches answers what reading the whole canonical event answers, even when
// a string of the event spells the key; a payload not ending in the
// canonical way is left to the caller (ok false).
func TestReachesReadsOnlyTheCustomers(t *testing.T) {
	t.Parallel()
	for _, customers := range [][]domain.CustomerID{nil, {42}, {9_999_999_999, 1, 42}, {5, 6}} {
		e := audit.New(time.Now())
		e.Agent = audit.Agent{Type: audit.AgentClient, ID: "pc_x", Name: `Kalender "customer_ids":[42]}`}
		e.ObjectID, e.CustomerIDs = `"customer_ids":[42]`, customers
		payload := e.Canonical()
		for _, c := range []domain.CustomerID{1, 42, 6, 9_999_999_999} {
			reaches, ok := audit.Reaches(payload, c)
			if !ok || reaches != slices.Contains(customers, c) {
				t.Errorf("customers %v, customer %d: reaches %v, ok %v", customers, c, reaches, ok)
			}
		}
	}
	for _, payload := range []string{`{"customer_ids":[1,x]}`, `{"customer_ids":[1]} `, `{"id":"a"}`, `{"customer_ids":[1,,2]}`} {
		if _, ok := audit.Reaches([]byte(payload), 2); ok {
			t.Errorf("%s: ok, want the caller to read it whole", payload)
		}
	}
}

// TestCursorsOfTheTrail: both doors hand out the same opaque cursor and
// read back only their own.
func TestCursorsOfTheTrail(t *testing.T) {
	for _, seq := range []int64{0, 1, 41, 1 << 40} {
		got, err := audit.ParseCursor(audit.NextCursor(seq))
		if err != nil || got != seq {
			t.Errorf("%d: read back %d %v", seq, got, err)
		}
	}
	for _, bad := range []string{"41", "", "not a cursor", domain.Cursor{Change: 3, ID: "notes"}.Encode()} {
		if _, err := audit.ParseCursor(bad); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%q: %v, want invalid", bad, err)
		}
	}
}
