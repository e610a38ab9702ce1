package staff_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/staff"
)

func TestInviteKeepsOnlyTheTokensHash(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	company := domain.NewCompanyID()
	in, token, err := staff.NewInvite(company, "  Anna.Berger@Praxis.Example ", staff.RoleAdmin, "operator", now)
	if err != nil {
		t.Fatal(err)
	}
	if in.Email != "anna.berger@praxis.example" || !token.Matches(in.TokenHash) || in.ExpiresAt != now.Add(72*time.Hour) {
		t.Errorf("invite %+v", in)
	}
	if strings.Contains(string(in.TokenHash), string(token)) {
		t.Error("the invite holds its token")
	}
	if p := staff.JoinPath(company, token); p != "/settings/join/"+company.String()+"/"+string(token) {
		t.Errorf("join path %q", p)
	}
	for _, bad := range []string{"", "anna", "Anna <anna@praxis.example>", strings.Repeat("a", 250) + "@x.example"} {
		if _, _, err := staff.NewInvite(company, bad, staff.RoleAdmin, "operator", now); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("email %q: %v, want invalid", bad, err)
		}
	}
}

func TestRoles(t *testing.T) {
	for _, r := range []string{"admin", "viewer"} {
		if _, err := staff.ParseRole(r); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
	for _, r := range []string{"", "Admin", "owner"} {
		if _, err := staff.ParseRole(r); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%q: %v, want invalid", r, err)
		}
	}
}

// TestRolesAreScopes: an admin holds every scope a client may hold but a
// device bridge's, and the settings' own changes; a viewer the read scopes,
// the audit trail's included, and nothing that writes.
func TestRolesAreScopes(t *testing.T) {
	admin, viewer := staff.RoleAdmin.Scopes(), staff.RoleViewer.Scopes()
	for _, s := range domain.SupportedScopes() {
		if admin.Contains(s) == (s == domain.ScopeDeviceBridge) {
			t.Errorf("admin and %s: %v", s, admin.Contains(s))
		}
		if viewer.Contains(s) != strings.HasSuffix(string(s), ":read") {
			t.Errorf("viewer and %s: %v", s, viewer.Contains(s))
		}
	}
	if !admin.Contains(domain.ScopeSettingsWrite) || viewer.Contains(domain.ScopeSettingsWrite) {
		t.Error("only an admin changes the settings")
	}
	if !viewer.Contains(domain.ScopeAuditRead) || !viewer.Contains(domain.ScopeWebhooksRead) {
		t.Error("a viewer reads the audit trail and the webhooks")
	}
	m := staff.Member{Company: domain.NewCompanyID(), Role: staff.RoleViewer}
	g := m.Grant()
	if g.CompanyID != m.Company || !errors.Is(g.Require(domain.WriteScope("customers")), domain.ErrForbidden) || g.Require(domain.ReadScope("customers")) != nil {
		t.Errorf("a viewer's grant: %+v", g)
	}
	if domain.SupportedScopes().Contains(domain.ScopeSettingsWrite) {
		t.Error("no OAuth client may hold the settings' own scope")
	}
}

// TestHandleNamesCompanyAndMember: a passkey's user handle leads to one
// member of one company.
func TestHandleNamesCompanyAndMember(t *testing.T) {
	m := staff.Member{ID: uuid.Must(uuid.NewV7()), Company: domain.NewCompanyID()}
	company, id, err := staff.ParseHandle(m.Handle())
	if err != nil || company != m.Company || id != m.ID {
		t.Errorf("handle: %v %v %v", company, id, err)
	}
	if _, _, err := staff.ParseHandle(m.Handle()[:31]); err == nil {
		t.Error("a short handle parsed")
	}
}

func TestSessionTimes(t *testing.T) {
	start := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	s := staff.Session{Started: start, VerifiedAt: start}
	if !s.Live(start.Add(12*time.Hour-time.Second), staff.AbsoluteTimeout) || s.Live(start.Add(12*time.Hour), staff.AbsoluteTimeout) {
		t.Error("a session lives 12 hours at most")
	}
	if !s.Fresh(start.Add(4*time.Minute), staff.FreshFor) || s.Fresh(start.Add(5*time.Minute), staff.FreshFor) {
		t.Error("a passkey check is fresh for five minutes")
	}
}

func TestPasskeyNames(t *testing.T) {
	at := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	if n, _ := staff.PasskeyName("  ", at); n != "Passkey 2026-11-24" {
		t.Errorf("default name %q", n)
	}
	if _, err := staff.PasskeyName(strings.Repeat("x", 101), at); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("long name: %v", err)
	}
	id := []byte{1, 2, 3, 250}
	back, err := staff.ParsePasskeyKey(staff.PasskeyKey(id))
	if err != nil || string(back) != string(id) {
		t.Errorf("key round trip: %v %v", back, err)
	}
	if _, err := staff.ParsePasskeyKey("!!"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("bad key: %v", err)
	}
}
