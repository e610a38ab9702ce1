package httpkit

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
)

// Realm is the protection space both token doors (the resource API and
// FHIR) name in their challenges.
const Realm = "praxis"

type grantKey struct{}

// GrantOf is the grant the bearer check accepted: its company is the only
// company a handler can see. The zero Grant before the check, or after a refusal.
func GrantOf(c *fiber.Ctx) domain.Grant {
	g, _ := c.Locals(grantKey{}).(domain.Grant)
	return g
}

// SetGrant keeps g as the request's grant, as the bearer check does when it
// accepts a token (a door's tests stand in for the check with it).
func SetGrant(c *fiber.Ctx, g domain.Grant) { c.Locals(grantKey{}, g) }

// Refusal is one refusal of the bearer check (RFC 6750 §3.1), for a door
// to answer in its own shape. Code is empty when no token was sent at all;
// RetryAfter is set for a client over its rate (429).
type Refusal struct {
	Status      int
	Code        string
	Description string
	Scope       domain.Scope
	RetryAfter  int
}

// InsufficientScope is the refusal of a request whose grant lacks scope.
func InsufficientScope(scope domain.Scope, what string) Refusal {
	return Refusal{Status: fiber.StatusForbidden, Code: "insufficient_scope", Description: what + " needs the scope " + string(scope), Scope: scope}
}

// Challenge sets the refusal's WWW-Authenticate header: without a code
// (no token at all) it names only the realm (RFC 6750 §3.1).
func Challenge(c *fiber.Ctx, r Refusal) {
	if r.Status == fiber.StatusTooManyRequests {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(r.RetryAfter))
		return
	}
	challenge := `Bearer realm="` + Realm + `"`
	if r.Code != "" {
		challenge += `, error="` + r.Code + `", error_description="` + r.Description + `"`
	}
	if r.Scope != "" {
		challenge += `, scope="` + string(r.Scope) + `"`
	}
	c.Set(fiber.HeaderWWWAuthenticate, challenge)
}

// BearerCheck is the RFC 6750 bearer check of every door that takes access
// tokens: the token only in the Authorization header, looked up by
// Authenticate (the Authorizer port's), the client's rate counted and told
// in the IETF RateLimit fields. Refuse answers a refusal in the door's shape.
type BearerCheck struct {
	Authenticate func(ctx context.Context, token string) (domain.Grant, ratelimit.State, error)
	// BodyLimit bounds the body read to look for a token sent in it.
	BodyLimit int
	Refuse    func(c *fiber.Ctx, r Refusal) error
	// Share bounds the requests of one company that run at once (nil: no bound).
	Share *CompanyShare
}

// Handler is the check as a fiber handler.
func (b BearerCheck) Handler(c *fiber.Ctx) error {
	outside, err := b.tokenOutsideHeader(c)
	if err != nil {
		return err
	}
	if outside {
		return b.Refuse(c, Refusal{Status: fiber.StatusBadRequest, Code: "invalid_request", Description: "the access token is accepted only in the Authorization header"})
	}
	token, present, wellFormed := bearerToken(c.Get(fiber.HeaderAuthorization))
	switch {
	case !present:
		return b.Refuse(c, Refusal{Status: fiber.StatusUnauthorized, Description: "a bearer token in the Authorization header is required"})
	case !wellFormed:
		return b.Refuse(c, Refusal{Status: fiber.StatusBadRequest, Code: "invalid_request", Description: "the Authorization header is not Bearer and one token"})
	}
	grant, rate, err := b.Authenticate(c.UserContext(), token)
	if errors.Is(err, domain.ErrNotFound) {
		return b.Refuse(c, Refusal{Status: fiber.StatusUnauthorized, Code: "invalid_token", Description: "the access token is unknown, expired or revoked"})
	}
	if err != nil {
		return err
	}
	// Known from here on, also to a refusal's audit event.
	SetGrant(c, grant)
	// Practice data is never for shared caches.
	c.Set(fiber.HeaderCacheControl, "no-store")
	// The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): the
	// client's policy, and what is left of it in this window.
	c.Set("RateLimit-Policy", fmt.Sprintf(`"default";q=%d;w=%d`, rate.Limit, int(rate.Window/time.Second)))
	c.Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=%d`, max(rate.Remaining, 0), rate.ResetSeconds()))
	if rate.Exceeded() {
		return b.Refuse(c, Refusal{Status: fiber.StatusTooManyRequests, Code: "rate-limited",
			Description: "this client's rate limit is used up for now; Retry-After says when the window ends", RetryAfter: rate.ResetSeconds()})
	}
	release, ok := b.Share.Acquire(c.UserContext(), grant.CompanyID)
	if !ok {
		if b.Share.refused != nil {
			b.Share.refused(context.WithoutCancel(c.UserContext()), grant.Plan)
		}
		return b.Refuse(c, Refusal{Status: fiber.StatusTooManyRequests, Code: "company-busy",
			Description: "the practice has as many requests running on this server as its share allows; Retry-After says when to try again", RetryAfter: 1})
	}
	defer release()
	c.Locals(shareKey{}, release)
	return c.Next()
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
// form or JSON body (RFC 6750 §2.2, §2.3 methods praxis refuses).
func (b BearerCheck) tokenOutsideHeader(c *fiber.Ctx) (bool, error) {
	if c.Request().URI().QueryArgs().Has("access_token") {
		return true, nil
	}
	mediaType, _, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if mediaType != fiber.MIMEApplicationForm && mediaType != fiber.MIMEApplicationJSON && mediaType != MIMEFHIRJSON {
		return false, nil
	}
	body, err := ReadBody(c, b.BodyLimit)
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

// MIMEFHIRJSON is FHIR's JSON media type (FHIR R4 §3.1.0.1.2).
const MIMEFHIRJSON = "application/fhir+json"
