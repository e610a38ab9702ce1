package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/domain/release"
	"github.com/praxis-health/praxis/domain/staff"
)

// Staff keeps the practice's people, their invitations and passkeys. Every
// method names the company; another company's member, invite or passkey is
// domain.ErrNotFound.
type Staff interface {
	// SaveInvite keeps an invitation; a newer one of the same address
	// replaces the older.
	SaveInvite(ctx context.Context, in staff.Invite) error
	// ClaimInvite uses the invitation of tokenHash once, at now: it answers
	// the member of its address (made with the invitation's role when there
	// is none), and deletes the invitation. domain.ErrNotFound when there is
	// no such invitation or it expired.
	ClaimInvite(ctx context.Context, company domain.CompanyID, tokenHash []byte, now time.Time) (staff.Member, error)
	Member(ctx context.Context, company domain.CompanyID, id uuid.UUID) (staff.Member, error)
	Members(ctx context.Context, company domain.CompanyID) ([]staff.Member, error)
	// MembersByEmail finds the accounts of an address in every company: single
	// sign-on names a person by a verified address before a company is known.
	MembersByEmail(ctx context.Context, email string) ([]staff.Member, error)
	// Invites lists the company's open invitations.
	Invites(ctx context.Context, company domain.CompanyID, now time.Time) ([]staff.Invite, error)
	// SetRole changes a member's role; domain.ErrConflict when it would
	// leave the company without an admin.
	SetRole(ctx context.Context, company domain.CompanyID, id uuid.UUID, role staff.Role) error
	// RemoveMember deletes a member and its passkeys; domain.ErrConflict
	// when it is the company's last admin.
	RemoveMember(ctx context.Context, company domain.CompanyID, id uuid.UUID) error
	AddPasskey(ctx context.Context, p staff.Passkey) error
	Passkeys(ctx context.Context, company domain.CompanyID, member uuid.UUID) ([]staff.Passkey, error)
	// UsePasskey stores the credential's record after a sign-in (its sign count).
	UsePasskey(ctx context.Context, company domain.CompanyID, id []byte, credential []byte, at time.Time) error
	// RemovePasskey deletes one of member's passkeys.
	RemovePasskey(ctx context.Context, company domain.CompanyID, member uuid.UUID, id []byte) error
}

// Sessions keeps server-side state of the settings pages (a signed-in
// session, a passkey ceremony's challenge) under a key for ttl, in the token
// store: Redis, shared by every replica, or in process. Keys are kept as
// their SHA-256.
type Sessions interface {
	// Load answers the value of key, or domain.ErrNotFound.
	Load(ctx context.Context, key string) ([]byte, error)
	Store(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Delete(ctx context.Context, key string) error
}

// SettingsOverview is what the settings' first page shows.
type SettingsOverview struct {
	Company domain.Company
	Members []staff.Member
	Invites []staff.Invite
}

// Settings is the driving port of the settings pages for what is staff's
// own: what a signed-in member does, in the member's company only. What the
// API has too (webhooks, the audit trail, devices and orders) the pages do
// through the API's own driving ports, with the member's grant
// (staff.Member.Grant). A change the grant does not allow (a viewer's) is
// domain.ErrForbidden; another company's object is domain.ErrNotFound.
type Settings interface {
	Join(ctx context.Context, company domain.CompanyID, token domain.Secret) (staff.Member, error)
	Member(ctx context.Context, company domain.CompanyID, id uuid.UUID) (staff.Member, error)
	// SingleSignOn answers the one account of a verified address;
	// domain.ErrNotFound when there is none, domain.ErrConflict when the
	// address has accounts in several companies (then passkeys it is).
	SingleSignOn(ctx context.Context, email string) (staff.Member, error)
	Overview(ctx context.Context, m staff.Member) (SettingsOverview, error)
	Invite(ctx context.Context, m staff.Member, email string, role staff.Role) (staff.Invite, domain.Secret, error)
	SetRole(ctx context.Context, m staff.Member, id uuid.UUID, role staff.Role) error
	Remove(ctx context.Context, m staff.Member, id uuid.UUID) error
	Passkeys(ctx context.Context, m staff.Member) ([]staff.Passkey, error)
	AddPasskey(ctx context.Context, m staff.Member, id []byte, name string, credential []byte) (staff.Passkey, error)
	UsePasskey(ctx context.Context, m staff.Member, id, credential []byte) error
	RemovePasskey(ctx context.Context, m staff.Member, id []byte) error
}

// Integrations is one company's OAuth clients and upload secret, by grant:
// the operator's use case (the admin commands') as the settings pages use
// it. Reading needs the company only; a change needs settings:write
// (domain.ErrForbidden otherwise); another company's client is
// domain.ErrNotFound.
type Integrations interface {
	Clients(ctx context.Context, grant domain.Grant) ([]domain.Client, error)
	// ClientUsage answers the calls per day and last call of each of
	// clients that is the grant's company's.
	ClientUsage(ctx context.Context, grant domain.Grant, clients []domain.Client) (map[domain.ClientID]ratelimit.Usage, error)
	// CreateClient registers a client of the grant's company (in.Company is
	// ignored). One with a key set (in.KeySetURL or in.KeySet) signs in
	// with signed assertions and gets no secret.
	CreateClient(ctx context.Context, grant domain.Grant, in ClientInput) (domain.Client, domain.Secret, error)
	RotateClientSecret(ctx context.Context, grant domain.Grant, id domain.ClientID, overlap time.Duration) (domain.Secret, error)
	RevokeClient(ctx context.Context, grant domain.Grant, id domain.ClientID) error
	RotateUploadSecret(ctx context.Context, grant domain.Grant) (domain.Secret, error)
	// DeprecatedCalls answers the company's clients' calls to deprecated
	// operations, newest day first.
	DeprecatedCalls(ctx context.Context, grant domain.Grant) ([]release.Calls, error)
}
