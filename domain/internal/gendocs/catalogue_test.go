package main

import (
	"os"
	"testing"
)

// TestCatalogueIsCurrent: docs/sections.md is what the table says now; run
// `go generate ./domain/...` after changing a kind.
func TestCatalogueIsCurrent(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../../docs/sections.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != Catalogue() {
		t.Error("docs/sections.md is stale: run go generate ./domain/...")
	}
}

// TestGeneratedBlocksAreCurrent: the OAuthClient CRD allows exactly the
// table's scopes, and the documents list exactly the table's sections.
func TestGeneratedBlocksAreCurrent(t *testing.T) {
	t.Parallel()
	for file, blocks := range map[string]map[string]func(string) string{
		"../../../charts/praxis/crds/oauthclients.praxis-health.io.yaml": {"scopes": ScopeEnum},
		"../../../docs/integrators/oauth.md":                             {"section list": SectionList},
		"../../../docs/integrators/resource-api.md":                      {"section operations": SectionOperations},
		"../../../docs/operators/commands.md":                            {"import lines": ImportLines},
	} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for name, block := range blocks {
			current, ok := ReplaceGenerated(string(raw), name, block)
			if !ok {
				t.Fatalf("%s has no generated block %q", file, name)
			}
			if current != string(raw) {
				t.Errorf("%s: the block %q is stale: run go generate ./domain/...", file, name)
			}
		}
	}
}
