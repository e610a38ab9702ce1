package domain

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// CompanyID identifies a practice, the tenant of every other object.
type CompanyID uuid.UUID

// NewCompanyID returns a fresh random company id.
func NewCompanyID() CompanyID { return CompanyID(uuid.New()) }

// ParseCompanyID accepts the canonical 36-character UUID form only, so that
// one company has exactly one spelling in headers, URLs and logs.
func ParseCompanyID(s string) (CompanyID, error) {
	if len(s) != 36 {
		return CompanyID{}, invalid("company", "not a UUID")
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return CompanyID{}, invalid("company", "not a UUID")
	}
	return CompanyID(id), nil
}

func (id CompanyID) String() string { return uuid.UUID(id).String() }

// IsZero reports whether the id was never set.
func (id CompanyID) IsZero() bool { return id == CompanyID{} }

// Plan is a company's licence tier; it decides rate limits.
type Plan struct{ slug string }

var (
	PlanBasic      = Plan{"basic"}
	PlanPro        = Plan{"pro"}
	PlanEnterprise = Plan{"enterprise"}
)

// ParsePlan accepts the three plan slugs.
func ParsePlan(s string) (Plan, error) {
	for _, p := range []Plan{PlanBasic, PlanPro, PlanEnterprise} {
		if p.slug == s {
			return p, nil
		}
	}
	return Plan{}, invalid("plan", "must be one of basic, pro, enterprise")
}

func (p Plan) String() string { return p.slug }

// DefaultTimeZone is the zone of a company that names none.
const DefaultTimeZone = "Europe/Vienna"

// DefaultStorageQuota is the storage of a company created without one: 10 GiB.
const DefaultStorageQuota int64 = 10 << 30

// Company is a practice with its settings and its storage account.
type Company struct {
	ID           CompanyID
	Name         string
	TimeZone     string
	Plan         Plan
	StorageQuota int64
	StorageUsed  int64
	// BookingNoticeMinutes is how far ahead of now the earliest bookable slot lies.
	BookingNoticeMinutes int
	// UploadSecretHash is the SHA-256 of the current upload secret; the secret itself is never kept.
	UploadSecretHash []byte
	// ExternalRef names the resource the company was declared by (a
	// Kubernetes object's UID), so that declaring it again finds it; empty
	// for a company created on the command line.
	ExternalRef string
	// CatalogVersion counts the writes to the sections of the booking
	// catalogue (CatalogSections): a catalogue read after the version is at
	// least that new, so it can be kept until the version moves.
	CatalogVersion int64
	// DisabledAt is when the company was disabled: from then on it uploads
	// nothing and its clients get no tokens. Its data stays.
	DisabledAt *time.Time
	// RetentionHold, when set, is the last day (in the company's time zone)
	// its data must be kept: until that day has passed it cannot be erased.
	RetentionHold Date
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// CompanySettings are what may change of a company after its creation.
type CompanySettings struct {
	Name         string
	TimeZone     string
	Plan         Plan
	StorageQuota int64
}

// Settings returns the company's changeable settings.
func (c Company) Settings() CompanySettings {
	return CompanySettings{Name: c.Name, TimeZone: c.TimeZone, Plan: c.Plan, StorageQuota: c.StorageQuota}
}

// Apply validates s and takes it over; a zero Plan or TimeZone keeps the default.
func (c *Company) Apply(s CompanySettings, now time.Time) error {
	s.Name = strings.TrimSpace(s.Name)
	if s.Name == "" {
		return invalid("name", "must not be empty")
	}
	if len(s.Name) > 200 {
		return invalid("name", "must be at most 200 characters")
	}
	if s.TimeZone == "" {
		s.TimeZone = DefaultTimeZone
	}
	if _, err := time.LoadLocation(s.TimeZone); err != nil || s.TimeZone == "Local" {
		return invalid("time_zone", "must be an IANA time zone")
	}
	if s.Plan == (Plan{}) {
		s.Plan = PlanBasic
	}
	if s.StorageQuota < 0 {
		return invalid("storage_quota", "must not be negative")
	}
	c.Name, c.TimeZone, c.Plan, c.StorageQuota = s.Name, s.TimeZone, s.Plan, s.StorageQuota
	c.UpdatedAt = now.UTC()
	return nil
}

// Disabled reports whether the company has been disabled.
func (c Company) Disabled() bool { return c.DisabledAt != nil }

// HeldAt reports whether a retention hold is in force at now: the hold's
// day has not passed yet in the company's time zone.
func (c Company) HeldAt(now time.Time) bool {
	if c.RetentionHold == "" {
		return false
	}
	loc, err := time.LoadLocation(c.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	return !DateOf(now, loc).After(c.RetentionHold)
}

// ParseRetentionHold reads a hold's last day, YYYY-MM-DD; "" clears the hold.
func ParseRetentionHold(s string) (Date, error) {
	if s == "" {
		return "", nil
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return "", invalid("until", "must be a date, YYYY-MM-DD")
	}
	return Date(s), nil
}

// ErrRetentionHold: the company is under a retention hold and cannot be erased.
var ErrRetentionHold = fmt.Errorf("the company is under a retention hold: %w", ErrConflict)

// Erasure is what remains of an erased company: one record outside it that
// says who erased it, when, and what was taken and deleted. It names no
// patient, no staff member and no secret.
type Erasure struct {
	Company CompanyID
	At      time.Time
	// By names who erased it (the operator's name, or the resource that declared it).
	By string
	// ExportSHA256 is the hash of the export taken before, when one was named.
	ExportSHA256 string
	// Rows is how many rows of the company the erasure deleted, over every table.
	Rows int64
	// AuditSeq and AuditHash are the head of the company's audit chain at
	// the erasure (0 and "" for a company without events): a checkpoint kept
	// outside the database can be held against where the chain ended.
	AuditSeq  int64
	AuditHash string
	// Blobs is how many stored objects were deleted; BlobsErasedAt is when
	// the last went (nil while some remain: running the erasure again
	// finishes it).
	Blobs         int64
	BlobsErasedAt *time.Time
}

// NewCompany validates a new company and gives it a fresh id and upload secret.
// The secret is returned once, to be shown to the practice; only its hash is kept.
func NewCompany(name, timeZone string, plan Plan, quota int64, now time.Time) (Company, Secret, error) {
	c := Company{ID: NewCompanyID(), BookingNoticeMinutes: DefaultBookingNotice, CreatedAt: now.UTC()}
	if err := c.Apply(CompanySettings{Name: name, TimeZone: timeZone, Plan: plan, StorageQuota: quota}, now); err != nil {
		return Company{}, "", err
	}
	secret, err := NewSecret()
	if err != nil {
		return Company{}, "", err
	}
	c.UploadSecretHash = secret.Hash()
	return c, secret, nil
}

// FreeStorage is what the company may still store, never negative.
func (c Company) FreeStorage() int64 {
	if free := c.StorageQuota - c.StorageUsed; free > 0 {
		return free
	}
	return 0
}

// AcceptsUploadSecret compares in constant time against the stored hash.
func (c Company) AcceptsUploadSecret(presented string) bool {
	return Secret(presented).Matches(c.UploadSecretHash)
}

// zones caches the zones companies name: time.LoadLocation reads the zone
// file anew on every call, and every record write judges dates in one.
var zones sync.Map // name → *time.Location

// Location is the company's time zone, where its dates are judged.
func (c Company) Location() (*time.Location, error) {
	if loc, ok := zones.Load(c.TimeZone); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(c.TimeZone)
	if err != nil {
		return nil, err
	}
	zones.Store(c.TimeZone, loc)
	return loc, nil
}

// DefaultBookingNotice is a new company's booking notice, in minutes; MaxBookingNotice is a week.
const (
	DefaultBookingNotice = 120
	MaxBookingNotice     = 10080
)

// SetBookingNotice changes how far ahead of now the earliest bookable slot lies.
func (c *Company) SetBookingNotice(minutes int) error {
	if minutes < 0 || minutes > MaxBookingNotice {
		return invalid("booking_notice_minutes", "must lie between 0 and 10080")
	}
	c.BookingNoticeMinutes = minutes
	return nil
}

// CompanyLease is one import or restore of a company at work: no other
// runs beside it until it is released or runs out (docs/contract.md §6).
type CompanyLease struct {
	Company CompanyID
	// Holder names the process (host, pid and a random part).
	Holder string
	// Purpose is what it does: "import" or "restore".
	Purpose    string
	AcquiredAt time.Time
	ExpiresAt  time.Time
}
