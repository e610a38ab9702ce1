package ports

import (
	"context"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// Transactor runs fn in one database transaction. Repository calls made with
// the ctx that fn receives join that transaction; an error from fn rolls it back.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// CompanyRepository keeps practices and their storage accounts.
type CompanyRepository interface {
	Create(ctx context.Context, c domain.Company) error
	// Get returns domain.ErrNotFound for an unknown id.
	Get(ctx context.Context, id domain.CompanyID) (domain.Company, error)
	// FindByExternalRef finds the company declared by ref; domain.ErrNotFound when none is.
	FindByExternalRef(ctx context.Context, ref string) (domain.Company, error)
	SetUploadSecretHash(ctx context.Context, id domain.CompanyID, hash []byte) error
	// UpdateSettings stores c's name, time zone, plan and storage quota.
	UpdateSettings(ctx context.Context, c domain.Company) error
	// Disable marks the company disabled; run again, it keeps the first time.
	Disable(ctx context.Context, id domain.CompanyID, at time.Time) error
	// ReserveStorage adds n bytes to the company's use if its quota allows,
	// in one atomic statement, so concurrent reservations never pass the quota.
	// It returns domain.ErrInsufficientStorage when they would.
	ReserveStorage(ctx context.Context, id domain.CompanyID, n int64) error
	// ListIDs lists every company: for operators' maintenance only, never for a request.
	ListIDs(ctx context.Context) ([]domain.CompanyID, error)
	// SetRetentionHold sets the company's retention hold to its last day
	// ("" lifts it); domain.ErrNotFound for an unknown company.
	SetRetentionHold(ctx context.Context, id domain.CompanyID, until domain.Date) error
}

// Erasures deletes a company's rows and keeps the one record of it that
// remains (docs/contract.md §9).
type Erasures interface {
	// EraseRows deletes every row of rec.Company in every table — its own
	// row last — and keeps rec, with the rows counted and the audit chain's
	// head filled in, in one transaction: all of it or nothing.
	// domain.ErrNotFound when there is no such company.
	EraseRows(ctx context.Context, rec domain.Erasure) (domain.Erasure, error)
	// Get answers the erasure record of company; domain.ErrNotFound when it was never erased.
	Get(ctx context.Context, company domain.CompanyID) (domain.Erasure, error)
	// BlobsErased adds n to the company's stored objects deleted and, unless
	// at is zero (some remain), notes that the last went at at.
	BlobsErased(ctx context.Context, company domain.CompanyID, n int64, at time.Time) error
	// Remaining walks the schema: every table with a company column, and the
	// company's rows in it (0 for each after an erasure; the companies
	// table counts the company's own row).
	Remaining(ctx context.Context, company domain.CompanyID) (map[string]int64, error)
}

// CompanyLeases keep one import or restore of a company at a time, across
// processes and replicas.
type CompanyLeases interface {
	// Take gives l to its holder unless another holder's lease of the
	// company runs past now: then it answers that lease and false.
	Take(ctx context.Context, l domain.CompanyLease, now time.Time) (domain.CompanyLease, bool, error)
	// Extend moves the holder's lease to until; false when it is no longer theirs.
	Extend(ctx context.Context, company domain.CompanyID, holder string, until time.Time) (bool, error)
	// Release ends the holder's lease (nothing when it is no longer theirs).
	Release(ctx context.Context, company domain.CompanyID, holder string) error
}

// RestoreSources opens a copy of the database as it was at an earlier
// time — a point-in-time restore on a side instance — for the company
// restore (docs/contract.md §6).
type RestoreSources interface {
	// Open connects to the copy a database URL names. It refuses one that
	// is no praxis database (domain.ErrNotPraxisDatabase) or whose schema is
	// not this build's (domain.ErrSchemaDiffers: migrate it first).
	Open(ctx context.Context, databaseURL string) (RestoreSource, error)
}

// RestoreSource is one copy, read only.
type RestoreSource interface {
	// Company answers the company as the copy holds it; domain.ErrNotFound when it holds none.
	Company(ctx context.Context, id domain.CompanyID) (domain.Company, error)
	// List pages through a section of the copy, as RecordStore.List.
	List(ctx context.Context, company domain.CompanyID, kind *domain.Kind, q domain.ListQuery) (Page, error)
	Close() error
}

// CustomerRepository keeps patients.
type CustomerRepository interface {
	// Create stores c; with c.ID zero the store assigns the next id.
	// An id already taken is domain.ErrConflict.
	Create(ctx context.Context, c domain.Customer) (domain.Customer, error)
	// Get returns the customer of the company; domain.ErrNotFound when no such
	// customer exists, domain.ErrOtherCompany when it is another company's.
	Get(ctx context.Context, company domain.CompanyID, id domain.CustomerID) (domain.Customer, error)
}

// FilePage is one page of the files feed; Next is where it ended.
type FilePage struct {
	Files   []domain.File
	Next    domain.Cursor
	HasMore bool
}

// FileRepository keeps the records of stored files. Create must run in a
// transaction: it stamps the files with the feed's change clock.
type FileRepository interface {
	Create(ctx context.Context, files ...domain.File) error
	Get(ctx context.Context, company domain.CompanyID, id domain.FileID) (domain.File, error)
	// Many answers the company's files among ids, in no particular order.
	Many(ctx context.Context, company domain.CompanyID, ids []domain.FileID) ([]domain.File, error)
	// List pages through the company's files in feed order, like every list.
	List(ctx context.Context, company domain.CompanyID, q domain.ListQuery) (FilePage, error)
	// KnownStorageKeys returns which of keys a file of the company, or a file
	// of one of its FHIR exports, is stored under.
	KnownStorageKeys(ctx context.Context, company domain.CompanyID, keys []string) (map[string]bool, error)
	// AssignOrder files a result of the company under a device order (it is
	// then matched): a new version of the file, on the change feed.
	AssignOrder(ctx context.Context, company domain.CompanyID, id domain.FileID, order string, at time.Time) (domain.File, error)
}
