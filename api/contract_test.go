package api_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/adapters/httpapi"
	"github.com/praxis-health/praxis/api"
	"github.com/praxis-health/praxis/api/contract"
)

func load(t *testing.T) (contract.Notes, map[string][]byte) {
	t.Helper()
	notes, docs, err := contract.Load(".")
	if err != nil {
		t.Fatal(err)
	}
	return notes, docs
}

// TestReleaseFilesAreCurrent: releases.json and CHANGELOG.md are what the
// generator makes of the notes and the documents (go generate ./api/...).
func TestReleaseFilesAreCurrent(t *testing.T) {
	t.Parallel()
	notes, docs := load(t)
	releases, err := contract.Build(notes, docs)
	if err != nil {
		t.Fatal(err)
	}
	served, err := contract.Served(releases)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]byte{"releases.json": served, "../CHANGELOG.md": []byte(contract.Changelog(notes, releases))} {
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("api/%s is stale: run go generate ./api/...", file)
		}
	}
	if api.Latest() != notes.Releases[0].Date {
		t.Errorf("the build serves release %s, the notes' newest is %s", api.Latest(), notes.Releases[0].Date)
	}
}

// TestContractChangesAreDeclared is the check of make lint: the document
// this build serves against the last release's. With no unreleased notes
// they are the same document; with them, every breaking change oasdiff
// finds is declared. Every deprecation is dated and gives its notice.
func TestContractChangesAreDeclared(t *testing.T) {
	t.Parallel()
	notes, docs := load(t)
	current, err := httpapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	latest := docs[notes.Releases[0].Date]
	if err := contract.CheckUnreleased(notes, latest, current); err != nil {
		t.Fatal(err)
	}
	if notes.Unreleased == nil && !bytes.Equal(current, latest) {
		t.Errorf("the served document differs from release %s's, and api/notes.json has no unreleased entry: "+
			"add one, or cut a release (go run ./api/internal/genreleases -release YYYY-MM-DD)", notes.Releases[0].Date)
	}
	if err := contract.CheckDeprecations(current, notes); err != nil {
		t.Error(err)
	}
}

// edit changes a document as a careless change of the code would.
func edit(t *testing.T, doc []byte, change func(d map[string]any)) []byte {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	change(d)
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func obj(v any, path ...string) map[string]any {
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	return v.(map[string]any)
}

// TestPlantedBreakingChangesFailUntilDeclared plants three breaking changes
// in the last release's document: each fails the check, naming its oasdiff
// check, and passes once the unreleased notes declare it.
func TestPlantedBreakingChangesFailUntilDeclared(t *testing.T) {
	t.Parallel()
	notes, docs := load(t)
	latest := docs[notes.Releases[0].Date]
	for _, tc := range []struct {
		name      string
		check     string
		operation string
		change    func(d map[string]any)
	}{
		{"a field removed from an answer", "response-required-property-removed", "GET /api/oauth/v2/resource/company", func(d map[string]any) {
			company := obj(d, "components", "schemas", "Company")
			delete(obj(company, "properties"), "time_zone")
			var required []any
			for _, r := range company["required"].([]any) {
				if r != "time_zone" {
					required = append(required, r)
				}
			}
			company["required"] = required
		}},
		{"an enum narrowed", "request-property-enum-value-removed", "POST /api/oauth/v2/resource/diagnoses", func(d map[string]any) {
			certainty := obj(d, "components", "schemas", "DiagnosisInput", "properties", "certainty")
			certainty["enum"] = []any{"confirmed", "suspected", "excluded"}
		}},
		{"a new required parameter", "new-required-request-parameter", "GET /api/oauth/v2/resource/notes", func(d map[string]any) {
			get := obj(d, "paths", "/api/oauth/v2/resource/notes", "get")
			get["parameters"] = append(get["parameters"].([]any),
				map[string]any{"name": "practice_id", "in": "query", "required": true, "schema": map[string]any{"type": "string"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			planted := edit(t, latest, tc.change)
			released := contract.Notes{Releases: notes.Releases}
			err := contract.CheckUnreleased(released, latest, planted)
			if err == nil || !strings.Contains(err.Error(), "no unreleased entry") {
				t.Fatalf("a changed contract without unreleased notes: %v", err)
			}
			released.Unreleased = &contract.Entry{Summary: "planted"}
			err = contract.CheckUnreleased(released, latest, planted)
			if err == nil || !strings.Contains(err.Error(), tc.check+" on "+tc.operation) {
				t.Fatalf("want the undeclared %s on %s, got %v", tc.check, tc.operation, err)
			}
			released.Unreleased.Accepted = []contract.Accepted{{Check: tc.check, Operations: []string{tc.operation}, Why: "planted"}}
			if err := contract.CheckUnreleased(released, latest, planted); err != nil {
				t.Fatalf("declared, the change still fails: %v", err)
			}
		})
	}
}

// TestDeprecationsOweTheirNotice: a sunset closer than 31 days after the
// deprecation (beta), or a deprecation without dates, fails the check.
func TestDeprecationsOweTheirNotice(t *testing.T) {
	t.Parallel()
	notes, _ := load(t)
	current, err := httpapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(p map[string]any){
		"sunset after 30 days": func(p map[string]any) { p["x-sunset"] = "2026-12-24" },
		"no sunset":            func(p map[string]any) { delete(p, "x-sunset") },
		"an unannounced day":   func(p map[string]any) { p["x-deprecated-at"] = "2026-11-21" },
	} {
		planted := edit(t, current, func(d map[string]any) {
			change(obj(d, "components", "schemas", "Company", "properties", "storage_used"))
		})
		if err := contract.CheckDeprecations(planted, notes); err == nil || !strings.Contains(err.Error(), "storage_used") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
