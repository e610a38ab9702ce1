package web

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// The Integrations page: the company's OAuth clients, made, rotated and revoked.

// scopeRow is one section of the scope table with its read and write scopes.
type scopeRow struct {
	Section     string
	Read, Write domain.Scope
}

func scopeTable() []scopeRow {
	var rows []scopeRow
	index := map[string]int{}
	for _, sc := range domain.SupportedScopes() {
		section, access, _ := strings.Cut(string(sc), ":")
		i, ok := index[section]
		if !ok {
			i = len(rows)
			index[section] = i
			rows = append(rows, scopeRow{Section: section})
		}
		if access == "read" {
			rows[i].Read = sc
		} else {
			rows[i].Write = sc
		}
	}
	return rows
}

// shown is a secret on the one page that shows it.
type shown struct {
	ClientID domain.ClientID
	Secret   domain.Secret
	Until    string
}

func (s *Site) integrations(c *fiber.Ctx, once *shown) error {
	clients, err := s.api.Integrations.Clients(ctx(c), memberOf(c).Grant())
	if err != nil {
		return s.fail(c, err)
	}
	calls, err := s.api.Integrations.DeprecatedCalls(ctx(c), memberOf(c).Grant())
	if err != nil {
		return s.fail(c, err)
	}
	usage, err := s.api.Integrations.ClientUsage(ctx(c), memberOf(c).Grant(), clients)
	if err != nil {
		return s.fail(c, err)
	}
	return s.render(c, "integrations", map[string]any{"Clients": clients, "ScopeTable": scopeTable(), "Shown": once, "Calls": calls,
		"Usage": usage})
}

func (s *Site) integrationsPage(c *fiber.Ctx) error { return s.integrations(c, nil) }

func (s *Site) createClient(c *fiber.Ctx) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	scopes, err := domain.ParseScopes(strings.Join(form["scope"], " "))
	if err != nil {
		return err
	}
	// A client that signs in with its keys (SMART Backend Services) names
	// them by URL or pastes its JWK Set; it gets no secret.
	in := ports.ClientInput{Name: form.Get("name"), Scopes: scopes.String(), KeySetURL: strings.TrimSpace(form.Get("jwks_url"))}
	if set := strings.TrimSpace(form.Get("jwks")); set != "" {
		in.KeySet = []byte(set)
	}
	client, secret, err := s.api.Integrations.CreateClient(ctx(c), memberOf(c).Grant(), in)
	if err != nil {
		return err
	}
	c.Locals(objectKey{}, string(client.ID))
	c.Status(fiber.StatusCreated)
	return s.integrations(c, &shown{ClientID: client.ID, Secret: secret})
}

// rotationOverlap is how long a rotated client secret keeps working.
const rotationOverlap = 24 * time.Hour

func (s *Site) rotateClient(c *fiber.Ctx) error {
	id := domain.ClientID(c.Params("id"))
	if !id.Plausible() {
		return domain.ErrNotFound
	}
	c.Locals(objectKey{}, string(id))
	secret, err := s.api.Integrations.RotateClientSecret(ctx(c), memberOf(c).Grant(), id, rotationOverlap)
	if err != nil {
		return err
	}
	return s.integrations(c, &shown{ClientID: id, Secret: secret, Until: s.now().Add(rotationOverlap).UTC().Format("2006-01-02 15:04 UTC")})
}

func (s *Site) revokeClient(c *fiber.Ctx) error {
	id := domain.ClientID(c.Params("id"))
	if !id.Plausible() {
		return domain.ErrNotFound
	}
	c.Locals(objectKey{}, string(id))
	if err := s.api.Integrations.RevokeClient(ctx(c), memberOf(c).Grant(), id); err != nil {
		return err
	}
	return c.Redirect("/settings/integrations", fiber.StatusSeeOther)
}
