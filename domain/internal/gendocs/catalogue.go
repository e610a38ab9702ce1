// The Markdown written from the table of sections: the field catalogue
// (docs/sections.md) and the generated blocks of other documents. It lives
// beside the command that writes them, not in the domain the table is of.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/praxis-health/praxis/domain"
)

// bespokeSections say, for the sections without a Kind, where their rules are told.
var bespokeSections = map[string]string{
	"booking": "Online booking: the bookable users, locations and services, free slots and `POST booking/appointments`. " +
		"Hand-written (`adapters/httpapi/booking_handler.go`, `app/usecase/booking.go`, `domain/slots`); see docs/integrators/booking.md.",
	"files": "The practice's files, uploads of the devices included: list, metadata, download with `Range`, `POST files` (multipart, the upload rules). " +
		"Hand-written (`adapters/httpapi/files_handler.go`, `app/usecase/files.go`); see docs/integrators/files.md.",
	"company": "The token's own company: `GET company`. Hand-written (`adapters/httpapi/company_handler.go`).",
}

// Catalogue is the field catalogue of the resource API in Markdown, written
// from the table of sections: docs/sections.md is this text, and a test
// fails when that file is stale (go generate ./domain/... writes it).
func Catalogue() string {
	var b strings.Builder
	b.WriteString("# The sections of the resource API\n\n")
	b.WriteString("Generated from the table of sections (`domain/section.go`) by `go generate ./domain/...`; do not edit by hand.\n")
	b.WriteString("Each section is served under `/api/oauth/v2/resource/<slug>` with the scopes `<slug>:read` and `<slug>:write`.\n")
	fmt.Fprintf(&b, "The numbers (§1 to §%d) are the table's order; code comments cite them as `docs/sections.md §N`.\n", len(domain.Sections))
	b.WriteString("A field's rules are its schema's: every failing field of a request is answered at once (422 `errors[]`).\n")
	b.WriteString("Rules a schema cannot state (checksums beyond formats, dates against today, rules across fields) are in the payload's `check` method (`domain/record_*.go`, `domain/master_*.go`, `domain/customer_data.go`, `domain/appointment.go`).\n")
	for i, s := range domain.Sections {
		fmt.Fprintf(&b, "\n## §%d `%s`\n\n", i+1, s.Slug)
		k := s.Kind
		if k == nil {
			b.WriteString(bespokeSections[s.Slug] + "\n")
			continue
		}
		writeKind(&b, k)
	}
	return b.String()
}

func writeKind(b *strings.Builder, k *domain.Kind) {
	ops := []string{"`GET " + k.Slug + "` (the sync feed)", "`GET " + k.Slug + "/{id}`"}
	if !k.ReadOnly {
		ops = append(ops, "`POST "+k.Slug+"`")
	}
	if k.Patch {
		ops = append(ops, "`PATCH "+k.Slug+"/{id}` (a JSON merge patch, validated whole)")
	}
	for _, a := range k.Actions {
		ops = append(ops, "`"+a+"`")
	}
	shape := map[domain.Shape]string{domain.ShapeCustomer: "the practice's patients (numeric ids)", domain.ShapeRecord: "records of one customer",
		domain.ShapeMasterData: "company-wide master data"}[k.Shape]
	if k.ReadOnly {
		shape += ", written by the operator's import"
	}
	fmt.Fprintf(b, "%s, payload `%s`. Operations: %s.\n", upperFirst(shape), k.Name, strings.Join(ops, ", "))
	var filters []string
	if k.HasCustomer() {
		filters = append(filters, "`customer_id`")
	}
	if k.Calendar {
		filters = append(filters, "`user_id`", "`location_id`", "`from`", "`to`")
	}
	for _, f := range k.Filters {
		filters = append(filters, "`"+f+"`")
	}
	if len(filters) > 0 {
		fmt.Fprintf(b, "List filters beside `limit`, `cursor`, `updated_since`, `include_deleted`: %s.\n", strings.Join(filters, ", "))
	}
	if len(k.Hooks) > 0 {
		hooks := make([]string, len(k.Hooks))
		for i, h := range k.Hooks {
			hooks[i] = "`" + string(h) + "`"
		}
		fmt.Fprintf(b, "Store hooks on every write and delete: %s.\n", strings.Join(hooks, ", "))
	}
	if len(k.Immutable) > 0 {
		fmt.Fprintf(b, "A PATCH may not change: `%s`.\n", strings.Join(k.Immutable, "`, `"))
	}
	b.WriteString("\n| field | type | required | rules |\n|---|---|---|---|\n")
	writeFields(b, "", k.Schemas().Input)
}

// writeFields writes one row per property of schema, nested objects' properties as a.b, items as a[].b.
func writeFields(b *strings.Builder, prefix string, schema map[string]any) {
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	for _, name := range sortedKeys(props) {
		p, _ := props[name].(map[string]any)
		typ, _ := p["type"].(string)
		if typ == "array" {
			if items, ok := p["items"].(map[string]any); ok {
				it, _ := items["type"].(string)
				typ = "array of " + it
			}
		}
		req := ""
		if slices.Contains(required, any(name)) {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s%s` | %s | %s | %s |\n", prefix, name, typ, req, rulesOf(p))
		if _, ok := p["properties"]; ok {
			writeFields(b, prefix+name+".", p)
		}
		if items, ok := p["items"].(map[string]any); ok {
			if _, ok := items["properties"]; ok {
				writeFields(b, prefix+name+"[].", items)
			}
		}
	}
}

// rulesOf states a property's schema rules in words.
func rulesOf(p map[string]any) string {
	var rules []string
	if f, ok := p["format"].(string); ok {
		rules = append(rules, domain.FormatDescription(f))
	}
	if e, ok := p["enum"].([]any); ok {
		vals := make([]string, len(e))
		for i, v := range e {
			vals[i] = fmt.Sprint(v)
		}
		rules = append(rules, "one of "+strings.Join(vals, ", "))
	}
	for _, r := range []struct{ key, format string }{{"minimum", "at least %v"}, {"maximum", "at most %v"}, {"minLength", "at least %v characters"},
		{"maxLength", "at most %v characters"}, {"minItems", "at least %v items"}, {"maxItems", "at most %v items"}} {
		if v, ok := p[r.key]; ok {
			rules = append(rules, fmt.Sprintf(r.format, v))
		}
	}
	switch pattern, _ := p["pattern"].(string); pattern {
	case "":
	case `\S`:
		rules = append(rules, "not blank")
	default:
		rules = append(rules, "matches `"+pattern+"`")
	}
	if p["uniqueItems"] == true {
		rules = append(rules, "no repeated item")
	}
	return strings.ReplaceAll(strings.Join(rules, "; "), "|", "\\|")
}

// sortedKeys is a map's keys in sorted order, so documents are stable.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Generated blocks in files outside Go (the CRD's scope enum, the documents'
// lists of sections) stand between a line holding "generated from the table
// of sections (NAME)" and one holding "end of generated (NAME)", in the
// file's own comment syntax.
func generatedMarkers(name string) (begin, end string) {
	return "generated from the table of sections (" + name + "): go generate ./domain/...", "end of generated (" + name + ")"
}

// ScopeEnum is the YAML enum of every scope, in the table's order, each
// line indented by indent: the OAuthClient CRD's list of allowed scopes.
func ScopeEnum(indent string) string {
	var b strings.Builder
	b.WriteString(indent + "enum:\n")
	for _, s := range domain.SupportedScopes() {
		b.WriteString(indent + "  - " + string(s) + "\n")
	}
	return b.String()
}

// SectionList is the OAuth how-to's list of every section slug, in the table's order.
func SectionList(string) string {
	slugs := make([]string, len(domain.Sections))
	for i, s := range domain.Sections {
		slugs[i] = "`" + s.Slug + "`"
	}
	return wrap(strings.Join(slugs, ", ")+" — e.g. `customers:write`.", 100) + "\n"
}

// ImportLines is one import line of every kind of the table, its example as
// the OpenAPI document shows it, for the documents.
func ImportLines(string) string {
	var b strings.Builder
	b.WriteString("```\n")
	for _, k := range domain.Kinds() {
		var data bytes.Buffer
		if err := json.Compact(&data, []byte(k.ExampleWith(domain.SampleIDs))); err != nil {
			panic(err) // the table's examples are ours; the domain tests decode each
		}
		fmt.Fprintf(&b, `{"section":%q,"id":%s,"data":%s}`+"\n", k.Slug, k.AppendID(nil, exampleID(k)), data.String())
	}
	return b.String() + "```\n"
}

// exampleID is the id the commands page's import lines give an object of k.
func exampleID(k *domain.Kind) string {
	if k.NumericIDs() {
		return "1042"
	}
	return "019cd6df-a538-78f7-9da1-494c73cf256d"
}

// bespokeOperations are the operations of the sections that offer more
// than the table's generic ones, for the resource API's table.
var bespokeOperations = map[string]string{
	"company": "`GET company`",
	"booking": "`GET booking/users`, `booking/locations`, `booking/services`, `booking/slots`; `POST booking/appointments`",
	"appointments": "`GET /x` (also `?user_id=`, `?location_id=`, `?from=&to=`), `GET /x/{id}`, `POST /x`, `PATCH /x/{id}`, " +
		"`POST /x/{id}/cancel`",
	"files": "`GET files`, `GET files/{id}`, `GET files/{id}/download` (`Range`), `POST files`",
}

// SectionOperations is the resource API how-to's table of every section's operations:
// the bespoke ones as they are, the generic ones grouped by what they offer.
func SectionOperations(string) string {
	type group struct {
		ops   string
		slugs []string
	}
	var groups []*group
	add := func(slug, ops string) {
		for _, g := range groups {
			if g.ops == ops {
				g.slugs = append(g.slugs, "`"+slug+"`")
				return
			}
		}
		groups = append(groups, &group{ops: ops, slugs: []string{"`" + slug + "`"}})
	}
	for _, s := range domain.Sections {
		if ops, ok := bespokeOperations[s.Slug]; ok {
			add(s.Slug, ops)
			continue
		}
		ops := "`GET /x`, `GET /x/{id}`"
		switch k := s.Kind; {
		case k.ReadOnly:
			ops += " — written by the operator's import"
		case k.Patch:
			ops += ", `POST /x`, `PATCH /x/{id}` (JSON merge patch, validated whole)"
		default:
			ops += ", `POST /x`"
		}
		add(s.Slug, ops)
	}
	var b strings.Builder
	b.WriteString("| sections | operations |\n|---|---|\n")
	for _, g := range groups {
		b.WriteString("| " + strings.Join(g.slugs, ", ") + " | " + g.ops + " |\n")
	}
	return b.String()
}

// wrap breaks text into lines of at most width characters at spaces.
func wrap(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// ReplaceGenerated rewrites the block NAME of text with block(indent), the
// indent being the begin marker line's leading white space; false when text
// has no such block.
func ReplaceGenerated(text, name string, block func(indent string) string) (string, bool) {
	beginMarker, endMarker := generatedMarkers(name)
	begin, end := strings.Index(text, beginMarker), strings.Index(text, endMarker)
	if begin < 0 || end < begin {
		return text, false
	}
	lineStart := strings.LastIndexByte(text[:begin], '\n') + 1
	line := text[lineStart:begin]
	indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	bodyStart := begin + strings.IndexByte(text[begin:], '\n') + 1
	endLine := strings.LastIndexByte(text[:end], '\n') + 1
	return text[:bodyStart] + block(indent) + text[endLine:], true
}
