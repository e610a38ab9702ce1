package bulk

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
)

// A FHIR Bulk Data export (docs/contract.md §15, docs/integrators/fhir.md):
// kicked off by a client, run by whichever replica claims it, its NDJSON
// files in the blob store, the job itself in the database so that any
// replica answers its status and a restart loses none.

// State is where an export job is.
type State string

const (
	Accepted  State = "accepted"  // waiting for a replica to claim it
	Running   State = "running"   // claimed; its lease tells until when
	Completed State = "completed" // its files can be downloaded until ExpiresAt
	Failed    State = "failed"    // gave up after Attempts runs
	Deleted   State = "deleted"   // cancelled by its client, or expired: its files are gone
)

// Export limits.
const (
	// FileExpiry is how long a completed export's files are kept.
	FileExpiry = 24 * time.Hour
	// JobMemory is how long a job's row outlives its files: the
	// cut of its transactionTime still answers a later _since.
	JobMemory = 30 * 24 * time.Hour
	// Attempts is how many runs a job gets (a replica that dies
	// mid-run leaves its lease to expire; another starts the job again).
	Attempts = 3
	// LinesPerFile bounds one NDJSON file, and so the customers one
	// audit event of an export names.
	LinesPerFile = 10000
	// MaxActive is how many unfinished exports one client may have.
	MaxActive = 3
)

// ErrTooManyJobs refuses a kick-off while its client has
// MaxActive unfinished exports.
var ErrTooManyJobs = fmt.Errorf("the client has %d exports running: wait for one to end, or delete one: %w", MaxActive, domain.ErrConflict)

// Job is one export.
type Job struct {
	ID      uuid.UUID
	Company domain.CompanyID
	Client  domain.ClientID
	// Scopes are the kick-off token's: the job reads with them.
	Scopes domain.Scopes
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
	State    State
	Progress string
	Error    string
	Files    []File
	Attempts int
	// Owner and LeaseUntil: the replica running it, and until when its claim holds.
	Owner       string
	LeaseUntil  time.Time
	CreatedAt   time.Time
	CompletedAt *time.Time
	// ExpiresAt is when its files go (completed: a day after completion).
	ExpiresAt time.Time
}

// MediaType is an export file's media type: NDJSON, one FHIR resource a line.
const MediaType = "application/fhir+ndjson"

// File is one NDJSON file of an export.
type File struct {
	Type  string
	Name  string
	Count int64
}

// FileName is the blob name of file n of a job's attempt: named by
// the attempt, so that a runner that lost its lease and the run that took
// over never write, or remove, each other's files.
func FileName(job uuid.UUID, attempt, n int) string {
	return fmt.Sprintf("export-%s-%d-%d.ndjson", job, attempt, n)
}

// FileAttempt is the attempt that wrote a file of job named by
// FileName; 0 for another name.
func FileAttempt(job uuid.UUID, name string) int {
	var attempt, n int
	if _, err := fmt.Sscanf(strings.TrimPrefix(name, "export-"+job.String()+"-"), "%d-%d.ndjson", &attempt, &n); err != nil ||
		!strings.HasPrefix(name, "export-"+job.String()+"-") || FileName(job, attempt, n) != name {
		return 0
	}
	return attempt
}

// Grant is the job's grant: the kick-off token's company, client and scopes.
func (j Job) Grant() domain.Grant {
	return domain.Grant{CompanyID: j.Company, ClientID: j.Client, Scopes: j.Scopes}
}
