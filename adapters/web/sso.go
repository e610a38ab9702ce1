package web

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"sync"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gofiber/fiber/v2"
	"golang.org/x/oauth2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/staff"
)

// SSO is an OpenID provider the operator runs: staff may sign in there
// instead of with a passkey, matched by a verified e-mail address.
type SSO struct {
	Issuer, ClientID, ClientSecret string
	// Name is what the sign-in button calls the provider.
	Name string
}

// sso is the provider once discovered; discovery waits for the first
// sign-in, so that praxis starts while the provider does not answer.
type sso struct {
	cfg      SSO
	redirect string

	mu       sync.Mutex
	provider *oidc.Provider
}

func (p *sso) discover(ctx context.Context) (*oidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.provider == nil {
		pr, err := oidc.NewProvider(ctx, p.cfg.Issuer)
		if err != nil {
			return nil, domain.Unavailable(fmt.Errorf("single sign-on: discover %s: %w", p.cfg.Issuer, err))
		}
		p.provider = pr
	}
	return p.provider, nil
}

func (p *sso) oauth(pr *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: pr.Endpoint(),
		RedirectURL: p.redirect, Scopes: []string{oidc.ScopeOpenID, "email"}}
}

// keySSO holds a sign-in at the provider: state, nonce, PKCE verifier.
const keySSO = "sso"

type ssoState struct {
	State, Nonce, Verifier string
}

// ssoStart sends the browser to the provider: authorization code with
// PKCE (S256), a state and a nonce kept in the session.
func (s *Site) ssoStart(c *fiber.Ctx) error {
	if s.sso == nil {
		return s.fail(c, domain.ErrNotFound)
	}
	if err := s.throttled(c, addressSubject(s.source(c))); err != nil {
		return s.fail(c, err)
	}
	pr, err := s.sso.discover(ctx(c))
	if err != nil {
		return s.fail(c, err)
	}
	st := ssoState{State: staff.NewToken(), Nonce: staff.NewToken(), Verifier: oauth2.GenerateVerifier()}
	sess, err := s.store.Get(c)
	if err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	b, _ := json.Marshal(st)
	sess.Set(keySSO, string(b))
	if err := sess.Save(); err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	return c.Redirect(s.sso.oauth(pr).AuthCodeURL(st.State, oidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier)), fiber.StatusSeeOther)
}

// ssoCallback is where the provider sends the browser back. That is a
// navigation from another site, which carries no SameSite=Strict cookie:
// the page moves on to ssoFinish from this site, with the session (a
// meta refresh does not count as this site's: Chromium sends no cookie).
func (s *Site) ssoCallback(c *fiber.Ctx) error {
	if s.sso == nil {
		return s.fail(c, domain.ErrNotFound)
	}
	q := url.Values{"code": {c.Query("code")}, "state": {c.Query("state")}, "error": {c.Query("error")}}
	c.Type("html", "utf-8")
	// The script follows the link at once (a navigation this site starts,
	// which carries its cookies); without it, a click does.
	return c.SendString(`<!doctype html><meta charset="utf-8"><title>praxis</title>` +
		`<script src="/settings/static/site.js" defer></script>` +
		`<p><a id="sso-continue" data-follow href="/settings/sso/finish?` + html.EscapeString(q.Encode()) + `">Weiter / Continue</a></p>`)
}

// ssoFinish checks the provider's answer against the session's state,
// redeems the code with the PKCE verifier, verifies the ID token and its
// nonce, and signs in the one account of its verified address.
func (s *Site) ssoFinish(c *fiber.Ctx) error {
	if s.sso == nil {
		return s.fail(c, domain.ErrNotFound)
	}
	addr := s.source(c)
	if err := s.throttled(c, addressSubject(addr)); err != nil {
		return s.fail(c, err)
	}
	sess, err := s.store.Get(c)
	if err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	var st ssoState
	raw, _ := sess.Get(keySSO).(string)
	sess.Delete(keySSO)
	if json.Unmarshal([]byte(raw), &st) != nil || st.State == "" ||
		subtle.ConstantTimeCompare([]byte(st.State), []byte(c.Query("state"))) != 1 || c.Query("code") == "" {
		return s.refuseSignIn(c, addr, staff.Member{}, errBadRequest)
	}
	m, err := s.ssoMember(c, st)
	if err != nil {
		if errors.Is(err, domain.ErrUnavailable) || errors.Is(err, domain.ErrConflict) {
			return s.fail(c, err)
		}
		return s.refuseSignIn(c, addr, staff.Member{}, err)
	}
	return s.signedIn(c, sess, m, nil, func(c *fiber.Ctx) error { return c.Redirect("/settings/", fiber.StatusSeeOther) })
}

func (s *Site) ssoMember(c *fiber.Ctx, st ssoState) (staff.Member, error) {
	pr, err := s.sso.discover(ctx(c))
	if err != nil {
		return staff.Member{}, err
	}
	token, err := s.sso.oauth(pr).Exchange(ctx(c), c.Query("code"), oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return staff.Member{}, errSignedOut
	}
	rawID, _ := token.Extra("id_token").(string)
	id, err := pr.Verifier(&oidc.Config{ClientID: s.sso.cfg.ClientID}).Verify(ctx(c), rawID)
	if err != nil || subtle.ConstantTimeCompare([]byte(id.Nonce), []byte(st.Nonce)) != 1 {
		return staff.Member{}, errSignedOut
	}
	var claims struct {
		Email    string `json:"email"`
		Verified bool   `json:"email_verified"`
	}
	if err := id.Claims(&claims); err != nil {
		return staff.Member{}, errSignedOut
	}
	if claims.Email == "" { // a provider that keeps the address to its userinfo endpoint
		info, err := pr.UserInfo(ctx(c), oauth2.StaticTokenSource(token))
		if err != nil || info.Subject != id.Subject {
			return staff.Member{}, errSignedOut
		}
		claims.Email, claims.Verified = info.Email, info.EmailVerified
	}
	if !claims.Verified || claims.Email == "" {
		return staff.Member{}, errSignedOut
	}
	return s.settings.SingleSignOn(ctx(c), claims.Email)
}
