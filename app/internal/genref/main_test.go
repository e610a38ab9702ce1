package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReferencesAreCurrent: the reference pages say what the code says.
func TestReferencesAreCurrent(t *testing.T) {
	t.Parallel()
	pages, err := render("../../config.go")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join("../../../docs/reference", name))
		if err != nil || string(got) != want {
			t.Errorf("docs/reference/%s is stale: run go generate ./app/... (%v)", name, err)
		}
	}
	if len(pages) != 3 {
		t.Errorf("%d pages", len(pages))
	}
}
