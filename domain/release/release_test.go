package release_test

import (
	"strings"
	"testing"

	"github.com/praxis-health/praxis/domain/release"
)

func TestDeprecationDatesOnTheWire(t *testing.T) {
	t.Parallel()
	d, err := release.ParseDeprecation("2026-11-24", "2027-01-05")
	if err != nil {
		t.Fatal(err)
	}
	if d.DeprecationHeader() != "@1795478400" || d.SunsetHeader() != "Tue, 05 Jan 2027 00:00:00 GMT" {
		t.Errorf("%s / %s", d.DeprecationHeader(), d.SunsetHeader())
	}
	if err := d.Check(release.MinNoticeBeta); err != nil {
		t.Errorf("42 days for the beta API: %v", err)
	}
	if err := d.Check(release.MinNoticeStable); err == nil || !strings.Contains(err.Error(), "180 days") {
		t.Errorf("42 days for the stable API: %v", err)
	}
	if _, err := release.ParseDeprecation("2026-11-24", "soon"); err == nil {
		t.Error("a sunset that is no date was read")
	}
	later, _ := release.ParseDeprecation("2026-11-24", "2027-03-01")
	if d.Earlier(later) != d || later.Earlier(d) != d || (release.Deprecation{}).Earlier(d) != d {
		t.Error("Earlier does not pick the first sunset")
	}
}

func TestValidateRefusesBadNotes(t *testing.T) {
	t.Parallel()
	good := []release.Release{{Date: "2026-11-24", Summary: "s"}, {Date: "2026-11-22", Summary: "s"}}
	if err := release.Validate(good); err != nil {
		t.Fatal(err)
	}
	for name, rs := range map[string][]release.Release{
		"oldest first":    {good[1], good[0]},
		"no summary":      {{Date: "2026-11-24"}},
		"not a date":      {{Date: "24.11.2026", Summary: "s"}},
		"unknown kind":    {{Date: "2026-11-24", Summary: "s", Changes: []release.Change{{Kind: "fixed", Text: "t"}}}},
		"no sunset":       {{Date: "2026-11-24", Summary: "s", Changes: []release.Change{{Kind: release.KindDeprecated, Text: "t"}}}},
		"a change, empty": {{Date: "2026-11-24", Summary: "s", Changes: []release.Change{{Kind: release.KindAdded}}}},
	} {
		if err := release.Validate(rs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
