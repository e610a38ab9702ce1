package usecase

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/release"
	"github.com/praxis-health/praxis/domain/staff"
	"github.com/praxis-health/praxis/ports"
)

// Settings is what the practice's own staff do in the settings pages
// (docs/contract.md §13). Every change names the member who makes it and
// reaches only that member's company; the clients, the upload secret and the
// tokens are changed through the same Admin use case as the operator's
// commands.
type Settings struct {
	staff     ports.Staff
	companies ports.CompanyRepository
	clients   ports.ClientRepository
	admin     *Admin
	calls     ports.DeprecatedCalls
	tokens    ports.TokenStore
	now       func() time.Time
}

var _ ports.Settings = (*Settings)(nil)

// NewSettings wires the settings use case.
func NewSettings(s ports.Staff, companies ports.CompanyRepository, clients ports.ClientRepository, admin *Admin,
	calls ports.DeprecatedCalls, tokens ports.TokenStore) *Settings {
	return &Settings{staff: s, companies: companies, clients: clients, admin: admin, calls: calls, tokens: tokens, now: time.Now}
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

// Clients answers the company's OAuth clients, revoked ones too.
func (s *Settings) Clients(ctx context.Context, m staff.Member) ([]domain.Client, error) {
	return s.clients.List(ctx, m.Company)
}

// ClientUsage answers the calls per day and the last call of each of
// clients (as Clients answered them) that is the member's company's.
func (s *Settings) ClientUsage(ctx context.Context, m staff.Member, clients []domain.Client) (map[domain.ClientID]domain.ClientUsage, error) {
	out := map[domain.ClientID]domain.ClientUsage{}
	for _, c := range clients {
		if c.CompanyID != m.Company {
			continue
		}
		u, err := s.tokens.Usage(ctx, c.ID, s.now())
		if err != nil {
			return nil, err
		}
		out[c.ID] = u
	}
	return out, nil
}

// CreateClient registers an integrator's client of the member's company;
// its secret is shown once.
func (s *Settings) CreateClient(ctx context.Context, m staff.Member, name string, scopes domain.Scopes) (domain.Client, domain.Secret, error) {
	if err := mayChange(m); err != nil {
		return domain.Client{}, "", err
	}
	if len(scopes) == 0 {
		return domain.Client{}, "", &domain.ValidationError{Field: "scopes", Message: "choose at least one scope"}
	}
	return s.admin.CreateClient(ctx, NewClientInput{Company: m.Company, Name: name, Scopes: scopes.String()})
}

// ownClient answers the company's client of id; another company's is not found.
func (s *Settings) ownClient(ctx context.Context, m staff.Member, id domain.ClientID) (domain.Client, error) {
	c, err := s.clients.Get(ctx, id)
	if err != nil {
		return domain.Client{}, err
	}
	if c.CompanyID != m.Company {
		return domain.Client{}, domain.ErrNotFound
	}
	return c, nil
}

// RotateClientSecret gives the company's client a new secret; the old one
// works on for overlap.
func (s *Settings) RotateClientSecret(ctx context.Context, m staff.Member, id domain.ClientID, overlap time.Duration) (domain.Secret, error) {
	if err := mayChange(m); err != nil {
		return "", err
	}
	c, err := s.ownClient(ctx, m, id)
	if err != nil {
		return "", err
	}
	if c.RevokedAt != nil {
		return "", domain.ErrConflict
	}
	return s.admin.RotateClientSecret(ctx, m.Company, c, overlap)
}

// RevokeClient revokes the company's client; its live tokens end at once.
func (s *Settings) RevokeClient(ctx context.Context, m staff.Member, id domain.ClientID) error {
	if err := mayChange(m); err != nil {
		return err
	}
	if _, err := s.ownClient(ctx, m, id); err != nil {
		return err
	}
	return s.admin.RevokeClient(ctx, id)
}

// RotateUploadSecret replaces the company's upload secret; the old one
// stops working at once.
func (s *Settings) RotateUploadSecret(ctx context.Context, m staff.Member) (domain.Secret, error) {
	if err := mayChange(m); err != nil {
		return "", err
	}
	return s.admin.RotateUploadSecret(ctx, m.Company)
}

// DeprecatedCalls answers the company's calls to deprecated operations, so
// that the practice knows which integrator to ask to move on.
func (s *Settings) DeprecatedCalls(ctx context.Context, m staff.Member) ([]release.Calls, error) {
	return s.calls.List(ctx, &m.Company)
}

