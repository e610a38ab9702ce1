package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
)

// Status is where an endpoint stands, as its owner reads it.
type Status string

// Statuses of an endpoint.
const (
	Active   Status = "active"   // delivering, or waiting for the next change
	Failing  Status = "failing"  // its receiver has not taken the next event yet; retrying
	Disabled Status = "disabled" // not delivering: by its owner, after 410, or after failing for DisableAfter
)

// Endpoint is one receiver a company registered, with where its delivery
// stands. Its secrets are sealed (Keyring): the store never holds one in
// plain text.
type Endpoint struct {
	ID          uuid.UUID
	Company     domain.CompanyID
	URL         string
	Description string
	EventTypes  EventTypes
	Enabled     bool
	// DisabledReason says why the dispatcher disabled it ("" when its owner did).
	DisabledReason string
	// Secret signs every event; Previous signs beside it until PreviousUntil
	// (a rotation's overlap).
	Secret, Previous Sealed
	PreviousUntil    *time.Time
	// Position is the last change of the feed the receiver acknowledged
	// (or that the subscription skipped): delivery resumes after it.
	Position Position
	// Failures counts the failed attempts at the event after Position;
	// FailingSince is when the first of them failed.
	Failures     int
	FailingSince *time.Time
	// NextAttempt is when the dispatcher may try again.
	NextAttempt time.Time
	// Version moves with every change its owner makes, so that a
	// dispatcher never writes a position over a replay.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Status reads the endpoint's state.
func (e Endpoint) Status() Status {
	switch {
	case !e.Enabled:
		return Disabled
	case e.Failures > 0:
		return Failing
	}
	return Active
}

// Secrets are the sealed secrets that sign an event at now: the current
// one, and the previous one while its overlap lasts.
func (e Endpoint) Secrets(now time.Time) []Sealed {
	if len(e.Previous) > 0 && e.PreviousUntil != nil && now.Before(*e.PreviousUntil) {
		return []Sealed{e.Secret, e.Previous}
	}
	return []Sealed{e.Secret}
}

// MaxEndpoints is how many endpoints one company may register.
const MaxEndpoints = 20

// DefaultOverlap is how long a rotated secret goes on signing beside its successor.
const DefaultOverlap = 24 * time.Hour

// MaxOverlap bounds what a rotation may ask for.
const MaxOverlap = 7 * 24 * time.Hour

// Position is a place in a company's change feed across sections: the
// change stamp, then the section and the object's id (as text), which
// order the objects written in one transaction.
type Position struct {
	Change  int64
	Section string
	ID      string
}

// Less orders positions as the feed does.
func (p Position) Less(q Position) bool {
	if p.Change != q.Change {
		return p.Change < q.Change
	}
	if p.Section != q.Section {
		return p.Section < q.Section
	}
	return p.ID < q.ID
}

// Change is one entry of the feed as the dispatcher reads it: an object's
// latest write. An object written several times before the dispatcher
// reaches it is one entry, at its last write.
type Change struct {
	Position
	CustomerID *domain.CustomerID
	Version    int64 // the object's version after the change
	Created    bool  // unchanged since it was created
	Deleted    bool
	Cancelled  bool // an appointment whose status is cancelled
	At         time.Time
}

// Type is the change's event type.
func (c Change) Type() string {
	switch {
	case c.Deleted:
		return c.Section + ".deleted"
	case c.Created:
		return c.Section + ".created"
	case c.Cancelled && c.Section == cancellable:
		return cancellable + ".cancelled"
	}
	return c.Section + ".updated"
}

// cancellable is the one section with a cancelled event.
const cancellable = "appointments"

// MessageID is the change's webhook-id for endpoint: the same on every
// retry and every replay of this change, another for the object's next write.
func (c Change) MessageID(endpoint uuid.UUID) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%s|%s", endpoint, c.Change, c.Section, c.ID))
	return "msg_" + hex.EncodeToString(h[:16])
}

// Body is the change's event: its type, when it was written, and where the
// section's sync feed resumes just past it.
func (c Change) Body() ([]byte, error) {
	return Body(c.Type(), c.At, Data{
		Section: c.Section, ID: c.ID, CustomerID: c.CustomerID, Version: c.Version,
		Cursor: domain.Cursor{Change: c.Change, ID: c.ID}.Encode(),
	})
}

// Sealed is a secret encrypted by a Keyring.
type Sealed []byte

// Keyring seals signing secrets for the store with AES-256-GCM under the
// operator's key (PRAXIS_WEBHOOK_KEY): a copy of the database alone
// signs nothing.
type Keyring struct{ aead cipher.AEAD }

// KeySize is the key's length in bytes.
const KeySize = 32

// NewKeyring takes the key in base64 (standard or URL alphabet).
func NewKeyring(encoded string) (*Keyring, error) {
	encoded = strings.TrimSpace(encoded)
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		key, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(encoded, "="))
	}
	if err != nil || len(key) != KeySize {
		return nil, errors.New("webhook key: want 32 bytes in base64 (openssl rand -base64 32)")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Keyring{aead: aead}, nil
}

// NewKey makes a key for NewKeyring.
func NewKey() (string, error) {
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Seal encrypts s; the endpoint's id is its associated data, so a sealed
// secret copied to another endpoint does not open.
func (k *Keyring) Seal(endpoint uuid.UUID, s Secret) (Sealed, error) {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return k.aead.Seal(nonce, nonce, []byte(s), endpoint[:]), nil
}

// Open decrypts what Seal made for endpoint.
func (k *Keyring) Open(endpoint uuid.UUID, s Sealed) (Secret, error) {
	n := k.aead.NonceSize()
	if len(s) < n {
		return "", errors.New("webhook: a sealed secret is too short")
	}
	plain, err := k.aead.Open(nil, s[:n], s[n:], endpoint[:])
	if err != nil {
		return "", errors.New("webhook: a secret does not open with this key (was PRAXIS_WEBHOOK_KEY changed?)")
	}
	return Secret(plain), nil
}

// Attempt is one try at delivering one event, as the delivery log keeps it.
type Attempt struct {
	ID        uuid.UUID
	Endpoint  uuid.UUID
	MessageID string
	Type      string
	Position  Position
	At        time.Time
	// Status is the receiver's HTTP status, 0 when there was no answer.
	Status int
	// Error says why there was no answer, or what the answer meant.
	Error    string
	Duration time.Duration
	Outcome  Outcome
}

// LogRetention is how long the delivery log keeps an attempt.
const LogRetention = 30 * 24 * time.Hour

// String names an outcome in the delivery log.
func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Throttled:
		return "throttled"
	case Gone:
		return "gone"
	}
	return "failed"
}

// ParseOutcome reads what String wrote.
func ParseOutcome(s string) Outcome {
	switch s {
	case "delivered":
		return Delivered
	case "throttled":
		return Throttled
	case "gone":
		return Gone
	}
	return Retry
}
