package usecase

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/staff"
	"github.com/praxis-health/praxis/ports"
)

// Settings is what is staff's own in the settings pages (docs/contract.md
// §13): members, invitations, passkeys, single sign-on. Every change names
// the member who makes it and reaches only that member's company. The
// company's clients and upload secret are Integrations' (the operator's use
// case, by grant); what the API has too the pages do through the API's use
// cases.
type Settings struct {
	staff     ports.Staff
	companies ports.CompanyRepository
	now       func() time.Time
}

var _ ports.Settings = (*Settings)(nil)

// NewSettings wires the settings use case.
func NewSettings(s ports.Staff, companies ports.CompanyRepository) *Settings {
	return &Settings{staff: s, companies: companies, now: time.Now}
}

// OperatorInvite invites a person to company as the operator does: the
// company's first admin, or anyone after a lost passkey. It answers the
// invitation and its token, shown once.
func (s *Settings) OperatorInvite(ctx context.Context, company domain.CompanyID, email string, role staff.Role) (staff.Invite, domain.Secret, error) {
	return s.invite(ctx, company, email, role, "operator")
}

func (s *Settings) invite(ctx context.Context, company domain.CompanyID, email string, role staff.Role, by string) (staff.Invite, domain.Secret, error) {
	c, err := s.companies.Get(ctx, company)
	if err != nil {
		return staff.Invite{}, "", fmt.Errorf("company %s: %w", company, err)
	}
	if c.Disabled() {
		return staff.Invite{}, "", fmt.Errorf("company %s: %w", company, domain.ErrCompanyDisabled)
	}
	in, token, err := staff.NewInvite(company, email, role, by, s.now())
	if err != nil {
		return staff.Invite{}, "", err
	}
	if err := s.staff.SaveInvite(ctx, in); err != nil {
		return staff.Invite{}, "", err
	}
	return in, token, nil
}

// Join spends an invitation: it answers the member it names, who then
// registers a passkey. domain.ErrNotFound for an unknown, used or expired link.
func (s *Settings) Join(ctx context.Context, company domain.CompanyID, token domain.Secret) (staff.Member, error) {
	return s.staff.ClaimInvite(ctx, company, token.Hash(), s.now())
}

// Member answers a member of company for a signed-in session.
func (s *Settings) Member(ctx context.Context, company domain.CompanyID, id uuid.UUID) (staff.Member, error) {
	return s.staff.Member(ctx, company, id)
}

// SingleSignOn answers the one account of an address an identity provider
// verified.
func (s *Settings) SingleSignOn(ctx context.Context, email string) (staff.Member, error) {
	email, err := staff.NormalEmail(email)
	if err != nil {
		return staff.Member{}, domain.ErrNotFound
	}
	members, err := s.staff.MembersByEmail(ctx, email)
	switch {
	case err != nil:
		return staff.Member{}, err
	case len(members) == 0:
		return staff.Member{}, domain.ErrNotFound
	case len(members) > 1:
		return staff.Member{}, domain.ErrConflict
	}
	return members[0], nil
}

// Overview answers the member's company with its people.
func (s *Settings) Overview(ctx context.Context, m staff.Member) (ports.SettingsOverview, error) {
	c, err := s.companies.Get(ctx, m.Company)
	if err != nil {
		return ports.SettingsOverview{}, err
	}
	members, err := s.staff.Members(ctx, m.Company)
	if err != nil {
		return ports.SettingsOverview{}, err
	}
	invites, err := s.staff.Invites(ctx, m.Company, s.now())
	if err != nil {
		return ports.SettingsOverview{}, err
	}
	return ports.SettingsOverview{Company: c, Members: members, Invites: invites}, nil
}

// mayChange: the settings' own changes (clients, the upload secret,
// members) need the settings' write scope, which an admin's grant holds.
func mayChange(m staff.Member) error { return m.Grant().Require(domain.ScopeSettingsWrite) }

// Invite is an admin's invitation of a colleague.
func (s *Settings) Invite(ctx context.Context, m staff.Member, email string, role staff.Role) (staff.Invite, domain.Secret, error) {
	if err := mayChange(m); err != nil {
		return staff.Invite{}, "", err
	}
	return s.invite(ctx, m.Company, email, role, m.Email)
}

// SetRole changes a colleague's role; the company keeps an admin.
func (s *Settings) SetRole(ctx context.Context, m staff.Member, id uuid.UUID, role staff.Role) error {
	if err := mayChange(m); err != nil {
		return err
	}
	return s.staff.SetRole(ctx, m.Company, id, role)
}

// Remove takes a colleague out, with the passkeys; the company keeps an admin.
func (s *Settings) Remove(ctx context.Context, m staff.Member, id uuid.UUID) error {
	if err := mayChange(m); err != nil {
		return err
	}
	return s.staff.RemoveMember(ctx, m.Company, id)
}

// Passkeys answers the member's own passkeys.
func (s *Settings) Passkeys(ctx context.Context, m staff.Member) ([]staff.Passkey, error) {
	return s.staff.Passkeys(ctx, m.Company, m.ID)
}

// AddPasskey keeps a passkey the member registered.
func (s *Settings) AddPasskey(ctx context.Context, m staff.Member, id []byte, name string, credential []byte) (staff.Passkey, error) {
	now := s.now().UTC().Truncate(time.Second)
	name, err := staff.PasskeyName(name, now)
	if err != nil {
		return staff.Passkey{}, err
	}
	p := staff.Passkey{ID: id, Company: m.Company, Member: m.ID, Name: name, Credential: credential, CreatedAt: now}
	return p, s.staff.AddPasskey(ctx, p)
}

// UsePasskey keeps the credential's record after a sign-in.
func (s *Settings) UsePasskey(ctx context.Context, m staff.Member, id, credential []byte) error {
	return s.staff.UsePasskey(ctx, m.Company, id, credential, s.now())
}

// RemovePasskey deletes one of the member's own passkeys; the last one stays,
// so that nobody locks themselves out.
func (s *Settings) RemovePasskey(ctx context.Context, m staff.Member, id []byte) error {
	keys, err := s.staff.Passkeys(ctx, m.Company, m.ID)
	if err != nil {
		return err
	}
	if len(keys) <= 1 {
		return domain.ErrConflict
	}
	return s.staff.RemovePasskey(ctx, m.Company, m.ID, id)
}
