// Holds docs/contract.md §4 The resource API, through generated clients.

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/test/testenv"
)

// TestGeneratedClients: the clients integrators generate from the served
// document work. A Go client from oapi-codegen (default options) and a
// TypeScript one from openapi-typescript with openapi-fetch are generated,
// compiled, and each runs an integrator's first sync against the binary:
// token, a paged list, a patient found (q, sort, total) and matched, a
// create replayed by its Idempotency-Key, paging to the end, resuming after
// a new write, a file up and down (test/clients).
func TestGeneratedClients(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	doc := servedDocument(t, s)
	run := func(t *testing.T, name string, args ...string) { // each client syncs a practice of its own
		t.Helper()
		c := s.newCompany(t, 1<<20)
		customer := s.newCustomer(t, c)
		cl := s.newClient(t, c, "customers:read customers:write notes:read notes:write files:read files:write")
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "PRAXIS_URL="+s.url, "CLIENT_ID="+cl.ID, "CLIENT_SECRET="+cl.Secret,
			fmt.Sprintf("CUSTOMER_ID=%d", customer))
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "first sync done") {
			t.Fatalf("%s: %v\n%s", filepath.Base(name), err, out)
		}
	}

	t.Run("go", func(t *testing.T) {
		generator, err := filepath.Abs("../bin/tools/oapi-codegen")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(generator); err != nil {
			testenv.Missing(t, "oapi-codegen (make tools)", err)
		}
		dir := t.TempDir()
		for _, f := range []string{"main.go", "go.mod", "go.sum"} {
			copyFile(t, filepath.Join("clients", "go", f), filepath.Join(dir, f))
		}
		spec := filepath.Join(dir, "openapi.json")
		if err := os.WriteFile(spec, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		gen := exec.Command(generator, "-package", "main", "-o", filepath.Join(dir, "client.gen.go"), spec)
		if out, err := gen.CombinedOutput(); err != nil {
			t.Fatalf("oapi-codegen: %v\n%s", err, out)
		}
		build := exec.Command("go", "build", "-o", "praxissync", ".")
		build.Dir, build.Env = dir, append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("the generated Go client does not compile: %v\n%s", err, out)
		}
		run(t, filepath.Join(dir, "praxissync"))
	})

	t.Run("typescript", func(t *testing.T) {
		bin, err := filepath.Abs("node/node_modules/.bin")
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"openapi-typescript", "tsc"} {
			if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
				testenv.Missing(t, tool, err)
			}
		}
		// Inside test/node, so that node finds openapi-fetch in its node_modules.
		dir, err := os.MkdirTemp("node", ".run-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		copyFile(t, filepath.Join("clients", "ts", "sync.mts"), filepath.Join(dir, "sync.mts"))
		spec := filepath.Join(dir, "openapi.json")
		if err := os.WriteFile(spec, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"openapi-typescript", spec, "-o", filepath.Join(dir, "schema.d.ts")},
			{"tsc", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--lib", "es2022,dom",
				"--skipLibCheck", filepath.Join(dir, "sync.mts"), filepath.Join(dir, "schema.d.ts")},
		} {
			if out, err := exec.Command(filepath.Join(bin, args[0]), args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", args[0], err, out)
			}
		}
		run(t, "node", filepath.Join(dir, "sync.mjs"))
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}
