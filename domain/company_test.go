package domain

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseCompanyID(t *testing.T) {
	t.Parallel()
	id := NewCompanyID()
	if got, err := ParseCompanyID(id.String()); err != nil || got != id {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	for _, in := range []string{"", "not-a-uuid", strings.ToUpper(id.String())[:35], "{" + id.String() + "}",
		"urn:uuid:" + id.String(), strings.ReplaceAll(id.String(), "-", "")} {
		if _, err := ParseCompanyID(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseCompanyID(%q): %v, want ErrInvalid", in, err)
		}
	}
}

func TestNewCompany(t *testing.T) {
	t.Parallel()
	now := time.Now()
	c, secret, err := NewCompany(" Praxis ", "", Plan{}, 100, now)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "Praxis" || c.TimeZone != DefaultTimeZone || c.Plan != PlanBasic || c.StorageQuota != 100 || c.ID.IsZero() {
		t.Errorf("defaults: %+v", c)
	}
	if !c.AcceptsUploadSecret(string(secret)) || c.AcceptsUploadSecret("") || c.AcceptsUploadSecret(string(secret[1:])) {
		t.Error("upload secret check")
	}
	if strings.Contains(string(c.UploadSecretHash), string(secret)) {
		t.Error("the secret itself is kept")
	}
	for name, tc := range map[string]struct {
		name, tz string
		quota    int64
	}{
		"empty name":     {"  ", "", 1},
		"bad time zone":  {"P", "Mars/Olympus", 1},
		"local zone":     {"P", "Local", 1},
		"negative quota": {"P", "", -1},
	} {
		if _, _, err := NewCompany(tc.name, tc.tz, PlanBasic, tc.quota, now); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestFreeStorage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ quota, used, want int64 }{{100, 30, 70}, {100, 100, 0}, {100, 130, 0}} {
		if got := (Company{StorageQuota: tc.quota, StorageUsed: tc.used}).FreeStorage(); got != tc.want {
			t.Errorf("quota %d used %d: free %d, want %d", tc.quota, tc.used, got, tc.want)
		}
	}
}

func TestParsePlan(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"basic", "pro", "enterprise"} {
		if p, err := ParsePlan(s); err != nil || p.String() != s {
			t.Errorf("ParsePlan(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParsePlan("gold"); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown plan: %v", err)
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	s1, _ := NewSecret()
	s2, _ := NewSecret()
	if len(s1) != 43 || s1 == s2 {
		t.Errorf("secrets %q, %q: want 43 characters (256 bits) and distinct", s1, s2)
	}
	if !s1.Matches(s1.Hash()) || s1.Matches(s2.Hash()) || s1.Matches(nil) || s1.Matches(s1.Hash()[:31]) {
		t.Error("Matches must accept only the secret's own hash")
	}
}
