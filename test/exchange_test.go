// Holds docs/contract.md §6 Import and export.

package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// practiceFile is an import file with an object of every section of the
// table: master data, patients, and each record kind about patient 5000.
func practiceFile(t *testing.T) (path string, ids map[string]string) {
	t.Helper()
	ids = map[string]string{}
	ex := domain.ExampleIDs{Customer: 5000, User: domain.NewObjectID(), Diagnosis: domain.NewObjectID(),
		Location: domain.NewObjectID(), Service: domain.NewObjectID(), Device: domain.NewObjectID()}
	var lines []string
	add := func(section, id, data string) {
		quoted := fmt.Sprintf("%q", id)
		if section == "customers" {
			quoted = id
		}
		lines = append(lines, fmt.Sprintf(`{"section":%q,"id":%s,"data":%s}`, section, quoted, strings.Join(strings.Fields(data), " ")))
		ids[section] = id
	}
	for _, k := range domain.Kinds() {
		id := domain.NewObjectID()
		switch k.Slug {
		case "customers":
			id = "5000"
		case "users":
			id = ex.User
		case "diagnoses":
			id = ex.Diagnosis
		case "locations":
			id = ex.Location
		case "services":
			id = ex.Service
		case "devices":
			id = ex.Device
		}
		add(k.Slug, id, k.ExampleWith(ex))
	}
	path = filepath.Join(t.TempDir(), "practice.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, ids
}

type importReport struct {
	Created   map[string]int `json:"created"`
	Updated   map[string]int `json:"updated"`
	Deleted   map[string]int `json:"deleted"`
	Unchanged int            `json:"unchanged"`
}

func writeLines(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lines.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImportExport: docs/contract.md §6 on both backends.
func TestImportExport(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		c := s.newCompany(t, 1<<20)
		auth := "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, c, sectionScopes()))
		file, ids := practiceFile(t)

		var first importReport
		s.praxis(t, &first, "admin", "import", "--company", c.ID, "--json", file)
		for _, k := range domain.Kinds() {
			if first.Created[k.Slug] != 1 {
				t.Errorf("created %v, want one of %s", first.Created, k.Slug)
			}
		}
		// Every section answers, its object included; lists end with a resume cursor.
		p := practice{s: s, company: c, auth: auth}
		cursors := map[string]string{}
		for _, k := range domain.Kinds() {
			data := p.listed(t, k.Slug+"?limit=500", ids[k.Slug])
			if len(data) != 1 && k.Slug != "customers" {
				t.Errorf("%s lists %d objects", k.Slug, len(data))
			}
			cursors[k.Slug] = p.get(t, k.Slug+"?limit=500").decode(t)["next_cursor"].(string)
			if r := p.get(t, k.Slug+"/"+ids[k.Slug]); r.status != http.StatusOK {
				t.Errorf("GET %s/%s: %d %s", k.Slug, ids[k.Slug], r.status, r.body)
			}
		}
		other := newPractice(t, s)
		for _, k := range domain.Kinds() {
			if r := other.get(t, k.Slug+"/"+ids[k.Slug]); r.status != http.StatusNotFound {
				t.Errorf("another company reads %s: %d", k.Slug, r.status)
			}
		}

		// The same file again changes nothing, and the feeds stay quiet.
		var again importReport
		s.praxis(t, &again, "admin", "import", "--company", c.ID, "--json", file)
		if len(again.Created)+len(again.Updated)+len(again.Deleted) != 0 || again.Unchanged != len(domain.Kinds()) {
			t.Errorf("second import: %+v", again)
		}
		for _, k := range domain.Kinds() {
			if data := p.get(t, k.Slug+"?cursor="+cursors[k.Slug]).decode(t)["data"].([]any); len(data) != 0 {
				t.Errorf("%s: the feed moved after a no-op import: %v", k.Slug, data)
			}
		}

		// One bad line refuses the whole file, naming the line; nothing is written.
		fresh := domain.NewObjectID()
		bad := writeLines(t,
			fmt.Sprintf(`{"section":"notes","id":%q,"data":{"customer_id":5000,"text":"fine"}}`, fresh),
			`{"section":"notes","id":"`+domain.NewObjectID()+`","data":{"customer_id":5000,"text":"x","noted_on":"2999-01-01"}}`)
		_, stderr, code := praxisIn(t, s.env, "admin", "import", "--company", c.ID, bad)
		if code != 1 || !strings.Contains(stderr, "line 2: data.noted_on: must not be in the future") || strings.Contains(stderr, "line 1") {
			t.Errorf("bad line: exit %d\n%s", code, stderr)
		}
		if r := p.get(t, "notes/"+fresh); r.status != http.StatusNotFound {
			t.Errorf("the good line of a refused file was written: %d", r.status)
		}
		// A customer of another company is refused like an unknown one.
		foreign := writeLines(t, fmt.Sprintf(`{"section":"notes","id":%q,"data":{"customer_id":%d,"text":"x"}}`, fresh, other.customer))
		if _, stderr, code := praxisIn(t, s.env, "admin", "import", "--company", c.ID, foreign); code != 1 || !strings.Contains(stderr, "line 1: data.customer_id: names no customer") {
			t.Errorf("another company's customer: exit %d\n%s", code, stderr)
		}

		// A delete line makes a tombstone in the feed.
		del := writeLines(t, fmt.Sprintf(`{"section":"notes","id":%q,"deleted":true}`, ids["notes"]))
		var deleted importReport
		s.praxis(t, &deleted, "admin", "import", "--company", c.ID, "--json", del)
		if deleted.Deleted["notes"] != 1 {
			t.Errorf("delete: %+v", deleted)
		}
		tomb := p.listed(t, "notes?include_deleted=true&cursor="+cursors["notes"], ids["notes"])
		if len(tomb) != 1 || tomb[0].(map[string]any)["deleted"] != true {
			t.Errorf("tombstone: %v", tomb)
		}
		if r := p.get(t, "notes/"+ids["notes"]); r.status != http.StatusNotFound {
			t.Errorf("a deleted note answers %d", r.status)
		}

		// Export, then import into an empty company of a new installation: the same export.
		exported, _, code := praxisIn(t, s.env, "admin", "export", "--company", c.ID)
		if code != 0 {
			t.Fatalf("export: exit %d", code)
		}
		if !strings.Contains(exported, `"version":`) {
			t.Errorf("export lines carry no version:\n%s", exported)
		}
		// A re-import of an unchanged export keeps every version: it writes nothing.
		path := writeLines(t, strings.TrimSpace(exported))
		var same importReport
		s.praxis(t, &same, "admin", "import", "--company", c.ID, "--json", path)
		if len(same.Created)+len(same.Updated)+len(same.Deleted) != 0 {
			t.Errorf("re-import of the export: %+v", same)
		}
		if again, _, _ := praxisIn(t, s.env, "admin", "export", "--company", c.ID); again != exported {
			t.Errorf("versions moved by a re-import of an unchanged export:\n%s\n---\n%s", exported, again)
		}
		s2 := startServer(t, b)
		c2 := s2.newCompany(t, 1<<20)
		var moved importReport
		s2.praxis(t, &moved, "admin", "import", "--company", c2.ID, "--json", path)
		reexported, stderr, code := praxisIn(t, s2.env, "admin", "export", "--company", c2.ID)
		if code != 0 {
			t.Fatalf("export of the imported company: exit %d\n%s", code, stderr)
		}
		if sortedLines(exported) != sortedLines(reexported) {
			t.Errorf("export → import → export differs:\n%s\n---\n%s", exported, reexported)
		}
		if moved.Created["notes"] != 0 || moved.Created["customers"] != 1 {
			t.Errorf("the round trip imported %+v (the deleted note must not come back)", moved)
		}
	})
}

// sortedLines is an export's lines in order, each without its version:
// a version is the installation's count of the object's writes, which an
// import into another does not carry (it is information on import).
func sortedLines(s string) string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var v map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &v) == nil {
			delete(v, "version")
			line, _ := json.Marshal(v)
			out = append(out, string(line))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestDemoSeedsEverySection: the demo's credentials work as the README shows, and every seeded section answers.
func TestDemoSeedsEverySection(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		var demo struct {
			CompanyID    string  `json:"company_id"`
			CustomerIDs  []int64 `json:"customer_ids"`
			ClientID     string  `json:"client_id"`
			ClientSecret string  `json:"client_secret"`
		}
		s.praxis(t, &demo, "demo")
		p := practice{s: s, auth: "Authorization: Bearer " + s.tokenFor(t, oauthClient{ID: demo.ClientID, Secret: demo.ClientSecret})}
		for _, section := range []string{"locations", "users", "services", "service-assignments", "tenants", "customers", "notes", "diagnoses",
			"invoices", "fee-notes", "cash-revenues", "medical-fee-services", "lab-results", "files"} {
			deadline := time.Now().Add(10 * time.Second)
			for {
				if data := p.get(t, section).decode(t)["data"].([]any); len(data) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("the demo's %s list is empty", section)
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		users := p.get(t, "users").decode(t)["data"].([]any)
		if len(users) != 4 {
			t.Errorf("%d users, want 4", len(users))
		}
	})
}

// TestImportFromStandardInput: "-" reads the same bytes a file path does, so
// lines that reference lines of the same input resolve (they did not: the
// spooled copy was read from its end).
func TestImportFromStandardInput(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	c := s.newCompany(t, 1<<20)
	file, _ := practiceFile(t)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "admin", "import", "--company", c.ID, "--json", "-")
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("import from standard input: %v\n%s", err, exit.Stderr)
		}
		t.Fatal(err)
	}
	var report importReport
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	for _, k := range domain.Kinds() {
		if report.Created[k.Slug] != 1 {
			t.Errorf("created %v, want one of %s", report.Created, k.Slug)
		}
	}
}
