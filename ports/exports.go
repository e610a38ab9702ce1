package ports

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/bulk"
)

// ExportJobs keeps the FHIR Bulk Data exports (bulk.Job): in the
// database, so that every replica answers a job's status and serves its
// files, and a job outlives the replica that runs it.
type ExportJobs interface {
	// Horizon is the change clock's settled edge: every change below it is
	// committed, and every write from now on is stamped at or above it.
	Horizon(ctx context.Context) (int64, error)
	// Create stores a new job; bulk.ErrTooManyJobs when its client
	// already has bulk.MaxActive unfinished ones.
	Create(ctx context.Context, job bulk.Job) error
	// Get answers a job of company with its files; domain.ErrNotFound for
	// a missing or another company's one.
	Get(ctx context.Context, company domain.CompanyID, id uuid.UUID) (bulk.Job, error)
	// CutAt answers the cut of company's completed export whose
	// transactionTime is t (to the microsecond), if there is one.
	CutAt(ctx context.Context, company domain.CompanyID, t time.Time) (cut int64, ok bool, err error)
	// Claim takes the oldest job, of any company, that waits or whose
	// runner's lease ran out, for owner until now+lease, counting the
	// attempt; nil when there is none.
	Claim(ctx context.Context, owner string, now time.Time, lease time.Duration) (*bulk.Job, error)
	// Save writes a claimed job's state, progress, error, files and lease,
	// if owner still holds it; domain.ErrNotFound when it does not (the job
	// was cancelled, or another replica took it over).
	Save(ctx context.Context, job bulk.Job, owner string) error
	// Delete marks a job deleted and forgets its files; it answers the
	// names of the files it had, for the caller to remove.
	Delete(ctx context.Context, company domain.CompanyID, id uuid.UUID) ([]string, error)
	// Expired answers jobs of any company whose files are past ExpiresAt,
	// and forgets jobs deleted longer than bulk.JobMemory ago.
	Expired(ctx context.Context, now time.Time) ([]bulk.Job, error)
}

// ExportType is one resource type an export can hold.
type ExportType struct {
	Name string
	// Scope is the read scope the type needs.
	Scope domain.Scope
	// Patient: the type is in the patient compartment (Patient/$export).
	Patient bool
}

// ExportPage is one page of an export, read: its resources are written
// by Render, which may run on another goroutine while the next page is
// read (the pages' lines must then be written in the pages' order). A
// page followed by more is full (as many as asked for).
type ExportPage struct {
	Next    domain.Cursor
	HasMore bool
	// Render appends the page's resources to w as NDJSON lines and
	// answers how many; nil for a page with nothing to write.
	Render func(w *bytes.Buffer) (int, error)
}

// ExportSource renders the resources an export writes (adapters/fhir): a
// view of the sections, read with the job's grant.
type ExportSource interface {
	// ExportTypes are the types served, in the server's order.
	ExportTypes() []ExportType
	// ExportPage reads one page of typ's resources: the objects of q's page
	// of the type's feed (q.Below: the cut). A type that is no feed (the
	// Organization: the company) is one page, empty unless it changed at or
	// after since (nil: always). The customers it reaches are touched on
	// ctx's audit event.
	ExportPage(ctx context.Context, grant domain.Grant, typ string, q domain.ListQuery, since *time.Time) (ExportPage, error)
}

// ExportRequest is a kick-off: Patient/$export (Patients) or the system's,
// the types asked for (none: every type the grant may read), _since, and
// the kick-off URL as the manifest will name it.
type ExportRequest struct {
	Patients bool
	Types    []string
	Since    *time.Time
	Request  string
}

// Exports is what the FHIR door asks of the Bulk Data exports (the driving port).
type Exports interface {
	// KickOff accepts an export: the job, waiting for a replica to run it.
	KickOff(ctx context.Context, grant domain.Grant, r ExportRequest) (bulk.Job, error)
	// Status answers a job of the grant's client; domain.ErrNotFound for
	// another client's, a deleted or an expired one.
	Status(ctx context.Context, grant domain.Grant, id uuid.UUID) (bulk.Job, error)
	// Delete cancels a job, or removes a completed one's files.
	Delete(ctx context.Context, grant domain.Grant, id uuid.UUID) error
	// Open streams one file of a completed job of the grant's client.
	Open(ctx context.Context, grant domain.Grant, id uuid.UUID, name string) (io.ReadCloser, bulk.File, error)
}
