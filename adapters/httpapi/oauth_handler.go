package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/smart"
	"github.com/praxis-health/praxis/ports"
)

// OAuth paths (docs/contract.md §3).
const (
	// TokenPath is the OAuth token endpoint, which every door names in its discovery document.
	TokenPath      = "/api/oauth/v2/token" //nolint:gosec // a path, not a credential
	revokePath     = "/api/oauth/v2/revoke"
	introspectPath = "/api/oauth/v2/introspect"
	metadataPath   = "/.well-known/oauth-authorization-server"
)

// OAuthOptions: PublicURL is the issuer in the metadata; empty means the
// scheme and host the request came in on.
type OAuthOptions struct {
	PublicURL string
	// TrustedProxies may tell the client's address in X-Forwarded-For.
	TrustedProxies []netip.Prefix
}

// OAuth serves the token, revocation, introspection and metadata endpoints.
type OAuth struct {
	auth    ports.Authorizer
	opts    OAuthOptions
	issued  metric.Int64Counter
	refused metric.Int64Counter
}

// NewOAuth serves auth.
func NewOAuth(auth ports.Authorizer, opts OAuthOptions, tel httpkit.Telemetry) *OAuth {
	meter := tel.WithDefaults().Meter.Meter(instrumentation)
	return &OAuth{auth: auth, opts: opts,
		issued:  httpkit.Must(meter.Int64Counter("praxis.oauth.tokens.issued", metric.WithDescription("Access tokens issued"))),
		refused: httpkit.Must(meter.Int64Counter("praxis.oauth.tokens.refused", metric.WithDescription("Token requests refused, by RFC 6749 error code"))),
	}
}

func (h *OAuth) Register(app fiber.Router) {
	app.Post(TokenPath, h.token)
	app.Post(revokePath, h.revoke)
	app.Post(introspectPath, h.introspect)
	app.Get(metadataPath, h.metadata)
}

type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
}

// token is the client-credentials grant (RFC 6749 §4.4).
func (h *OAuth) token(c *fiber.Ctx) error {
	noStore(c)
	req, err := readClientRequest(c, h.opts.TrustedProxies)
	if err != nil {
		return h.refuse(c, req, err)
	}
	switch grantType := req.params.Get("grant_type"); grantType {
	case "client_credentials":
	case "":
		return h.refuse(c, req, domain.OAuthErrorf(domain.OAuthInvalidRequest, "grant_type is required"))
	default:
		return h.refuse(c, req, domain.OAuthErrorf(domain.OAuthUnsupportedGrantType, "only the client_credentials grant is supported"))
	}
	tr := ports.TokenRequest{Client: req.client, Assertion: req.assertion}
	if tr.Assertion != nil {
		tr.Assertion.Audience = h.issuer(c) + TokenPath
	}
	if req.params.Has("scope") {
		scope := req.params.Get("scope")
		tr.Scope = &scope
	}
	issued, err := h.auth.IssueToken(c.UserContext(), tr)
	if err != nil {
		return h.refuse(c, req, err)
	}
	h.issued.Add(context.WithoutCancel(c.UserContext()), 1)
	return c.JSON(tokenResponse{
		AccessToken: issued.AccessToken, TokenType: "Bearer",
		ExpiresIn: int64(issued.ExpiresIn / time.Second), Scope: issued.Scopes.String(),
	})
}

// revoke is RFC 7009: 200 with an empty body whether or not the token was
// live, so that the endpoint tells nothing about other clients' tokens.
func (h *OAuth) revoke(c *fiber.Ctx) error {
	noStore(c)
	req, err := readClientRequest(c, h.opts.TrustedProxies)
	if err == nil {
		err = h.auth.Revoke(c.UserContext(), req.client, req.params.Get("token"))
	}
	if err != nil {
		_, err = oauthError(c, req, err)
		return err
	}
	c.Status(fiber.StatusOK)
	return nil
}

type introspection struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	TokenType string `json:"token_type,omitempty"`
	Exp       int64  `json:"exp,omitempty"`
	Iat       int64  `json:"iat,omitempty"`
	CompanyID string `json:"company_id,omitempty"`
}

// introspect is RFC 7662, limited to the requesting client's own tokens.
func (h *OAuth) introspect(c *fiber.Ctx) error {
	noStore(c)
	req, err := readClientRequest(c, h.opts.TrustedProxies)
	var got ports.Introspection
	if err == nil {
		got, err = h.auth.Introspect(c.UserContext(), req.client, req.params.Get("token"))
	}
	if err != nil {
		_, err = oauthError(c, req, err)
		return err
	}
	if !got.Active {
		return c.JSON(introspection{Active: false})
	}
	g := got.Grant
	return c.JSON(introspection{
		Active: true, Scope: g.Scopes.String(), ClientID: string(g.ClientID), TokenType: "Bearer",
		Exp: g.ExpiresAt.Unix(), Iat: g.IssuedAt.Unix(), CompanyID: g.CompanyID.String(),
	})
}

// issuer is the server's public base URL: PRAXIS_PUBLIC_URL, else the request's.
func (h *OAuth) issuer(c *fiber.Ctx) string { return httpkit.PublicBase(c, h.opts.PublicURL) }

// metadata is RFC 8414.
func (h *OAuth) metadata(c *fiber.Ctx) error {
	issuer := h.issuer(c)
	authMethods := []string{"client_secret_basic", "client_secret_post"}
	return c.JSON(fiber.Map{
		"issuer":                                           issuer,
		"token_endpoint":                                   issuer + TokenPath,
		"revocation_endpoint":                              issuer + revokePath,
		"introspection_endpoint":                           issuer + introspectPath,
		"grant_types_supported":                            []string{"client_credentials"},
		"response_types_supported":                         []string{},
		"token_endpoint_auth_methods_supported":            append(authMethods, "private_key_jwt"),
		"token_endpoint_auth_signing_alg_values_supported": smart.AssertionAlgorithms,
		"revocation_endpoint_auth_methods_supported":       authMethods,
		"introspection_endpoint_auth_methods_supported":    authMethods,
		"scopes_supported":                                 domain.SupportedScopes().Strings(),
		"service_documentation":                            issuer + openAPIPath,
	})
}

// clientRequest is a parsed request of an authenticating client.
type clientRequest struct {
	params url.Values
	client ports.ClientCredentials
	basic  bool // the client authenticated (or tried to) with HTTP Basic
	// assertion is the JWT of a client authenticating with a signed
	// assertion (RFC 7523); the token endpoint sets its audience.
	assertion *ports.ClientAssertion
}

// readClientRequest reads the body parameters and the client's credentials,
// from HTTP Basic or from the body, never both (RFC 6749 §2.3).
func readClientRequest(c *fiber.Ctx, trusted []netip.Prefix) (clientRequest, error) {
	var req clientRequest
	authorization := c.Get(fiber.HeaderAuthorization)
	req.basic = authorization != ""
	if len(c.Request().URI().QueryString()) > 0 {
		return req, domain.OAuthErrorf(domain.OAuthInvalidRequest, "parameters belong in the request body, never in the URL")
	}
	params, err := readParams(c)
	if err != nil {
		return req, err
	}
	req.params = params
	if params.Has("client_assertion") || params.Has("client_assertion_type") {
		return readAssertion(c, req, trusted)
	}
	if !req.basic {
		req.client = ports.ClientCredentials{ID: domain.ClientID(params.Get("client_id")), Secret: params.Get("client_secret"),
			Source: httpkit.ClientAddress(c, trusted)}
		return req, nil
	}
	if params.Has("client_secret") {
		return req, domain.OAuthErrorf(domain.OAuthInvalidRequest, "use one client authentication method: HTTP Basic or client_secret in the body")
	}
	id, secret, ok := parseBasic(authorization)
	if !ok {
		return req, domain.OAuthErrorf(domain.OAuthInvalidClient, "the Authorization header is not valid HTTP Basic client authentication")
	}
	if params.Has("client_id") && params.Get("client_id") != id {
		return req, domain.OAuthErrorf(domain.OAuthInvalidRequest, "client_id in the body differs from the one in the Authorization header")
	}
	req.client = ports.ClientCredentials{ID: domain.ClientID(id), Secret: secret, Source: httpkit.ClientAddress(c, trusted)}
	return req, nil
}

// readAssertion reads a client authenticating with a signed assertion,
// which must be its only method (RFC 7521 §4.2).
func readAssertion(c *fiber.Ctx, req clientRequest, trusted []netip.Prefix) (clientRequest, error) {
	switch {
	case req.basic || req.params.Has("client_secret"):
		return req, domain.OAuthErrorf(domain.OAuthInvalidRequest, "use one client authentication method: a client assertion, HTTP Basic or client_secret")
	case req.params.Get("client_assertion_type") != smart.ClientAssertionType:
		return req, domain.OAuthErrorf(domain.OAuthInvalidRequest, "client_assertion_type must be %s", smart.ClientAssertionType)
	case req.params.Get("client_assertion") == "":
		return req, domain.OAuthErrorf(domain.OAuthInvalidRequest, "client_assertion is required with client_assertion_type")
	}
	req.assertion = &ports.ClientAssertion{JWT: req.params.Get("client_assertion")}
	req.client = ports.ClientCredentials{ID: domain.ClientID(req.params.Get("client_id")), Source: httpkit.ClientAddress(c, trusted)}
	return req, nil
}

// parseBasic decodes RFC 7617 credentials whose parts are form-urlencoded (RFC 6749 §2.3.1).
func parseBasic(header string) (id, secret string, ok bool) {
	scheme, encoded, found := strings.Cut(header, " ")
	if !found || !strings.EqualFold(scheme, "Basic") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return "", "", false
	}
	rawID, rawSecret, found := strings.Cut(string(raw), ":")
	if !found {
		return "", "", false
	}
	id, errID := url.QueryUnescape(rawID)
	secret, errSecret := url.QueryUnescape(rawSecret)
	return id, secret, errID == nil && errSecret == nil
}

// refuse answers a failed token request and counts it by its error code.
func (h *OAuth) refuse(c *fiber.Ctx, req clientRequest, err error) error {
	code, err := oauthError(c, req, err)
	h.refused.Add(context.WithoutCancel(c.UserContext()), 1, metric.WithAttributes(attribute.String("error", code)))
	return err
}

// oauthError writes an RFC 6749 §5.2 error and returns its code; anything
// that is not a refusal goes on to the app's error handler as a 500, with
// the code "server_error".
func oauthError(c *fiber.Ctx, req clientRequest, err error) (string, error) {
	var (
		oe       *domain.OAuthError
		tooMany  *domain.TooManyAttempts
		badParam *errParams
		fe       *fiber.Error
	)
	status := fiber.StatusBadRequest
	switch {
	case errors.As(err, &oe):
		if oe.Code == domain.OAuthInvalidClient {
			status = fiber.StatusUnauthorized
			if req.basic {
				c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="`+httpkit.Realm+`", charset="UTF-8"`)
			}
		}
	case errors.As(err, &tooMany):
		// slow_down is the registered code for "ask less often" (RFC 8628 §3.5).
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(tooMany.RetryAfterSeconds()))
		status, oe = fiber.StatusTooManyRequests, domain.OAuthErrorf("slow_down",
			"too many failed client authentications; retry after %d seconds", tooMany.RetryAfterSeconds())
	case errors.Is(err, domain.ErrUnavailable):
		// RFC 6749 §4.1.2.1's code for "try again later", answered with the token endpoint's status 503.
		slog.WarnContext(c.UserContext(), "token endpoint: a dependency is unavailable", "error", err.Error())
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(domain.RetryAfterUnavailable))
		status, oe = fiber.StatusServiceUnavailable, domain.OAuthErrorf("temporarily_unavailable", "try again later")
	case errors.As(err, &badParam):
		oe = domain.OAuthErrorf(domain.OAuthInvalidRequest, "%s", badParam.reason)
	case errors.As(err, &fe) && fe.Code < 500:
		status, oe = fe.Code, domain.OAuthErrorf(domain.OAuthInvalidRequest, "%s", fe.Message)
	default:
		return "server_error", err
	}
	return oe.Code, c.Status(status).JSON(fiber.Map{"error": oe.Code, "error_description": oe.Description})
}

// noStore keeps tokens and their errors out of every cache (RFC 6749 §5.1).
func noStore(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderPragma, "no-cache")
}
