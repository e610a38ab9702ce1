package domain

import (
	"slices"
	"strings"
	"sync"
)

// Scope is one permission: "<section>:read" or "<section>:write".
type Scope string

// ReadScope and WriteScope name a section's two scopes.
func ReadScope(section string) Scope  { return Scope(section + ":read") }
func WriteScope(section string) Scope { return Scope(section + ":write") }

// ScopeCompanyRead guards the company profile.
var ScopeCompanyRead = ReadScope("company")

// AllScopes is the scope catalogue: both scopes of every section, in section order.
func AllScopes() Scopes {
	out := make(Scopes, 0, 2*len(Sections))
	for _, s := range Sections {
		if !s.OptIn {
			out = append(out, ReadScope(s.Slug), WriteScope(s.Slug))
		}
	}
	return out
}

// ScopeAuditRead reads the company's audit trail (docs/contract.md §11). It
// is no section's and never in the default set: a client gets it only when
// it is asked for by name.
const ScopeAuditRead Scope = "audit:read"

// ScopeWebhooksRead and ScopeWebhooksWrite read and manage the company's
// webhook endpoints (docs/contract.md §12). Opt-in: an endpoint sends the
// company's changes out of this network, so a client gets them only when
// they are asked for by name.
const (
	ScopeWebhooksRead  Scope = "webhooks:read"
	ScopeWebhooksWrite Scope = "webhooks:write"
)

// ScopeDeviceBridge is a device's own credential (docs/contract.md §14):
// its bridge fetches the device's orders and reports on them, and nothing
// else — no list of the company's orders, no patient.
const ScopeDeviceBridge Scope = "devices:bridge"

// ScopeSettingsWrite is staff's own: changing the practice's settings that
// no API section has (its clients, the upload secret, its members). No
// OAuth client holds it (it is not among SupportedScopes): a settings
// admin's grant does (staff.Role.Scopes).
const ScopeSettingsWrite Scope = "settings:write"

// ReadScopes are the scopes of scopes that only read.
func ReadScopes(scopes Scopes) Scopes {
	var out Scopes
	for _, s := range scopes {
		if strings.HasSuffix(string(s), ":read") {
			out = append(out, s)
		}
	}
	return out
}

// OptInScopes are granted only when named, never by default: the audit
// trail, webhooks, a device's bridge, and the scopes of the opt-in sections.
var OptInScopes = func() Scopes {
	out := Scopes{ScopeAuditRead, ScopeWebhooksRead, ScopeWebhooksWrite, ScopeDeviceBridge}
	for _, s := range Sections {
		if s.OptIn {
			out = append(out, ReadScope(s.Slug), WriteScope(s.Slug))
		}
	}
	return out
}()

// SupportedScopes is every scope a client may hold: the catalogue, then the opt-in ones.
func SupportedScopes() Scopes { return append(AllScopes(), OptInScopes...) }

// Known reports whether s is in the catalogue or opt-in.
func (s Scope) Known() bool {
	_, ok := scopeIndex()[s]
	return ok
}

// scopeIndex numbers every supported scope, for Known and for ParseScopes,
// which every bearer request runs on its token's list.
var scopeIndex = sync.OnceValue(func() map[Scope]int {
	index := map[Scope]int{}
	for i, s := range SupportedScopes() {
		index[s] = i
	}
	return index
})

// Scopes is a set of scopes without duplicates, kept in the order first given.
type Scopes []Scope

// ParseScopes reads a space-delimited scope list (RFC 6749 §3.3). Every scope
// must be in the catalogue; duplicates collapse; an empty list is invalid.
func ParseScopes(list string) (Scopes, error) {
	index := scopeIndex()
	out := make(Scopes, 0, strings.Count(list, " ")+1)
	seen := make([]bool, len(index))
	for f := range strings.FieldsSeq(list) {
		i, ok := index[Scope(f)]
		if !ok {
			return nil, invalid("scope", "unknown scope "+f)
		}
		if !seen[i] {
			seen[i] = true
			out = append(out, Scope(f))
		}
	}
	if len(out) == 0 {
		return nil, invalid("scope", "no scope given")
	}
	return out, nil
}

// Contains reports whether s is in the set.
func (ss Scopes) Contains(s Scope) bool { return slices.Contains(ss, s) }

// Missing returns the first scope of want that ss lacks, and whether there is one.
func (ss Scopes) Missing(want Scopes) (Scope, bool) {
	for _, s := range want {
		if !ss.Contains(s) {
			return s, true
		}
	}
	return "", false
}

// String is the space-delimited form used in token responses and storage.
func (ss Scopes) String() string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, " ")
}

// Strings is the set as a string slice, for JSON.
func (ss Scopes) Strings() []string { return strings.Fields(ss.String()) }
