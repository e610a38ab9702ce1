// Package web is the practice's settings site (docs/contract.md §13):
// server-rendered pages under /settings for the company's own staff, who sign
// in with passkeys. It sits beside the JSON API, never inside it: what the
// API has too (webhooks, the audit trail, devices and orders) it does
// through the API's own driving ports with the member's grant, and what is
// staff's own (members, passkeys, clients, the upload secret) through
// ports.Settings.
// Everything it serves is embedded: templates, one style sheet, one script.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/csrf"
	"github.com/gofiber/fiber/v2/middleware/session"
	"github.com/google/uuid"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/staff"
	"github.com/praxis-health/praxis/ports"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the site.
type Options struct {
	// SiteURL is the public origin; its host is the passkeys' relying party.
	SiteURL string
	// Reverify is how long after a passkey check a secret may be shown or replaced.
	Reverify time.Duration
	// Idle ends a session without a request for this long; Lifetime ends
	// any session this long after its sign-in.
	Idle, Lifetime time.Duration
	// Release is the API release the overview names.
	Release string
	// Lockout throttles failed sign-ins per address and per account.
	Lockout        domain.LockoutPolicy
	TrustedProxies []netip.Prefix
	// SSO, when its issuer is set, offers sign-in at the operator's OpenID provider.
	SSO SSO
}

// Site serves the settings pages.
type Site struct {
	opts     Options
	settings ports.Settings
	api      API
	attempts ports.AttemptCounter
	log      *slog.Logger
	store    *session.Store
	passkeys *webauthn.WebAuthn
	sso      *sso
	pages    map[string]*template.Template
	now      func() time.Time
}

// API is the API's driving ports the pages use, with the member's grant.
// Auditor may be nil (the benchmark build without the trail); every change
// a member makes is otherwise an audit event.
type API struct {
	Auditor  ports.Auditor
	Webhooks ports.Webhooks
	Records  ports.Records
	Orders   ports.DeviceOrders
	Files    ports.Files
	// Integrations is the operator's use case for the company's clients
	// and upload secret, which the API does not have.
	Integrations ports.Integrations
}

// New builds the site.
func New(opts Options, settings ports.Settings, api API, sessions ports.Sessions, attempts ports.AttemptCounter,
	log *slog.Logger) (*Site, error) {
	if opts.Idle <= 0 {
		opts.Idle = staff.IdleTimeout
	}
	if opts.Lifetime <= 0 {
		opts.Lifetime = staff.AbsoluteTimeout
	}
	u, err := url.Parse(opts.SiteURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("settings: public URL %q has no host", opts.SiteURL)
	}
	if _, err := netip.ParseAddr(u.Hostname()); err == nil {
		// Passkeys need a host name: the API serves on, the settings do not.
		log.Warn("settings pages are off: PRAXIS_PUBLIC_URL names an address; passkeys need a host name (localhost on one machine)",
			"public_url", opts.SiteURL)
		return &Site{opts: opts, log: log}, nil
	}
	uv := protocol.VerificationRequired
	wa, err := webauthn.New(&webauthn.Config{
		RPID: u.Hostname(), RPDisplayName: "praxis", RPOrigins: []string{u.Scheme + "://" + u.Host},
		AuthenticatorSelection: protocol.AuthenticatorSelection{ResidentKey: protocol.ResidentKeyRequirementRequired, UserVerification: uv},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: 5 * time.Minute, TimeoutUVD: 5 * time.Minute},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: 5 * time.Minute, TimeoutUVD: 5 * time.Minute},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("settings: passkeys: %w", err)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Site{opts: opts, settings: settings, api: api, attempts: attempts, log: log,
		passkeys: wa, pages: pages, now: time.Now}
	if opts.SSO.Issuer != "" {
		s.sso = &sso{cfg: opts.SSO, redirect: strings.TrimSuffix(opts.SiteURL, "/") + "/settings/sso/callback"}
	}
	s.store = session.New(session.Config{
		Storage:           storage{sessions},
		Expiration:        opts.Idle,
		KeyLookup:         "cookie:" + sessionCookie,
		CookiePath:        "/",
		CookieSecure:      true,
		CookieHTTPOnly:    true,
		CookieSameSite:    fiber.CookieSameSiteStrictMode,
		CookieSessionOnly: true,
		KeyGenerator:      staff.NewToken,
	})
	return s, nil
}

// The cookies the site sets: each __Host-, Secure, HttpOnly, SameSite=Strict.
const (
	sessionCookie  = "__Host-praxis-session"
	csrfCookie     = "__Host-praxis-csrf"
	languageCookie = "__Host-praxis-lang"
)

// Register mounts the site under /settings.
func (s *Site) Register(r fiber.Router) {
	if s.passkeys == nil { // off: the public URL is an address
		r.All("/settings/*", func(c *fiber.Ctx) error {
			return c.Status(fiber.StatusNotFound).SendString("The settings pages need PRAXIS_PUBLIC_URL with a host name, not an address.")
		})
		return
	}
	static, _ := fs.Sub(staticFS, "static")
	r.Get("/settings/static/:name", s.headers, func(c *fiber.Ctx) error {
		name := c.Params("name")
		b, err := fs.ReadFile(static, name)
		if err != nil {
			return s.fail(c, domain.ErrNotFound)
		}
		c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
		c.Type(name[strings.LastIndexByte(name, '.')+1:])
		return c.Send(b)
	})
	g := r.Group("/settings", s.headers, csrf.New(csrf.Config{
		// The provider's redirect back carries no cookie (SameSite=Strict):
		// a CSRF token made there would start a session in place of the
		// browser's own, and lose the sign-in's state.
		Next:              func(c *fiber.Ctx) bool { return c.Path() == "/settings/sso/callback" },
		Session:           s.store,
		SessionKey:        "csrf",
		CookieName:        csrfCookie,
		CookiePath:        "/",
		CookieSecure:      true,
		CookieHTTPOnly:    true,
		CookieSameSite:    fiber.CookieSameSiteStrictMode,
		CookieSessionOnly: true,
		Expiration:        s.opts.Lifetime,
		ContextKey:        "csrf",
		KeyGenerator:      staff.NewToken,
		Extractor:         csrfFromHeaderOrForm,
		ErrorHandler: func(c *fiber.Ctx, err error) error {
			return s.fail(c, errCSRF)
		},
	}))
	g.Get("/signin", s.signInPage)
	g.Post("/signin/begin", s.signInBegin)
	g.Post("/signin/finish", s.signInFinish)
	g.Get("/join/:company/:token", s.joinPage)
	g.Post("/join/:company/:token/begin", s.joinBegin)
	g.Post("/join/:company/:token/finish", s.joinFinish)
	g.Post("/language", s.setLanguage)
	g.Get("/sso/start", s.ssoStart)
	g.Get("/sso/callback", s.ssoCallback)
	g.Get("/sso/finish", s.ssoFinish)

	m := g.Group("", s.requireMember)
	m.Get("/", s.overviewPage)
	m.Post("/signout", s.signOut)
	m.Post("/verify/begin", s.verifyBegin)
	m.Post("/verify/finish", s.verifyFinish)
	m.Get("/integrations", s.integrationsPage)
	m.Post("/integrations", s.change("create", "settings.clients", s.fresh(s.createClient)))
	m.Post("/integrations/:id/rotate", s.change("update", "settings.clients", s.fresh(s.rotateClient)))
	m.Post("/integrations/:id/revoke", s.change("delete", "settings.clients", s.revokeClient))
	m.Get("/devices", s.devicesPage)
	m.Post("/devices/rotate", s.change("update", "settings.upload_secret", s.fresh(s.rotateUploadSecret)))
	m.Post("/devices/register", s.change("create", "devices", s.registerDevice))
	m.Post("/devices/:id/credential", s.change("update", "devices", s.fresh(s.deviceCredential)))
	m.Post("/devices/orders", s.change("create", "device-orders", s.orderAtDevice))
	m.Post("/devices/orders/:id/cancel", s.change("update", "device-orders", s.cancelDeviceOrder))
	m.Post("/devices/results/:file/assign", s.change("update", "device-orders", s.assignResult))
	m.Get("/staff", s.staffPage)
	m.Post("/staff/invite", s.change("create", "settings.staff", s.inviteMember))
	m.Post("/staff/:id/role", s.change("update", "settings.staff", s.setRole))
	m.Post("/staff/:id/remove", s.change("delete", "settings.staff", s.removeMember))
	m.Post("/passkeys/begin", s.addPasskeyBegin)
	m.Post("/passkeys/finish", s.change("create", "settings.passkeys", s.addPasskeyFinish))
	m.Post("/passkeys/:key/remove", s.change("delete", "settings.passkeys", s.removePasskey))
	m.Get("/webhooks", s.webhooksPage)
	m.Get("/webhooks/:id", s.webhookPage)
	m.Post("/webhooks", s.change("create", "webhook-endpoints", s.fresh(s.createWebhook)))
	m.Post("/webhooks/:id/ping", s.change("update", "webhook-endpoints", s.pingWebhook))
	m.Post("/webhooks/:id/replay", s.change("update", "webhook-endpoints", s.replayWebhook))
	m.Post("/webhooks/:id/delete", s.change("delete", "webhook-endpoints", s.deleteWebhook))
	m.Get("/audit", s.auditPage)
	m.Get("/audit/export", httpkit.Streaming, s.auditExport)
}

// headers: no page is cached, framed or sent a referrer (an invitation's
// link carries its token), and the policy lets nothing run or load that
// is not the site's own file.
func (s *Site) headers(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Cross-Origin-Opener-Policy", "same-origin")
	return httpkit.SecurityHeaders(c)
}

func csrfFromHeaderOrForm(c *fiber.Ctx) (string, error) {
	if h := c.Get("X-CSRF-Token"); h != "" {
		return h, nil
	}
	form, err := readForm(c)
	if err != nil {
		return "", err
	}
	return form.Get("_csrf"), nil
}

// formKey keeps a request's parsed form for the handler after the CSRF check.
type formKey struct{}

func readForm(c *fiber.Ctx) (url.Values, error) {
	if v, ok := c.Locals(formKey{}).(url.Values); ok {
		return v, nil
	}
	if !strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationForm) {
		v := url.Values{}
		c.Locals(formKey{}, v)
		return v, nil
	}
	b, err := readBody(c)
	if err != nil {
		return nil, err
	}
	v, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, errBadRequest
	}
	c.Locals(formKey{}, v)
	return v, nil
}

var (
	errBadRequest = errors.New("the request is malformed")
	errCSRF       = errors.New("the form is stale or forged")
	errSignedOut  = errors.New("not signed in")
	errTooMany    = errors.New("too many failed sign-ins")
)

// memberKey holds the signed-in member of a request.
type memberKey struct{}

func memberOf(c *fiber.Ctx) staff.Member { m, _ := c.Locals(memberKey{}).(staff.Member); return m }

// requireMember lets a signed-in member through: a live session (idle 30
// min, at most 12 h) of a member who still exists. Anyone else goes to the
// sign-in page.
func (s *Site) requireMember(c *fiber.Ctx) error {
	sess, err := s.store.Get(c)
	if err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	st, ok := sessionOf(sess)
	if !ok || !st.Live(s.now(), s.opts.Lifetime) {
		return s.toSignIn(c, sess)
	}
	m, err := s.settings.Member(c.UserContext(), st.Company, st.Member)
	if errors.Is(err, domain.ErrNotFound) { // removed meanwhile
		return s.toSignIn(c, sess)
	}
	if err != nil {
		return s.fail(c, err)
	}
	c.Locals(memberKey{}, m)
	c.Locals(sessionKey{}, st)
	// The idle deadline moves without a write here: the CSRF middleware
	// before this one saves the session on every request.
	return c.Next()
}

func (s *Site) toSignIn(c *fiber.Ctx, sess *session.Session) error {
	if err := sess.Destroy(); err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	if c.Method() != fiber.MethodGet {
		return s.fail(c, errSignedOut)
	}
	return c.Redirect("/settings/signin", fiber.StatusSeeOther)
}

type sessionKey struct{}

// The session's fields, as fiber's session keeps them.
const (
	keyCompany  = "company"
	keyMember   = "member"
	keyStarted  = "started"
	keyVerified = "verified"
	keyCeremony = "ceremony"
	keyPending  = "pending"
)

func sessionOf(sess *session.Session) (staff.Session, bool) {
	company, _ := sess.Get(keyCompany).(string)
	member, _ := sess.Get(keyMember).(string)
	started, _ := sess.Get(keyStarted).(int64)
	verified, _ := sess.Get(keyVerified).(int64)
	cid, err1 := domain.ParseCompanyID(company)
	mid, err2 := uuid.Parse(member)
	if err1 != nil || err2 != nil {
		return staff.Session{}, false
	}
	return staff.Session{Company: cid, Member: mid, Started: time.UnixMilli(started), VerifiedAt: time.UnixMilli(verified)}, true
}

// fresh guards a handler that shows or replaces a secret: the member must
// have used the passkey within Reverify, else the page asks for it again.
func (s *Site) fresh(next fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		st, _ := c.Locals(sessionKey{}).(staff.Session)
		if !st.Fresh(s.now(), s.opts.Reverify) {
			// Back to the page the form was on: /settings/<page>.
			parts := strings.SplitN(strings.TrimPrefix(c.Path(), "/"), "/", 3)
			back := "/settings/"
			if len(parts) > 1 {
				back = "/settings/" + parts[1]
			}
			c.Status(fiber.StatusUnauthorized)
			return s.render(c, "verify", map[string]any{"Back": back})
		}
		return next(c)
	}
}

// objectKey is what a change names in its audit event.
type objectKey struct{}

// change records the member's state change as an audit event with its
// outcome, refused or not: every action in the settings is one. The handler
// names the object it reached with c.Locals(objectKey{}, id).
func (s *Site) change(action, section string, next fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := next(c)
		status := c.Response().StatusCode()
		if err != nil {
			status = statusOf(err)
		}
		if m := memberOf(c); s.api.Auditor != nil && m.ID != uuid.Nil {
			e := httpkit.NewEvent(c, s.opts.TrustedProxies, s.now())
			e.Agent = audit.Agent{Type: audit.AgentStaff, ID: m.ID.String(), Name: m.Email}
			e.Action, e.Section = action, section
			e.ObjectID, _ = c.Locals(objectKey{}).(string)
			e.Outcome = audit.Outcome{Status: status, Reason: reasonOf(err)}
			if aerr := s.api.Auditor.Record(c.UserContext(), m.Company, e); aerr != nil && err == nil {
				s.log.LogAttrs(c.UserContext(), slog.LevelError, "settings: audit event not recorded", slog.String("error", aerr.Error()))
				return s.fail(c, domain.Unavailable(aerr))
			}
		}
		if err != nil {
			return s.fail(c, err)
		}
		return nil
	}
}

// source is the request's address after the trusted proxies.
func (s *Site) source(c *fiber.Ctx) string { return httpkit.ClientAddress(c, s.opts.TrustedProxies) }

// StatusOf is the status a page answers err with: the pages' own refusals,
// then the doors' one table (httpkit.Problems), as the API answers them.
func StatusOf(err error) int { return statusOf(err) }

func statusOf(err error) int {
	switch {
	case errors.Is(err, errCSRF):
		return http.StatusForbidden
	case errors.Is(err, errSignedOut):
		return http.StatusUnauthorized
	case errors.Is(err, errTooMany):
		return http.StatusTooManyRequests
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	}
	var fe *fiber.Error // the body reader's (httpkit.ReadBody): 413, 400
	if errors.As(err, &fe) {
		return fe.Code
	}
	if p, ok := httpkit.ProblemOf(err); ok { // a ValidationError is ErrInvalid: 422
		return p.Status
	}
	return http.StatusInternalServerError
}

// reasonOf is a refusal's reason in an audit event: a word, never a value.
func reasonOf(err error) string {
	if err == nil {
		return ""
	}
	var ve *domain.ValidationError
	if errors.As(err, &ve) {
		return "invalid " + ve.Field
	}
	switch statusOf(err) {
	case http.StatusForbidden:
		return "insufficient-scope" // a grant without the change's scope (a viewer's)
	case http.StatusNotFound:
		return "not found"
	case http.StatusConflict:
		return "conflict"
	case http.StatusPreconditionFailed:
		return "stale version"
	}
	return "error"
}

// fail answers err as a page; a request of the passkey script as JSON.
func (s *Site) fail(c *fiber.Ctx, err error) error {
	status := statusOf(err)
	if status >= 500 {
		s.log.LogAttrs(c.UserContext(), slog.LevelError, "settings: request failed", slog.Int("status", status), slog.String("error", err.Error()))
	}
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(domain.RetryAfterUnavailable))
	}
	msg := "error." + fmt.Sprint(status)
	var ve *domain.ValidationError
	detail := ""
	if errors.As(err, &ve) {
		detail = ve.Message
	}
	c.Status(status)
	if strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON) {
		return c.JSON(fiber.Map{"error": s.t(c, msg), "detail": detail})
	}
	return s.render(c, "error", map[string]any{"Message": msg, "Detail": detail})
}

// ctx is the request's context for the use cases.
func ctx(c *fiber.Ctx) context.Context { return c.UserContext() }
