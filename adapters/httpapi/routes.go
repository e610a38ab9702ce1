package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// resourcePrefix is the base of the resource API; everything under it needs a bearer token.
const resourcePrefix = "/api/oauth/v2/resource"

// Resources is the resource API: the bearer guard in front of every section.
type Resources struct {
	auth     ports.Authorizer
	door     httpkit.AuditDoor
	share    *httpkit.CompanyShare
	sections []httpkit.Route
}

// NewResources guards sections with auth; every request with a valid
// token is an audit event of its company.
func NewResources(auth ports.Authorizer, auditor ports.Auditor, opts OAuthOptions, tel httpkit.Telemetry, share *httpkit.CompanyShare,
	sections []httpkit.Route) *Resources {
	return &Resources{auth: auth, door: newAuditDoor(auditor, opts.TrustedProxies, tel), share: share, sections: sections}
}

// Register mounts the guard first, so that no section, and no unknown path
// under the prefix, is reachable without a valid token.
func (h *Resources) Register(app fiber.Router) {
	g := app.Group(resourcePrefix, h.door.Audited(resourceSubject), h.guard())
	for _, s := range h.sections {
		s.Register(g)
	}
	// Anything else under the prefix, for a valid token, is an unknown section.
	g.Use(func(*fiber.Ctx) error { return domain.ErrNotFound })
}
