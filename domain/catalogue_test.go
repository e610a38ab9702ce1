package domain_test

import (
	"os"
	"testing"

	"github.com/praxis-health/praxis/domain"
)

// TestCatalogueIsCurrent: docs/sections.md is what the table says now; run
// `go generate ./domain/...` after changing a kind.
func TestCatalogueIsCurrent(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/sections.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != domain.Catalogue() {
		t.Error("docs/sections.md is stale: run go generate ./domain/...")
	}
}
