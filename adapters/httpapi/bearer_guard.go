package httpapi

import (
	"context"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
)

// grantOf is the grant the bearer check accepted (httpkit.GrantOf).
func grantOf(c *fiber.Ctx) domain.Grant { return httpkit.GrantOf(c) }

// guard is the RFC 6750 bearer check (httpkit.BearerCheck), refusing in
// the resource API's words.
func (h *Resources) guard() fiber.Handler {
	return httpkit.BearerCheck{Authenticate: h.authenticate, BodyLimit: httpkit.SmallBodyLimit, Refuse: refuseBearer, Share: h.share}.Handler
}

func (h *Resources) authenticate(ctx context.Context, token string) (domain.Grant, ratelimit.State, error) {
	return h.auth.Authenticate(ctx, token)
}

// requireScope lets a request through only if its token carries scope.
func requireScope(scope domain.Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !grantOf(c).Scopes.Contains(scope) {
			return refuseBearer(c, httpkit.InsufficientScope(scope, "this request"))
		}
		return c.Next()
	}
}

// refuseBearer answers a refusal with its challenge and a JSON body of the
// same error; a client over its rate with a problem document.
func refuseBearer(c *fiber.Ctx, r httpkit.Refusal) error {
	httpkit.Challenge(c, r)
	if r.Status == fiber.StatusTooManyRequests {
		return &problemError{problemDoc{Type: r.Code, Title: http.StatusText(r.Status), Status: r.Status, Detail: r.Description}}
	}
	body := fiber.Map{"error": r.Code, "error_description": r.Description}
	if r.Code == "" {
		body["error"] = "unauthorized"
	}
	if r.Scope != "" {
		body["scope"] = string(r.Scope)
	}
	return c.Status(r.Status).JSON(body)
}
