// Holds docs/contract.md §4 The resource API: the OpenAPI document linted.

package test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/praxis-health/praxis/test/testenv"
)

// TestOpenAPIDocumentPassesLinters: the served document has no error under
// Redocly's recommended rules and Spectral's spectral:oas, as the tools
// integrators generate clients with read it. The linters come from the npm
// registry, pinned by test/node/package-lock.json (make node-tools).
func TestOpenAPIDocumentPassesLinters(t *testing.T) {
	t.Parallel()
	bin, err := filepath.Abs("node/node_modules/.bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"redocly", "spectral"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			testenv.Missing(t, tool, err)
		}
	}
	raw := servedDocument(t, startServer(t, backends[0]))
	dir := t.TempDir()
	doc, ruleset := filepath.Join(dir, "openapi.json"), filepath.Join(dir, "spectral.yaml")
	if err := os.WriteFile(doc, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ruleset, []byte("extends: [\"spectral:oas\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"redocly", "lint", "--extends=recommended", "--format=stylish", doc},
		{"spectral", "lint", "--ruleset", ruleset, "--fail-severity=error", "--format=text", doc},
	} {
		cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_UPDATE_NOTIFIER=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s finds errors in the served document (%v):\n%s", args[0], err, out)
		}
	}
}

// servedDocument is the OpenAPI document as s serves it, as raw bytes.
func servedDocument(t *testing.T, s *server) []byte {
	t.Helper()
	resp, err := http.Get(s.url + "/api/oauth/v2/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the served document: %d %v", resp.StatusCode, err)
	}
	return raw
}
