// Holds docs/contributors/testing.md (every black-box test file says what it holds).

package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryTestFileSaysWhatItHolds: each file of this package begins with
// the contract section it holds ("// Holds docs/contract.md §N …", a
// section that exists) or with what it helps with ("// Helpers: …"), and
// the testing map names it, so that a newcomer finds a feature's tests.
func TestEveryTestFileSaysWhatItHolds(t *testing.T) {
	t.Parallel()
	contract, err := os.ReadFile("../docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	testing_, err := os.ReadFile("../docs/contributors/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*_test.go")
	section := regexp.MustCompile(`§(\d+)`)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(raw), "\n")
		switch {
		case strings.HasPrefix(first, "// Holds docs/contract.md §"):
			for _, m := range section.FindAllStringSubmatch(first, -1) {
				if !strings.Contains(string(contract), "\n## §"+m[1]+" ") {
					t.Errorf("%s holds §%s, which docs/contract.md does not have", f, m[1])
				}
			}
		case strings.HasPrefix(first, "// Holds docs/"), strings.HasPrefix(first, "// Helpers: "):
		default:
			t.Errorf("%s begins %q: say what it holds (// Holds docs/contract.md §N …) or helps with (// Helpers: …)", f, first)
		}
		if !strings.Contains(string(testing_), "`test/"+f+"`") {
			t.Errorf("docs/contributors/testing.md does not name test/%s", f)
		}
	}
	if len(files) < 40 {
		t.Fatalf("read %d test files", len(files))
	}
}
