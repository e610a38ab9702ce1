// Holds docs/contract.md §1 Programs, commands, configuration.

package test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// praxisIn runs the binary with env; it returns stdout, stderr and the exit code.
func praxisIn(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// keys lists a JSON object's keys: other programs parse these outputs, so the shape is exact.
func keys(t *testing.T, out string) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		env := []string{"PRAXIS_DATABASE_URL=" + b.databaseURL(t), "PRAXIS_BLOB_URL=file://" + filepath.Join(t.TempDir(), "files")}

		if out, errOut, code := praxisIn(t, env, "migrate"); code != 0 || out != "migrations applied\n" {
			t.Fatalf("migrate: %d %q %q", code, out, errOut)
		}
		out, _, code := praxisIn(t, env, "admin", "company", "create", "--name", "Praxis", "--plan", "enterprise", "--storage-quota", "5", "--json")
		if code != 0 || !reflect.DeepEqual(keys(t, out), []string{"company_id", "upload_secret"}) {
			t.Fatalf("company create: %d %q", code, out)
		}
		var c company
		_ = json.Unmarshal([]byte(out), &c)

		out, _, code = praxisIn(t, env, "admin", "customer", "create", "--company", c.ID, "--first-name", "A", "--last-name", "B", "--birth-date", "1990-05-17", "--id", "4711", "--json")
		if code != 0 || !reflect.DeepEqual(keys(t, out), []string{"company_id", "customer_id"}) || !bytes.Contains([]byte(out), []byte(`"customer_id":4711`)) {
			t.Fatalf("customer create: %d %q", code, out)
		}
		out, _, code = praxisIn(t, env, "admin", "company", "rotate-upload-secret", "--company", c.ID, "--json")
		if code != 0 || !reflect.DeepEqual(keys(t, out), []string{"company_id", "upload_secret"}) {
			t.Fatalf("rotate: %d %q", code, out)
		}
		out, _, code = praxisIn(t, env, "admin", "client", "create", "--company", c.ID, "--scopes", "company:read files:write", "--json")
		if code != 0 || !reflect.DeepEqual(keys(t, out), []string{"client_id", "client_secret", "company_id", "scopes"}) ||
			!bytes.Contains([]byte(out), []byte(`"scopes":["company:read","files:write"]`)) {
			t.Fatalf("client create: %d %q", code, out)
		}
		var cl oauthClient
		_ = json.Unmarshal([]byte(out), &cl)
		out, _, code = praxisIn(t, env, "admin", "client", "revoke", "--client-id", cl.ID, "--json")
		if code != 0 || !reflect.DeepEqual(keys(t, out), []string{"client_id", "revoked"}) {
			t.Fatalf("client revoke: %d %q", code, out)
		}

		out, errOut, code := praxisIn(t, env, "demo")
		if code != 0 || !reflect.DeepEqual(keys(t, out), []string{"client_id", "client_secret", "company_id", "customer_ids", "upload_secret"}) {
			t.Fatalf("demo: %d %q %q", code, out, errOut)
		}
		var demo struct {
			Secret       string `json:"upload_secret"`
			ClientSecret string `json:"client_secret"`
		}
		_ = json.Unmarshal([]byte(out), &demo)
		if bytes.Contains([]byte(errOut), []byte(demo.Secret)) || bytes.Contains([]byte(errOut), []byte(demo.ClientSecret)) {
			t.Error("demo printed a secret to stderr")
		}

		for name, args := range map[string][]string{
			"customer of unknown company": {"admin", "customer", "create", "--company", "11111111-2222-4333-8444-555555555555", "--first-name", "A", "--last-name", "B", "--json"},
			"taken customer id":           {"admin", "customer", "create", "--company", c.ID, "--first-name", "A", "--last-name", "B", "--id", "4711", "--json"},
			"bad birth date":              {"admin", "customer", "create", "--company", c.ID, "--first-name", "A", "--last-name", "B", "--birth-date", "17.05.1990"},
			"bad company id":              {"admin", "company", "rotate-upload-secret", "--company", "nope"},
			"unknown company":             {"admin", "company", "rotate-upload-secret", "--company", "11111111-2222-4333-8444-555555555555"},
			"bad plan":                    {"admin", "company", "create", "--name", "X", "--plan", "gold"},
			"no name":                     {"admin", "company", "create", "--json"},
			"client of unknown company":   {"admin", "client", "create", "--company", "11111111-2222-4333-8444-555555555555", "--json"},
			"client with unknown scope":   {"admin", "client", "create", "--company", c.ID, "--scopes", "company:read everything", "--json"},
			"client without company":      {"admin", "client", "create", "--json"},
			"revoke unknown client":       {"admin", "client", "revoke", "--client-id", "pc_nobody"},
		} {
			if out, errOut, code := praxisIn(t, env, args...); code == 0 || out != "" || errOut == "" {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want a non-zero exit with the reason on stderr", name, code, out, errOut)
			}
		}
	})
}

func TestBadDatabaseURL(t *testing.T) {
	t.Parallel()
	_, errOut, code := praxisIn(t, []string{"PRAXIS_DATABASE_URL=mysql://root:hunter2@db/x"}, "migrate")
	if code == 0 || bytes.Contains([]byte(errOut), []byte("hunter2")) {
		t.Errorf("exit %d, stderr %q: want a failure that does not echo the password", code, errOut)
	}
}
