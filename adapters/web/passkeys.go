package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/session"
	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/staff"
)

// user is a member as the WebAuthn library sees it.
type user struct {
	m     staff.Member
	creds []webauthn.Credential
}

func (u user) WebAuthnID() []byte                         { return u.m.Handle() }
func (u user) WebAuthnName() string                       { return u.m.Email }
func (u user) WebAuthnDisplayName() string                { return u.m.Email }
func (u user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// userOf loads the member's passkeys for a ceremony.
func (s *Site) userOf(c *fiber.Ctx, m staff.Member) (user, error) {
	keys, err := s.settings.Passkeys(ctx(c), m)
	if err != nil {
		return user{}, err
	}
	u := user{m: m}
	for _, k := range keys {
		var cred webauthn.Credential
		if err := json.Unmarshal(k.Credential, &cred); err != nil {
			return user{}, err
		}
		u.creds = append(u.creds, cred)
	}
	return u, nil
}

// A ceremony's challenge waits in the session, named by its kind, and is
// used once: a sign-in challenge cannot finish a registration.
const (
	ceremonySignIn   = "signin"
	ceremonyRegister = "register"
	ceremonyVerify   = "verify"
)

func saveCeremony(sess *session.Session, kind string, sd *webauthn.SessionData) error {
	b, err := json.Marshal(sd)
	if err != nil {
		return err
	}
	sess.Set(keyCeremony, kind+":"+string(b))
	return nil
}

func takeCeremony(sess *session.Session, kind string) (webauthn.SessionData, error) {
	raw, _ := sess.Get(keyCeremony).(string)
	sess.Delete(keyCeremony)
	var sd webauthn.SessionData
	got, body, ok := strings.Cut(raw, ":")
	if !ok || got != kind {
		return sd, errBadRequest
	}
	if err := json.Unmarshal([]byte(body), &sd); err != nil {
		return sd, errBadRequest
	}
	return sd, nil
}

// answer is what the script sends back after the authenticator spoke.
type answer struct {
	Credential json.RawMessage `json:"credential"`
	Name       string          `json:"name"`
}

func readAnswer(c *fiber.Ctx) (answer, error) {
	b, err := readBody(c)
	if err != nil {
		return answer{}, err
	}
	var a answer
	if err := json.Unmarshal(b, &a); err != nil || len(a.Credential) == 0 {
		return answer{}, errBadRequest
	}
	return a, nil
}

// begin answers the options of a ceremony after keeping its challenge.
func (s *Site) begin(c *fiber.Ctx, sess *session.Session, kind string, options any, sd *webauthn.SessionData) error {
	if err := saveCeremony(sess, kind, sd); err != nil {
		return s.fail(c, err)
	}
	if err := sess.Save(); err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	return c.JSON(options)
}

// Sign-in attempts are counted per address and per account; past the
// lockout policy's failures, sign-in waits.
func addressSubject(addr string) string { return "settings:address:" + addr }
func memberSubject(m staff.Member) string {
	return "settings:member:" + m.ID.String()
}

func (s *Site) throttled(c *fiber.Ctx, subjects ...string) error {
	wait, err := s.attempts.Lockout(ctx(c), subjects...)
	if err != nil {
		return err
	}
	if wait > 0 {
		return errTooMany
	}
	return nil
}

// answerTo reads the authenticator's answer to the session's ceremony of
// kind, once the lockout of subjects allows a try.
func (s *Site) answerTo(c *fiber.Ctx, kind string, subjects ...string) (*session.Session, webauthn.SessionData, answer, error) {
	if err := s.throttled(c, subjects...); err != nil {
		return nil, webauthn.SessionData{}, answer{}, err
	}
	a, err := readAnswer(c)
	if err != nil {
		return nil, webauthn.SessionData{}, answer{}, err
	}
	sess, err := s.store.Get(c)
	if err != nil {
		return nil, webauthn.SessionData{}, answer{}, domain.Unavailable(err)
	}
	sd, err := takeCeremony(sess, kind)
	return sess, sd, a, err
}

func (s *Site) signInPage(c *fiber.Ctx) error {
	data := map[string]any{}
	if s.sso != nil {
		data["SSO"] = s.sso.cfg.Name
	}
	return s.render(c, "signin", data)
}

func (s *Site) signInBegin(c *fiber.Ctx) error {
	if err := s.throttled(c, addressSubject(s.source(c))); err != nil {
		return s.fail(c, err)
	}
	sess, err := s.store.Get(c)
	if err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	options, sd, err := s.passkeys.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return s.fail(c, err)
	}
	return s.begin(c, sess, ceremonySignIn, options, sd)
}

// signInFinish checks the passkey's assertion; the account is the one its
// user handle names, within its company.
func (s *Site) signInFinish(c *fiber.Ctx) error {
	addr := s.source(c)
	sess, sd, a, err := s.answerTo(c, ceremonySignIn, addressSubject(addr))
	if err != nil {
		return s.fail(c, err)
	}
	var found user
	var cred *webauthn.Credential
	// The account the answer names waits out its own lockout first, and a
	// failure counts against it, however malformed the rest of the answer.
	var named struct {
		Response struct {
			UserHandle protocol.URLEncodedBase64 `json:"userHandle"`
		} `json:"response"`
	}
	if json.Unmarshal(a.Credential, &named) == nil {
		if company, id, err := staff.ParseHandle(named.Response.UserHandle); err == nil {
			if m, err := s.settings.Member(ctx(c), company, id); err == nil {
				found.m = m
				if err := s.throttled(c, memberSubject(m)); err != nil {
					return s.fail(c, err)
				}
			}
		}
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(a.Credential)
	if err == nil {
		_, cred, err = s.passkeys.ValidatePasskeyLogin(func(_, handle []byte) (webauthn.User, error) {
			company, id, err := staff.ParseHandle(handle)
			if err != nil {
				return nil, err
			}
			m := found.m // the account looked up for its lockout above
			if m.Company != company || m.ID != id {
				if m, err = s.settings.Member(ctx(c), company, id); err != nil {
					return nil, err
				}
			}
			found, err = s.userOf(c, m)
			return found, err
		}, sd, parsed)
	}
	if err != nil {
		return s.refuseSignIn(c, addr, found.m, err)
	}
	return s.signedIn(c, sess, found.m, cred, nextOverview)
}

// refuseSignIn counts a failed sign-in against the address and, when the
// passkey named one, the account.
func (s *Site) refuseSignIn(c *fiber.Ctx, addr string, m staff.Member, cause error) error {
	if errors.Is(cause, errTooMany) || errors.Is(cause, domain.ErrUnavailable) {
		return s.fail(c, cause)
	}
	if _, err := s.attempts.Fail(ctx(c), addressSubject(addr), s.opts.Lockout); err != nil {
		return s.fail(c, err)
	}
	if m.ID != uuid.Nil {
		if _, err := s.attempts.Fail(ctx(c), memberSubject(m), s.opts.Lockout); err != nil {
			return s.fail(c, err)
		}
	}
	return s.fail(c, errSignedOut)
}

// signedIn starts the member's session under a new id (no fixation), keeps
// the passkey's record (its sign count) after an assertion, and records the
// sign-in.
func (s *Site) signedIn(c *fiber.Ctx, sess *session.Session, m staff.Member, used *webauthn.Credential, answer fiber.Handler) error {
	if used != nil {
		b, err := json.Marshal(used)
		if err != nil {
			return s.fail(c, err)
		}
		if err := s.settings.UsePasskey(ctx(c), m, used.ID, b); err != nil {
			return s.fail(c, err)
		}
	}
	if err := sess.Regenerate(); err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	now := s.now()
	sess.Set(keyCompany, m.Company.String())
	sess.Set(keyMember, m.ID.String())
	sess.Set(keyStarted, now.UnixMilli())
	sess.Set(keyVerified, now.UnixMilli())
	sess.Delete(keyPending)
	if err := sess.Save(); err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	c.Locals(memberKey{}, m)
	c.Locals(objectKey{}, m.ID.String())
	return s.change(audit.ActionCreate, "settings.sessions", answer)(c)
}

// nextOverview answers the passkey script: on to the overview.
func nextOverview(c *fiber.Ctx) error { return c.JSON(fiber.Map{"next": "/settings/"}) }

func (s *Site) signOut(c *fiber.Ctx) error {
	return s.change(audit.ActionDelete, "settings.sessions", func(c *fiber.Ctx) error {
		sess, err := s.store.Get(c)
		if err != nil {
			return domain.Unavailable(err)
		}
		if err := sess.Destroy(); err != nil {
			return domain.Unavailable(err)
		}
		// The CSRF cookie goes too, with the attributes a __Host- cookie needs.
		c.Cookie(&fiber.Cookie{Name: csrfCookie, Value: "", Path: "/", Secure: true, HTTPOnly: true,
			SameSite: fiber.CookieSameSiteStrictMode, Expires: time.Unix(0, 0), MaxAge: -1})
		return c.Redirect("/settings/signin", fiber.StatusSeeOther)
	})(c)
}

// linkOf names an invitation link in the session without keeping its token.
func linkOf(c *fiber.Ctx) string {
	h := sha256.Sum256([]byte(c.Params("company") + "/" + c.Params("token")))
	return hex.EncodeToString(h[:])
}

func (s *Site) joinPage(c *fiber.Ctx) error {
	return s.render(c, "join", map[string]any{"Path": "/settings/join/" + c.Params("company") + "/" + c.Params("token")})
}

// pending is the member an invitation link let in, waiting for a passkey.
type pending struct {
	Link    string `json:"link"`
	Company string `json:"company"`
	Member  string `json:"member"`
}

// joinBegin spends the invitation (once; a retry of the same link in the
// same browser goes on with its member) and starts the registration.
func (s *Site) joinBegin(c *fiber.Ctx) error {
	company, err := domain.ParseCompanyID(c.Params("company"))
	if err != nil {
		return s.fail(c, domain.ErrNotFound)
	}
	sess, err := s.store.Get(c)
	if err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	var m staff.Member
	var p pending
	if raw, ok := sess.Get(keyPending).(string); ok && json.Unmarshal([]byte(raw), &p) == nil && p.Link == linkOf(c) {
		m, err = s.pendingMember(c, p)
	} else {
		m, err = s.settings.Join(ctx(c), company, domain.Secret(c.Params("token")))
	}
	if err != nil {
		return s.fail(c, err)
	}
	b, _ := json.Marshal(pending{Link: linkOf(c), Company: m.Company.String(), Member: m.ID.String()})
	sess.Set(keyPending, string(b))
	return s.registerBegin(c, sess, m)
}

func (s *Site) pendingMember(c *fiber.Ctx, p pending) (staff.Member, error) {
	company, err := domain.ParseCompanyID(p.Company)
	if err != nil {
		return staff.Member{}, errBadRequest
	}
	id, err := uuid.Parse(p.Member)
	if err != nil {
		return staff.Member{}, errBadRequest
	}
	return s.settings.Member(ctx(c), company, id)
}

func (s *Site) registerBegin(c *fiber.Ctx, sess *session.Session, m staff.Member) error {
	u, err := s.userOf(c, m)
	if err != nil {
		return s.fail(c, err)
	}
	options, sd, err := s.passkeys.BeginRegistration(u,
		webauthn.WithExclusions(webauthn.Credentials(u.creds).CredentialDescriptors()),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired))
	if err != nil {
		return s.fail(c, err)
	}
	return s.begin(c, sess, ceremonyRegister, options, sd)
}

// register checks a new passkey's attestation and keeps it for m.
func (s *Site) register(c *fiber.Ctx, sess *session.Session, m staff.Member) error {
	a, err := readAnswer(c)
	if err != nil {
		return err
	}
	sd, err := takeCeremony(sess, ceremonyRegister)
	if err != nil {
		return err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(a.Credential)
	if err != nil {
		return errBadRequest
	}
	u, err := s.userOf(c, m)
	if err != nil {
		return err
	}
	cred, err := s.passkeys.CreateCredential(u, sd, parsed)
	if err != nil {
		return errBadRequest
	}
	b, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	key, err := s.settings.AddPasskey(ctx(c), m, cred.ID, a.Name, b)
	if err != nil {
		return err
	}
	c.Locals(objectKey{}, staff.PasskeyKey(key.ID))
	return nil
}

func (s *Site) joinFinish(c *fiber.Ctx) error {
	sess, err := s.store.Get(c)
	if err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	var p pending
	raw, _ := sess.Get(keyPending).(string)
	if json.Unmarshal([]byte(raw), &p) != nil || p.Link != linkOf(c) {
		return s.fail(c, domain.ErrNotFound)
	}
	m, err := s.pendingMember(c, p)
	if err != nil {
		return s.fail(c, err)
	}
	c.Locals(memberKey{}, m)
	err = s.change(audit.ActionCreate, "settings.passkeys", func(c *fiber.Ctx) error { return s.register(c, sess, m) })(c)
	if err != nil || c.Response().StatusCode() >= 400 {
		return err
	}
	return s.signedIn(c, sess, m, nil, nextOverview)
}

func (s *Site) addPasskeyBegin(c *fiber.Ctx) error {
	sess, err := s.store.Get(c)
	if err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	return s.registerBegin(c, sess, memberOf(c))
}

func (s *Site) addPasskeyFinish(c *fiber.Ctx) error {
	sess, err := s.store.Get(c)
	if err != nil {
		return domain.Unavailable(err)
	}
	if err := s.register(c, sess, memberOf(c)); err != nil {
		return err
	}
	if err := sess.Save(); err != nil {
		return domain.Unavailable(err)
	}
	return c.JSON(fiber.Map{"next": "/settings/staff?passkey=added#passkeys"})
}

func (s *Site) verifyBegin(c *fiber.Ctx) error {
	sess, err := s.store.Get(c)
	if err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	u, err := s.userOf(c, memberOf(c))
	if err != nil {
		return s.fail(c, err)
	}
	options, sd, err := s.passkeys.BeginLogin(u, webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return s.fail(c, err)
	}
	return s.begin(c, sess, ceremonyVerify, options, sd)
}

// verifyFinish checks the member's passkey again before a secret is shown.
func (s *Site) verifyFinish(c *fiber.Ctx) error {
	m := memberOf(c)
	addr := s.source(c)
	sess, sd, a, err := s.answerTo(c, ceremonyVerify, addressSubject(addr), memberSubject(m))
	if err != nil {
		return s.fail(c, err)
	}
	u, err := s.userOf(c, m)
	if err != nil {
		return s.fail(c, err)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(a.Credential)
	if err == nil {
		_, err = s.passkeys.ValidateLogin(u, sd, parsed)
	}
	if err != nil {
		return s.refuseSignIn(c, addr, m, err)
	}
	sess.Set(keyVerified, s.now().UnixMilli())
	if err := sess.Save(); err != nil {
		return s.fail(c, domain.Unavailable(err))
	}
	return c.JSON(fiber.Map{"next": "/settings/"})
}
