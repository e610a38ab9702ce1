package httpapi

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
)

type grantKey struct{}

// grantOf is the grant the guard accepted: its company is the only company a
// handler can see.
func grantOf(c *fiber.Ctx) domain.Grant {
	g, _ := c.Locals(grantKey{}).(domain.Grant)
	return g
}

// guard is the RFC 6750 bearer check.
func (h *Resources) guard(c *fiber.Ctx) error {
	outside, err := tokenOutsideHeader(c)
	if err != nil {
		return err
	}
	if outside {
		return bearerError(c, fiber.StatusBadRequest, "invalid_request", "the access token is accepted only in the Authorization header", "")
	}
	token, present, wellFormed := bearerToken(c.Get(fiber.HeaderAuthorization))
	switch {
	case !present:
		return bearerError(c, fiber.StatusUnauthorized, "", "a bearer token in the Authorization header is required", "")
	case !wellFormed:
		return bearerError(c, fiber.StatusBadRequest, "invalid_request", "the Authorization header is not Bearer and one token", "")
	}
	grant, rate, err := h.auth.Authenticate(c.UserContext(), token)
	if errors.Is(err, domain.ErrNotFound) {
		return bearerError(c, fiber.StatusUnauthorized, "invalid_token", "the access token is unknown, expired or revoked", "")
	}
	if err != nil {
		return err
	}
	// Known from here on, also to a refusal's audit event.
	c.Locals(grantKey{}, grant)
	// Practice data is never for shared caches.
	c.Set(fiber.HeaderCacheControl, "no-store")
	// The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): the
	// client's policy, and what is left of it in this window.
	c.Set("RateLimit-Policy", fmt.Sprintf(`"default";q=%d;w=%d`, rate.Limit, int(rate.Window/time.Second)))
	c.Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=%d`, max(rate.Remaining, 0), rate.ResetSeconds()))
	if rate.Exceeded() {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(rate.ResetSeconds()))
		return &problemError{problemDoc{Type: "rate-limited", Title: http.StatusText(fiber.StatusTooManyRequests),
			Status: fiber.StatusTooManyRequests, Detail: "this client's rate limit is used up for now; Retry-After says when the window ends"}}
	}
	return c.Next()
}

// requireScope lets a request through only if its token carries scope.
func requireScope(scope domain.Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !grantOf(c).Scopes.Contains(scope) {
			return bearerError(c, fiber.StatusForbidden, "insufficient_scope", "this request needs the scope "+string(scope), scope)
		}
		return c.Next()
	}
}

// bearerToken reads "Bearer <token>" (scheme case-insensitive). present is
// false when there is no Bearer credential at all.
func bearerToken(header string) (token string, present, wellFormed bool) {
	scheme, rest, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false, false
	}
	token = strings.TrimLeft(rest, " ")
	return token, true, token != "" && !strings.ContainsAny(token, " \t")
}

// tokenOutsideHeader reports an access_token in the query string or in a
// form or JSON body (RFC 6750 §2.2, §2.3 methods this API refuses).
func tokenOutsideHeader(c *fiber.Ctx) (bool, error) {
	if c.Request().URI().QueryArgs().Has("access_token") {
		return true, nil
	}
	mediaType, _, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if mediaType != fiber.MIMEApplicationForm && mediaType != fiber.MIMEApplicationJSON {
		return false, nil
	}
	body, err := readSmallBody(c)
	if err != nil {
		return false, err
	}
	if mediaType == fiber.MIMEApplicationForm {
		values, err := url.ParseQuery(string(body))
		return err == nil && values.Has("access_token"), nil
	}
	var fields map[string]any
	if json := c.App().Config().JSONDecoder; json(body, &fields) == nil {
		_, ok := fields["access_token"]
		return ok, nil
	}
	return false, nil
}

// bearerError answers with an RFC 6750 WWW-Authenticate challenge and a JSON
// body of the same error. Without code (no token at all) the challenge
// names only the realm (RFC 6750 §3.1).
func bearerError(c *fiber.Ctx, status int, code, description string, scope domain.Scope) error {
	challenge := `Bearer realm="` + realm + `"`
	if code != "" {
		challenge += `, error="` + code + `", error_description="` + description + `"`
	}
	if scope != "" {
		challenge += `, scope="` + string(scope) + `"`
	}
	c.Set(fiber.HeaderWWWAuthenticate, challenge)
	body := fiber.Map{"error": code, "error_description": description}
	if code == "" {
		body["error"] = "unauthorized"
	}
	if scope != "" {
		body["scope"] = string(scope)
	}
	return c.Status(status).JSON(body)
}
