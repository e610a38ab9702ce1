// Package smart is SMART Backend Services as praxis grants it
// (docs/integrators/fhir.md): a client signs in with a JWT it signs with its
// own key (RFC 7523, private_key_jwt), and may ask for SMART's system
// scopes, which are granted as the praxis scopes they mean.
package smart

import (
	"slices"
	"strings"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// ClientAssertionType is RFC 7523's client_assertion_type.
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// MaxAssertionLifetime bounds how far ahead an assertion's exp may lie.
const MaxAssertionLifetime = 5 * time.Minute

// AssertionTokenTTL bounds a token of a client that signs in by assertion
// (SMART: expires_in SHOULD NOT exceed 300).
const AssertionTokenTTL = 300 * time.Second

// AssertionAlgorithms are the signatures an assertion may carry: SMART's
// RS384 and ES384, and their SHA-256 siblings.
var AssertionAlgorithms = []string{"RS384", "ES384", "RS256", "ES256"}

// FHIRTypes are the FHIR resource types praxis serves and the sections they
// view (adapters/fhir serves them; its test holds the two alike).
var FHIRTypes = map[string]string{
	"Patient": "customers", "Practitioner": "users", "Organization": "company", "Location": "locations",
	"HealthcareService": "services", "Appointment": "appointments", "Condition": "diagnoses", "Observation": "measurements",
	"DiagnosticReport": "lab-results", "ServiceRequest": "device-orders", "DocumentReference": "files", "Binary": "files",
	"Schedule": "service-assignments", "Slot": "booking",
}

// ScopesOf is what one SMART system scope means in praxis scopes:
// v2 (`system/Patient.rs`, any of c r u d s) and v1 (`system/Patient.read`,
// `.write`, `.*`), a type or `*` for every served type. Reading (r, s) is
// the section's read scope; writing (c, u, d) its write scope, and for
// Appointment the booking's (a FHIR Appointment is booked). ok is false
// for anything else.
func ScopesOf(scope string) (out domain.Scopes, ok bool) {
	rest, ok := strings.CutPrefix(scope, "system/")
	if !ok {
		return nil, false
	}
	typ, perm, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, false
	}
	var read, write bool
	switch perm {
	case "read":
		read = true
	case "write":
		write = true
	case "*":
		read, write = true, true
	default:
		if perm == "" || strings.Trim(perm, "cruds") != "" || !isOrdered(perm, "cruds") {
			return nil, false
		}
		read, write = strings.ContainsAny(perm, "rs"), strings.ContainsAny(perm, "cud")
	}
	types := []string{typ}
	if typ == "*" {
		types = types[:0]
		for t := range FHIRTypes {
			types = append(types, t)
		}
		slices.Sort(types)
	} else if _, served := FHIRTypes[typ]; !served {
		return nil, false
	}
	supported := domain.SupportedScopes()
	add := func(s domain.Scope) {
		if supported.Contains(s) && !out.Contains(s) {
			out = append(out, s)
		}
	}
	for _, t := range types {
		section := FHIRTypes[t]
		if read {
			add(domain.ReadScope(section))
		}
		if write {
			add(domain.WriteScope(section))
			if t == "Appointment" {
				add(domain.WriteScope("booking"))
			}
		}
	}
	return out, len(out) > 0
}

// isOrdered reports whether perm's letters come in the order of all, each once.
func isOrdered(perm, all string) bool {
	at := 0
	for _, r := range perm {
		i := strings.IndexRune(all[at:], r)
		if i < 0 {
			return false
		}
		at += i + 1
	}
	return true
}

// ParseRequestedScopes reads a token request's scope: praxis scopes and
// SMART system scopes, the latter granted as the praxis scopes they mean.
func ParseRequestedScopes(list string) (domain.Scopes, error) {
	var praxis []string
	for f := range strings.FieldsSeq(list) {
		if !strings.HasPrefix(f, "system/") {
			praxis = append(praxis, f)
			continue
		}
		meant, ok := ScopesOf(f)
		if !ok {
			return nil, &domain.ValidationError{Field: "scope", Message: "unknown scope " + f + " (SMART system scopes name a served FHIR type or *, and cruds, read, write or *)"}
		}
		for _, s := range meant {
			praxis = append(praxis, string(s))
		}
	}
	return domain.ParseScopes(strings.Join(praxis, " "))
}
