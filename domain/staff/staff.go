// Package staff is the practice's own people in praxis (docs/contract.md
// §13): accounts of one company with a role, the invitations that let them
// in, and their passkeys. No passwords: a person signs in with a passkey, and
// a lost one is replaced through a new invitation.
package staff

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
)

// Role is what a member may do: an admin everything the settings offer, a
// viewer read them.
type Role string

// The roles.
const (
	RoleAdmin  Role = "admin"
	RoleViewer Role = "viewer"
)

// ParseRole reads a role's name.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleAdmin, RoleViewer:
		return r, nil
	}
	return "", &domain.ValidationError{Field: "role", Message: "role must be admin or viewer"}
}

// Scopes are what the role may do, as the scopes the API knows (docs/contract.md
// §13): an admin every scope a client may hold of the company (a device's
// bridge's aside) and the settings' own changes; a viewer the read scopes,
// the audit trail's included. The settings pages hold a member to them
// through the same use cases as the API: no page checks a role.
func (r Role) Scopes() domain.Scopes {
	if r == RoleAdmin {
		var out domain.Scopes
		for _, s := range domain.SupportedScopes() {
			if s != domain.ScopeDeviceBridge {
				out = append(out, s)
			}
		}
		return append(out, domain.ScopeSettingsWrite)
	}
	return domain.ReadScopes(domain.SupportedScopes())
}

// Member is one person of a company.
type Member struct {
	ID        uuid.UUID
	Company   domain.CompanyID
	Email     string // lower case
	Role      Role
	CreatedAt time.Time
}

// Grant is the member's grant: the company, and the role's scopes.
func (m Member) Grant() domain.Grant {
	return domain.Grant{CompanyID: m.Company, Scopes: m.Role.Scopes()}
}

// Handle is the member's WebAuthn user handle: its company and its id, so
// that a passkey's assertion names the account without a search across
// companies.
func (m Member) Handle() []byte {
	h := make([]byte, 0, 32)
	h = append(h, m.Company[:]...)
	return append(h, m.ID[:]...)
}

// ParseHandle reads what Handle wrote.
func ParseHandle(h []byte) (domain.CompanyID, uuid.UUID, error) {
	if len(h) != 32 {
		return domain.CompanyID{}, uuid.Nil, errors.New("staff: a user handle is 32 bytes")
	}
	return domain.CompanyID(uuid.UUID(h[:16])), uuid.UUID(h[16:]), nil
}

// NormalEmail checks an address and spells it the one way it is kept: the
// bare address, lower case.
func NormalEmail(s string) (string, error) {
	a, err := mail.ParseAddress(strings.TrimSpace(s))
	if err != nil || a.Name != "" || len(a.Address) > 254 {
		return "", &domain.ValidationError{Field: "email", Message: "email must be an e-mail address"}
	}
	return strings.ToLower(a.Address), nil
}

// InviteTTL is how long an invitation link is valid.
const InviteTTL = 72 * time.Hour

// Invite lets one person in, once: it names the company, the address and
// the role. Only the hash of its token is kept.
type Invite struct {
	Company   domain.CompanyID
	TokenHash []byte
	Email     string
	Role      Role
	InvitedBy string // "operator" or the inviting member's address
	ExpiresAt time.Time
}

// NewInvite makes an invitation of email to company with role, valid from
// now for InviteTTL, and its token, which is shown once.
func NewInvite(company domain.CompanyID, email string, role Role, by string, now time.Time) (Invite, domain.Secret, error) {
	email, err := NormalEmail(email)
	if err != nil {
		return Invite{}, "", err
	}
	token, err := domain.NewSecret()
	if err != nil {
		return Invite{}, "", err
	}
	return Invite{Company: company, TokenHash: token.Hash(), Email: email, Role: role, InvitedBy: by,
		ExpiresAt: now.Add(InviteTTL).UTC().Truncate(time.Second)}, token, nil
}

// Passkey is one WebAuthn credential of a member. Credential is the
// relying party's record of it as the WebAuthn library keeps it (public key,
// sign count, flags): the domain keeps it whole without reading it.
type Passkey struct {
	ID         []byte // the credential id
	Company    domain.CompanyID
	Member     uuid.UUID
	Name       string
	Credential []byte
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

// PasskeyName is the name a passkey is listed under: the one given, else the
// day it was added.
func PasskeyName(name string, at time.Time) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "Passkey " + at.UTC().Format("2006-01-02"), nil
	}
	if len(name) > 100 {
		return "", &domain.ValidationError{Field: "name", Message: "name must be at most 100 characters"}
	}
	return name, nil
}

// PasskeyKey spells a credential id as the settings pages name it.
func PasskeyKey(id []byte) string { return base64.RawURLEncoding.EncodeToString(id) }

// ParsePasskeyKey reads what PasskeyKey wrote.
func ParsePasskeyKey(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || len(b) > 1023 {
		return nil, domain.ErrNotFound
	}
	return b, nil
}

// Session timing (docs/contract.md §13): the defaults of
// PRAXIS_SETTINGS_IDLE_TIMEOUT and PRAXIS_SETTINGS_SESSION_LIFETIME.
const (
	IdleTimeout     = 30 * time.Minute
	AbsoluteTimeout = 12 * time.Hour
	// FreshFor is how long after a passkey check a secret may be shown or
	// replaced without checking again.
	FreshFor = 5 * time.Minute
)

// Session is a signed-in member's session as the server keeps it.
type Session struct {
	Company    domain.CompanyID `json:"company"`
	Member     uuid.UUID        `json:"member"`
	Started    time.Time        `json:"started"`
	VerifiedAt time.Time        `json:"verified_at"`
}

// Live reports whether the session is within its absolute lifetime.
func (s Session) Live(now time.Time, lifetime time.Duration) bool {
	return now.Before(s.Started.Add(lifetime))
}

// Fresh reports whether the member proved the passkey recently enough to
// see or replace a secret.
func (s Session) Fresh(now time.Time, window time.Duration) bool {
	return now.Before(s.VerifiedAt.Add(window))
}

// NewToken returns 256 random bits for a session id or a ceremony.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// JoinPath is the path of an invitation's link under the settings' origin.
func JoinPath(company domain.CompanyID, token domain.Secret) string {
	return "/settings/join/" + company.String() + "/" + string(token)
}
