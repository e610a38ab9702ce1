package domain_test

import (
	"strings"
	"testing"

	"github.com/praxis-health/praxis/domain"
)

// TestEveryScopeHasItsSectionsNames: the settings pages show a scope by its
// section's name in the page's language, so every supported scope's
// section is named in German and English.
func TestEveryScopeHasItsSectionsNames(t *testing.T) {
	for _, sc := range domain.SupportedScopes() {
		section, _, _ := strings.Cut(string(sc), ":")
		n, ok := domain.SectionName(section)
		if !ok || n.De == "" || n.En == "" || n.In("de") != n.De || n.In("en") != n.En {
			t.Errorf("scope %s: its section %q has no German and English name (%+v)", sc, section, n)
		}
	}
}
