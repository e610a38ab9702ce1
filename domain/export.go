package domain

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// A FHIR Bulk Data export (docs/contract.md §15, docs/integrators/fhir.md):
// kicked off by a client, run by whichever replica claims it, its NDJSON
// files in the blob store, the job itself in the database so that any
// replica answers its status and a restart loses none.

// ExportState is where an export job is.
type ExportState string

const (
	ExportAccepted  ExportState = "accepted"  // waiting for a replica to claim it
	ExportRunning   ExportState = "running"   // claimed; its lease tells until when
	ExportCompleted ExportState = "completed" // its files can be downloaded until ExpiresAt
	ExportFailed    ExportState = "failed"    // gave up after ExportAttempts runs
	ExportDeleted   ExportState = "deleted"   // cancelled by its client, or expired: its files are gone
)

// Export limits.
const (
	// ExportFileExpiry is how long a completed export's files are kept.
	ExportFileExpiry = 24 * time.Hour
	// ExportJobMemory is how long a job's row outlives its files: the
	// cut of its transactionTime still answers a later _since.
	ExportJobMemory = 30 * 24 * time.Hour
	// ExportAttempts is how many runs a job gets (a replica that dies
	// mid-run leaves its lease to expire; another starts the job again).
	ExportAttempts = 3
	// ExportLinesPerFile bounds one NDJSON file, and so the customers one
	// audit event of an export names.
	ExportLinesPerFile = 10000
	// MaxActiveExports is how many unfinished exports one client may have.
	MaxActiveExports = 3
)

// ErrTooManyExports refuses a kick-off while its client has
// MaxActiveExports unfinished exports.
var ErrTooManyExports = fmt.Errorf("the client has %d exports running: wait for one to end, or delete one: %w", MaxActiveExports, ErrConflict)

// ExportJob is one export.
type ExportJob struct {
	ID      uuid.UUID
	Company CompanyID
	Client  ClientID
	// Scopes are the kick-off token's: the job reads with them.
	Scopes Scopes
	// Patients is Patient/$export: the patient compartment's types only.
	Patients bool
	// Types are the FHIR types exported, in the server's order.
	Types []string
	// Since is the kick-off's _since; SinceCut, when not 0, the cut of the
	// earlier export whose transactionTime it is: then exactly the changes
	// from that cut on are exported, also those that were still settling.
	Since    *time.Time
	SinceCut int64
	// Cut is the change clock at kick-off: only changes below it are
	// exported, so the export is one consistent state.
	Cut             int64
	TransactionTime time.Time
	// Request is the kick-off URL, as the manifest names it.
	Request  string
	State    ExportState
	Progress string
	Error    string
	Files    []ExportFile
	Attempts int
	// Owner and LeaseUntil: the replica running it, and until when its claim holds.
	Owner       string
	LeaseUntil  time.Time
	CreatedAt   time.Time
	CompletedAt *time.Time
	// ExpiresAt is when its files go (completed: a day after completion).
	ExpiresAt time.Time
}

// ExportMediaType is an export file's media type: NDJSON, one FHIR resource a line.
const ExportMediaType = "application/fhir+ndjson"

// ExportFile is one NDJSON file of an export.
type ExportFile struct {
	Type  string
	Name  string
	Count int64
}

// ExportFileName is the blob name of file n of a job's attempt: named by
// the attempt, so that a runner that lost its lease and the run that took
// over never write, or remove, each other's files.
func ExportFileName(job uuid.UUID, attempt, n int) string {
	return fmt.Sprintf("export-%s-%d-%d.ndjson", job, attempt, n)
}

// ExportFileAttempt is the attempt that wrote a file of job named by
// ExportFileName; 0 for another name.
func ExportFileAttempt(job uuid.UUID, name string) int {
	var attempt, n int
	if _, err := fmt.Sscanf(strings.TrimPrefix(name, "export-"+job.String()+"-"), "%d-%d.ndjson", &attempt, &n); err != nil ||
		!strings.HasPrefix(name, "export-"+job.String()+"-") || ExportFileName(job, attempt, n) != name {
		return 0
	}
	return attempt
}

// Grant is the job's grant: the kick-off token's company, client and scopes.
func (j ExportJob) Grant() Grant {
	return Grant{CompanyID: j.Company, ClientID: j.Client, Scopes: j.Scopes}
}
