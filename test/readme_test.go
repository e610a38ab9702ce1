package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/domain"
)

// importExampleLines is one import line per section of the table, from the
// examples of the OpenAPI document.
func importExampleLines(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, k := range domain.Kinds() {
		var data bytes.Buffer
		if err := json.Compact(&data, []byte(k.ExampleWith(domain.SampleIDs))); err != nil {
			t.Fatal(err)
		}
		id := `"019cd6df-a538-78f7-9da1-494c73cf256d"`
		if k.Shape == domain.ShapeCustomer {
			id = "1042"
		}
		out = append(out, fmt.Sprintf(`{"section":%q,"id":%s,"data":%s}`, k.Slug, id, data.String()))
	}
	return out
}

// TestREADMEShowsAnImportLineOfEverySection keeps the README's import
// examples those of the table (the domain tests decode every example).
func TestREADMEShowsAnImportLineOfEverySection(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range importExampleLines(t) {
		if !strings.Contains(string(readme), line) {
			t.Errorf("the README lacks the import line\n%s", line)
		}
	}
}
