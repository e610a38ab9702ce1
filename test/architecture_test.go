// Holds docs/ARCHITECTURE.md (the import rules depguard cannot say).

package test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAdaptersNeverImportAnotherAdapter: an adapter serves one technology;
// what two adapters share belongs in ports or domain (docs/ARCHITECTURE.md),
// or, a helper of no technology's (an instrument's attribute sets), in
// adapters/internal, which imports nothing of ours, or, what the two HTTP
// doors share (the table from domain errors to statuses, the bearer check), in
// adapters/httpkit, which imports the domain's packages and nothing else of ours.
// depguard cannot say "another adapter", so the import graph is read here.
func TestAdaptersNeverImportAnotherAdapter(t *testing.T) {
	t.Parallel()
	const adapters = "github.com/praxis-health/praxis/adapters/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../adapters/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		own := adapters + strings.SplitN(strings.TrimPrefix(pkg, adapters), "/", 2)[0]
		checked++
		helper := strings.HasPrefix(pkg, adapters+"internal/")
		kit := pkg == adapters+"httpkit"
		for _, imp := range fields[1:] {
			switch {
			case helper && strings.HasPrefix(imp, "github.com/praxis-health/praxis/"):
				t.Errorf("%s, a helper of the adapters, imports %s", pkg, imp)
			case kit && strings.HasPrefix(imp, "github.com/praxis-health/praxis/") && imp != "github.com/praxis-health/praxis/domain" &&
				!strings.HasPrefix(imp, "github.com/praxis-health/praxis/domain/"):
				t.Errorf("%s, the doors' kit, imports %s (the domain only)", pkg, imp)
			case strings.HasPrefix(imp, adapters) && imp != own && !strings.HasPrefix(imp, own+"/") &&
				!strings.HasPrefix(imp, adapters+"internal/") && imp != adapters+"httpkit":
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
	if checked < 8 {
		t.Fatalf("read %d adapter packages, want every one", checked)
	}
}
