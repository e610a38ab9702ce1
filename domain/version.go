package domain

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// An object's version counts its own changes: 1 when it is made, one more
// with every write and with its deletion. It is the object's, never the
// change clock's (which all companies share and would tell each the
// server's write rate). Answers carry it as "version" and as a strong ETag,
// the number in quotes.

// ErrVersionMismatch: a write named a version that is no longer the
// object's (If-Match); nothing was written. The error a use case returns is
// a *StaleVersion, which names the current one.
var ErrVersionMismatch = errors.New("the object has changed since the version the request names")

// StaleVersion is ErrVersionMismatch with the object's current version.
type StaleVersion struct{ Current int64 }

func (e *StaleVersion) Error() string {
	return "the object has changed: its current version is " + strconv.FormatInt(e.Current, 10)
}

// Unwrap makes errors.Is(err, ErrVersionMismatch) hold.
func (e *StaleVersion) Unwrap() error { return ErrVersionMismatch }

// ETag is the strong entity tag of a version: "n".
func ETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// Precondition is what a request's If-Match or If-None-Match names: any
// current version (*), or a list of versions. The zero value names
// nothing: no condition was sent.
type Precondition struct {
	Any      bool
	Versions []int64
}

// Sent reports whether the header came at all.
func (p Precondition) Sent() bool { return p.Any || len(p.Versions) > 0 }

// Matches reports whether an object at version v passes the condition.
func (p Precondition) Matches(v int64) bool {
	return p.Any || slices.Contains(p.Versions, v)
}

// CheckVersion refuses a write whose If-Match the object's current version
// does not pass; a condition not sent passes (a write without If-Match is
// accepted, unsafe between several writers).
func (p Precondition) CheckVersion(current int64) error {
	if p.Sent() && !p.Matches(current) {
		return &StaleVersion{Current: current}
	}
	return nil
}

// maxPreconditionTags bounds a header's list: a client names the version it
// read, seldom a few.
const maxPreconditionTags = 20

// ParsePrecondition reads an If-Match or If-None-Match header (RFC 9110
// §13.1): "*", or a comma-separated list of entity tags. praxis's tags are
// versions in quotes; a weak tag (W/"n") names the same version, for
// If-None-Match and the FHIR door's If-Match, and is refused where weak is
// false (the native API's If-Match compares strongly). Anything else is a
// validation error on the header, never a miss.
func ParsePrecondition(header, value string, weak bool) (Precondition, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return Precondition{}, nil
	}
	if value == "*" {
		return Precondition{Any: true}, nil
	}
	bad := func() (Precondition, error) {
		return Precondition{}, FieldErrors{{Field: header, Message: `must be "*" or entity tags such as "3" (the version in quotes), comma-separated`}}.Err()
	}
	var p Precondition
	for _, tag := range strings.Split(value, ",") {
		tag = strings.TrimSpace(tag)
		if rest, ok := strings.CutPrefix(tag, "W/"); ok {
			if !weak {
				return Precondition{}, FieldErrors{{Field: header, Message: "takes strong entity tags only, such as \"3\" (the answer's ETag)"}}.Err()
			}
			tag = rest
		}
		if len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' || len(p.Versions) == maxPreconditionTags {
			return bad()
		}
		v, err := strconv.ParseInt(tag[1:len(tag)-1], 10, 64)
		if err != nil || v < 1 || tag[1] == '0' || tag[1] == '+' {
			return bad()
		}
		p.Versions = append(p.Versions, v)
	}
	return p, nil
}

// ParseIDs reads an ids= parameter of a section whose ids are customer
// numbers (numeric) or UUIDs: 1 to MaxBatchIDs comma-separated ids, each
// answered once in the order first asked (a repeat is dropped). Each id of
// another form is an error on ids[i], its position; values are never repeated.
func ParseIDs(value string, numeric bool) ([]string, error) {
	parts := strings.Split(value, ",")
	if len(parts) > MaxBatchIDs {
		return nil, FieldErrors{{Field: "ids", Message: "names at most " + strconv.Itoa(MaxBatchIDs) + " ids"}}.Err()
	}
	form := "is not an id of this section (a lower-case UUID)"
	if numeric {
		form = "is not an id of this section (a customer number from 1 to " + strconv.FormatInt(MaxCustomerID, 10) + ")"
	}
	out := make([]string, 0, len(parts))
	seen := make(map[string]bool, len(parts))
	var errs FieldErrors
	for i, id := range parts {
		ok := ValidObjectID(id)
		if numeric {
			_, ok = ParseCustomerPathID(id)
		}
		switch {
		case !ok:
			errs.Add("ids["+strconv.Itoa(i)+"]", form)
		case !seen[id]:
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, errs.Err()
}
