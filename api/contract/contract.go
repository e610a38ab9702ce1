// Package contract compares OpenAPI documents of the API with oasdiff and
// turns what it finds into release notes. It serves the release generator
// (go generate ./api/...) and the check of make lint, never the server.
package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"

	"github.com/praxis-health/praxis/domain/release"
)

// Notes is api/notes.json: what people write about each release. The
// generator adds what oasdiff finds between the releases' documents.
type Notes struct {
	// Unreleased tells what the contract holds that the last release does
	// not; make lint refuses a changed contract without it.
	Unreleased *Entry   `json:"unreleased"`
	Releases   []*Entry `json:"releases"`
}

// Entry is the notes of one release.
type Entry struct {
	Date    string           `json:"date,omitempty"`
	Summary string           `json:"summary"`
	Notes   []release.Change `json:"notes"`
	// Accepted are the breaking changes this release makes on purpose.
	Accepted []Accepted `json:"accepted_breaking"`
}

// Accepted declares breaking changes oasdiff reports: its check, the
// operations where it is made, and why. An operation ending in * names
// every operation it begins, by method and path ("POST /api/oauth/v2/*")
// or by path alone ("/api/oauth/v2/*").
type Accepted struct {
	Check      string   `json:"check"`
	Operations []string `json:"operations"`
	Why        string   `json:"why"`
}

// covers tells whether a declares the breaking finding f.
func (a Accepted) covers(f Found) bool {
	return f.Breaking && a.Check == f.Check && slices.ContainsFunc(a.Operations, func(op string) bool { return matches(op, f.Operation) })
}

// matches tells whether an accepted operation (perhaps a prefix) names operation.
func matches(accepted, operation string) bool {
	prefix, glob := strings.CutSuffix(accepted, "*")
	if !glob {
		return accepted == operation
	}
	_, path, _ := strings.Cut(operation, " ")
	return strings.HasPrefix(operation, prefix) || strings.HasPrefix(path, prefix)
}

// Found is one change oasdiff reports between two documents.
type Found struct {
	Check     string
	Breaking  bool
	Operation string // "GET /api/oauth/v2/resource/notes"
	Text      string
}

// Compare lists every change from base to revision that oasdiff reports,
// breaking or not. Operations of the beta API owe 31 days' notice before a
// sunset, stable ones 180 (docs/contract.md §10).
func Compare(base, revision []byte) ([]Found, error) {
	loader := openapi3.NewLoader()
	s1, err := load.NewSpecInfoFromData(loader, base, "base")
	if err != nil {
		return nil, fmt.Errorf("read the base document: %w", err)
	}
	s2, err := load.NewSpecInfoFromData(loader, revision, "revision")
	if err != nil {
		return nil, fmt.Errorf("read the revised document: %w", err)
	}
	d, sources, err := diff.GetPathsDiff(diff.NewConfig(), []*load.SpecInfo{s1}, []*load.SpecInfo{s2})
	if err != nil {
		return nil, err
	}
	config := checker.NewConfig(checker.GetAllChecks(),
		checker.WithDeprecation(uint(release.MinNoticeBeta.Hours()/24), uint(release.MinNoticeStable.Hours()/24)))
	localize := checker.NewDefaultLocalizer()
	var out []Found
	for _, c := range checker.CheckBackwardCompatibilityUntilLevel(config, d, sources, checker.INFO) {
		out = append(out, Found{
			Check: c.GetId(), Breaking: c.IsBreaking(),
			Operation: c.GetOperation() + " " + c.GetPath(), Text: c.GetUncolorizedText(localize),
		})
	}
	return out, nil
}

// Undeclared are the breaking changes of found that accepted does not declare.
func Undeclared(found []Found, accepted []Accepted) []Found {
	var out []Found
	for _, f := range found {
		if f.Breaking && !slices.ContainsFunc(accepted, func(a Accepted) bool { return a.covers(f) }) {
			out = append(out, f)
		}
	}
	return out
}

// Unused are the accepted breaks that found does not hold: a declaration
// left over, or one that names the wrong check or operation.
func Unused(found []Found, accepted []Accepted) []string {
	var out []string
	for _, a := range accepted {
		for _, op := range a.Operations {
			if !slices.ContainsFunc(found, func(f Found) bool { return a.covers(f) && matches(op, f.Operation) }) {
				out = append(out, a.Check+" on "+op)
			}
		}
	}
	return out
}

// kindOf is the release-note kind of an oasdiff finding.
func kindOf(f Found) string {
	switch {
	case f.Breaking:
		return release.KindBreaking
	case strings.Contains(f.Check, "deprecated") || strings.Contains(f.Check, "sunset"):
		return release.KindDeprecated
	case strings.Contains(f.Check, "added") && !strings.Contains(f.Check, "required"):
		return release.KindAdded
	}
	return release.KindChanged
}

// Release is one release's notes as served: what people wrote, then what
// oasdiff found since the previous document (none for the first release),
// breaking first.
func Release(e *Entry, previous, document []byte) (release.Release, error) {
	r := release.Release{Date: e.Date, Summary: e.Summary, Changes: slices.Clone(e.Notes)}
	if previous != nil {
		found, err := Compare(previous, document)
		if err != nil {
			return r, err
		}
		if bad := Undeclared(found, e.Accepted); len(bad) > 0 {
			return r, fmt.Errorf("release %s: %w", e.Date, undeclaredError(bad))
		}
		if unused := Unused(found, e.Accepted); len(unused) > 0 {
			return r, fmt.Errorf("release %s: accepted_breaking %s is not a breaking change oasdiff finds", e.Date, unused[0])
		}
		r.Changes = append(r.Changes, grouped(found, e.Accepted)...)
	}
	for i := range r.Changes {
		if r.Changes[i].Operations == nil {
			r.Changes[i].Operations = []string{}
		}
		if r.Changes[i].Fields == nil {
			r.Changes[i].Fields = []string{}
		}
	}
	release.SortChanges(r.Changes)
	return r, nil
}

// grouped turns findings into changes: one per check and wording, with
// every operation it was found in (a property added to fifty responses is
// one change), a breaking one with the reason it was accepted.
func grouped(found []Found, accepted []Accepted) []release.Change {
	var out []release.Change
	index := map[string]int{}
	for _, f := range found {
		key := f.Check + "\x00" + f.Text
		if i, ok := index[key]; ok {
			if !slices.Contains(out[i].Operations, f.Operation) {
				out[i].Operations = append(out[i].Operations, f.Operation)
			}
			continue
		}
		text := f.Text
		for _, a := range accepted {
			if a.covers(f) {
				text += " (" + a.Why + ")"
				break
			}
		}
		index[key] = len(out)
		out = append(out, release.Change{Kind: kindOf(f), Text: text, Operations: []string{f.Operation}, Fields: []string{}, Check: f.Check})
	}
	for i := range out {
		slices.Sort(out[i].Operations)
	}
	return out
}

func undeclaredError(found []Found) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d breaking change(s) not declared in api/notes.json (accepted_breaking):", len(found))
	for _, f := range found {
		fmt.Fprintf(&b, "\n  %s on %s: %s", f.Check, f.Operation, f.Text)
	}
	return errors.New(b.String())
}

// CheckUnreleased is the check of make lint: the current document against
// the last release's. Any change needs the notes' unreleased entry, and
// every breaking change must be declared there.
func CheckUnreleased(notes Notes, latest, current []byte) error {
	found, err := Compare(latest, current)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return nil
	}
	if notes.Unreleased == nil {
		return fmt.Errorf("the contract changed since release %s (%d changes, first: %s on %s), and api/notes.json has no unreleased entry",
			notes.Releases[0].Date, len(found), found[0].Check, found[0].Operation)
	}
	if bad := Undeclared(found, notes.Unreleased.Accepted); len(bad) > 0 {
		return undeclaredError(bad)
	}
	return nil
}

// CheckDeprecations finds every deprecated operation, parameter and
// property of doc and checks its dates: both present, the sunset far
// enough after the deprecation for the API it belongs to, the release note
// it names among notes.
func CheckDeprecations(doc []byte, notes Notes) error {
	var root any
	if err := json.Unmarshal(doc, &root); err != nil {
		return err
	}
	dates := map[string]bool{}
	for _, e := range notes.Releases {
		dates[e.Date] = true
	}
	var errs []error
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["deprecated"] == true {
				since, _ := v["x-deprecated-at"].(string)
				sunset, _ := v["x-sunset"].(string)
				d, err := release.ParseDeprecation(since, sunset)
				switch {
				case err != nil:
					errs = append(errs, fmt.Errorf("%s: %w", path, err))
				case !dates[d.Note] && (notes.Unreleased == nil || d.Note <= notes.Releases[0].Date):
					// An unreleased deprecation is dated by the release that will announce it.
					errs = append(errs, fmt.Errorf("%s: deprecated on %s, a day no release notes tell of", path, d.Note))
				default:
					notice := release.MinNoticeBeta
					if strings.Contains(path, "/api/gdt/") || strings.Contains(path, "/api/sonogdt/") {
						notice = release.MinNoticeStable
					}
					if err := d.Check(notice); err != nil {
						errs = append(errs, fmt.Errorf("%s: %w", path, err))
					}
				}
			}
			for k, x := range v {
				walk(path+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s/%d", path, i), x)
			}
		}
	}
	walk("#", root)
	return errors.Join(errs...)
}

// Build turns the notes and each release's document (by date) into the
// releases as served, newest first; a breaking change between two releases
// that the later one does not declare fails it.
func Build(notes Notes, docs map[string][]byte) ([]release.Release, error) {
	out := make([]release.Release, len(notes.Releases))
	for i, e := range notes.Releases {
		doc, ok := docs[e.Date]
		if !ok {
			return nil, fmt.Errorf("release %s has no document api/releases/%s.json", e.Date, e.Date)
		}
		var previous []byte
		if i+1 < len(notes.Releases) {
			previous = docs[notes.Releases[i+1].Date]
		}
		r, err := Release(e, previous, doc)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, release.Validate(out)
}

// Changelog is CHANGELOG.md: the releases in Keep a Changelog's form, the
// unreleased notes first, each release's changes grouped by kind, breaking first.
func Changelog(notes Notes, releases []release.Release) string {
	var b strings.Builder
	b.WriteString("# Changelog\n\n")
	b.WriteString("Every change of the API contract, by release (generated from `api/notes.json` and the documents under\n")
	b.WriteString("`api/releases/` by `go generate ./api/...`; do not edit). The form follows Keep a Changelog; a\n")
	b.WriteString("release is named by its date, the `info.version` of its OpenAPI document and the `Praxis-Api-Release`\n")
	b.WriteString("header. The same notes are served as JSON at `GET /api/oauth/v2/releases` and as an Atom feed at\n")
	b.WriteString("`GET /api/oauth/v2/releases.atom`.\n")
	if u := notes.Unreleased; u != nil {
		b.WriteString("\n## [Unreleased]\n\n" + u.Summary + "\n")
		writeChanges(&b, u.Notes)
	}
	for _, r := range releases {
		fmt.Fprintf(&b, "\n## [%s] - %s\n\n%s\n", r.Date, r.Date, r.Summary)
		writeChanges(&b, r.Changes)
	}
	return b.String()
}

func writeChanges(b *strings.Builder, changes []release.Change) {
	for _, kind := range release.Kinds {
		first := true
		for _, c := range changes {
			if c.Kind != kind {
				continue
			}
			if first {
				fmt.Fprintf(b, "\n### %s\n\n", strings.ToUpper(kind[:1])+kind[1:])
				first = false
			}
			line := "- " + c.Text
			if c.Sunset != "" {
				line += " Sunset: " + c.Sunset + "."
			}
			switch n := len(c.Operations); {
			case n == 1:
				line += " (`" + c.Operations[0] + "`)"
			case n > 1 && n <= 3:
				line += " (`" + strings.Join(c.Operations, "`, `") + "`)"
			case n > 3:
				line += fmt.Sprintf(" (%d operations, e.g. `%s`)", n, c.Operations[0])
			}
			b.WriteString(line + "\n")
		}
	}
}

// Load reads the notes and every release's document from the api directory.
func Load(dir string) (Notes, map[string][]byte, error) {
	var notes Notes
	raw, err := os.ReadFile(filepath.Join(dir, "notes.json")) //nolint:gosec // a file of the repository
	if err != nil {
		return notes, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&notes); err != nil {
		return notes, nil, fmt.Errorf("api/notes.json: %w", err)
	}
	if len(notes.Releases) == 0 {
		return notes, nil, errors.New("api/notes.json lists no release")
	}
	docs := map[string][]byte{}
	for _, e := range notes.Releases {
		if docs[e.Date], err = os.ReadFile(filepath.Join(dir, "releases", e.Date+".json")); err != nil { //nolint:gosec // a file of the repository
			return notes, nil, err
		}
	}
	return notes, docs, nil
}

// Served is api/releases.json: the releases as GET /api/oauth/v2/releases lists them.
func Served(releases []release.Release) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(releases)
	return out.Bytes(), err
}
