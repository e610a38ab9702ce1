package usecase

import (
	"context"
	"strings"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/domain/release"
	"github.com/praxis-health/praxis/ports"
)

// Integrations is the operator's use case (Admin) for one company's own
// people, by grant (docs/contract.md §13): its OAuth clients, their use,
// and the upload secret, as the settings pages show and change them.
// Reading needs only the company; a change needs settings:write, which a
// settings admin's grant holds and no OAuth client may.
type Integrations struct {
	clients ports.ClientRepository
	admin   *Admin
	calls   ports.DeprecatedCalls
	tokens  ports.TokenStore
	now     func() time.Time
}

var _ ports.Integrations = (*Integrations)(nil)

// NewIntegrations wires the company's integrations on the operator's use case.
func NewIntegrations(clients ports.ClientRepository, admin *Admin, calls ports.DeprecatedCalls, tokens ports.TokenStore) *Integrations {
	return &Integrations{clients: clients, admin: admin, calls: calls, tokens: tokens, now: time.Now}
}

// Clients answers the company's OAuth clients, revoked ones too.
func (in *Integrations) Clients(ctx context.Context, g domain.Grant) ([]domain.Client, error) {
	return in.clients.List(ctx, g.CompanyID)
}

// ClientUsage answers the calls per day and the last call of each of
// clients (as Clients answered them) that is the grant's company's.
func (in *Integrations) ClientUsage(ctx context.Context, g domain.Grant, clients []domain.Client) (map[domain.ClientID]ratelimit.Usage, error) {
	out := map[domain.ClientID]ratelimit.Usage{}
	for _, c := range clients {
		if c.CompanyID != g.CompanyID {
			continue
		}
		u, err := in.tokens.Usage(ctx, c.ID, in.now())
		if err != nil {
			return nil, err
		}
		out[c.ID] = u
	}
	return out, nil
}

// CreateClient registers an integrator's client of the grant's company;
// its secret is shown once, and a client registered with its public keys
// has none.
func (in *Integrations) CreateClient(ctx context.Context, g domain.Grant, c NewClientInput) (domain.Client, domain.Secret, error) {
	if err := g.Require(domain.ScopeSettingsWrite); err != nil {
		return domain.Client{}, "", err
	}
	if strings.TrimSpace(c.Scopes) == "" {
		return domain.Client{}, "", &domain.ValidationError{Field: "scopes", Message: "choose at least one scope"}
	}
	c.Company, c.ExternalRef = g.CompanyID, ""
	return in.admin.CreateClient(ctx, c)
}

// ownClient answers the company's client of id; another company's is not found.
func (in *Integrations) ownClient(ctx context.Context, g domain.Grant, id domain.ClientID) (domain.Client, error) {
	c, err := in.clients.Get(ctx, id)
	if err != nil {
		return domain.Client{}, err
	}
	if c.CompanyID != g.CompanyID {
		return domain.Client{}, domain.ErrNotFound
	}
	return c, nil
}

// RotateClientSecret gives the company's client a new secret; the old one
// works on for overlap.
func (in *Integrations) RotateClientSecret(ctx context.Context, g domain.Grant, id domain.ClientID, overlap time.Duration) (domain.Secret, error) {
	if err := g.Require(domain.ScopeSettingsWrite); err != nil {
		return "", err
	}
	c, err := in.ownClient(ctx, g, id)
	if err != nil {
		return "", err
	}
	if c.RevokedAt != nil || c.SignsAssertions() { // a client that signs has no secret to rotate
		return "", domain.ErrConflict
	}
	return in.admin.RotateClientSecret(ctx, g.CompanyID, c, overlap)
}

// RevokeClient revokes the company's client; its live tokens end at once.
func (in *Integrations) RevokeClient(ctx context.Context, g domain.Grant, id domain.ClientID) error {
	if err := g.Require(domain.ScopeSettingsWrite); err != nil {
		return err
	}
	if _, err := in.ownClient(ctx, g, id); err != nil {
		return err
	}
	return in.admin.RevokeClient(ctx, id)
}

// RotateUploadSecret replaces the company's upload secret; the old one
// stops working at once.
func (in *Integrations) RotateUploadSecret(ctx context.Context, g domain.Grant) (domain.Secret, error) {
	if err := g.Require(domain.ScopeSettingsWrite); err != nil {
		return "", err
	}
	return in.admin.RotateUploadSecret(ctx, g.CompanyID)
}

// DeprecatedCalls answers the company's calls to deprecated operations, so
// that the practice knows which integrator to ask to move on.
func (in *Integrations) DeprecatedCalls(ctx context.Context, g domain.Grant) ([]release.Calls, error) {
	return in.calls.List(ctx, &g.CompanyID)
}
