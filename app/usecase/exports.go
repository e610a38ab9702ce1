package usecase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/bulk"
	"github.com/praxis-health/praxis/ports"
)

// ExportSettings tune the exports' runner; the defaults suit production.
type ExportSettings struct {
	// Poll is how often a replica looks for a waiting export, and Sweep
	// how often for expired ones.
	Poll, Sweep time.Duration
	// Lease is how long a job stays with this replica without a word from
	// it: a replica killed mid-run hands it on after it.
	Lease time.Duration
	// Page is how many objects one read of a feed takes.
	Page int
	// LinesPerFile bounds one NDJSON file (bulk.LinesPerFile).
	LinesPerFile int
}

// DefaultExportSettings are production's.
var DefaultExportSettings = ExportSettings{Poll: time.Second, Sweep: time.Minute, Lease: 30 * time.Second,
	Page: domain.MaxPageSize, LinesPerFile: bulk.LinesPerFile}

// Exports runs the FHIR Bulk Data exports (docs/contract.md §15): a
// kick-off fixes the cut (the change clock's settled edge) and stores the
// job; whichever replica claims it reads each type's feed below the cut
// with the kick-off's grant and writes NDJSON files to the blob store, one
// audit event per file naming the customers it holds; a day after it
// completes, its files go.
type Exports struct {
	jobs    ports.ExportJobs
	blobs   ports.BlobStore
	source  ports.ExportSource
	auditor ports.Auditor
	log     *slog.Logger
	s       ExportSettings
	owner   string
	now     func() time.Time
	wake    chan struct{}
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

var _ ports.Exports = (*Exports)(nil)

// NewExports runs the exports of jobs.
func NewExports(jobs ports.ExportJobs, blobs ports.BlobStore, source ports.ExportSource, auditor ports.Auditor,
	log *slog.Logger, s ExportSettings) *Exports {
	return &Exports{jobs: jobs, blobs: blobs, source: source, auditor: auditor, log: log, s: s,
		owner: leaseOwner(), now: time.Now, wake: make(chan struct{}, 1)}
}

// KickOff checks the types against the grant, fixes the cut and stores the job.
func (e *Exports) KickOff(ctx context.Context, grant domain.Grant, r ports.ExportRequest) (bulk.Job, error) {
	types, err := e.types(grant, r)
	if err != nil {
		return bulk.Job{}, err
	}
	cut, err := e.jobs.Horizon(ctx)
	if err != nil {
		return bulk.Job{}, err
	}
	// The manifest names the time to the millisecond; a later _since of
	// exactly that time finds this job's cut.
	now := e.now().UTC().Truncate(time.Millisecond)
	job := bulk.Job{
		ID: uuid.Must(uuid.NewV7()), Company: grant.CompanyID, Client: grant.ClientID, Scopes: grant.Scopes,
		Patients: r.Patients, Types: types, Cut: cut, TransactionTime: now, Request: r.Request,
		State: bulk.Accepted, Progress: "waiting for a server to start it", CreatedAt: now,
		ExpiresAt: now.Add(bulk.FileExpiry),
	}
	if r.Since != nil {
		since := r.Since.UTC()
		job.Since = &since
		if job.SinceCut, _, err = e.jobs.CutAt(ctx, grant.CompanyID, since); err != nil {
			return bulk.Job{}, err
		}
	}
	if err := e.jobs.Create(ctx, job); err != nil {
		return bulk.Job{}, err
	}
	audit.Created(ctx, job.ID.String())
	select {
	case e.wake <- struct{}{}:
	default:
	}
	return job, nil
}

// types are the kick-off's types in the server's order: those named (each
// served, in the compartment for Patient/$export, readable by the grant),
// or every one the grant may read.
func (e *Exports) types(grant domain.Grant, r ports.ExportRequest) ([]string, error) {
	var out []string
	for _, t := range e.source.ExportTypes() {
		if r.Patients && !t.Patient {
			continue
		}
		if len(r.Types) == 0 {
			if grant.Scopes.Contains(t.Scope) {
				out = append(out, t.Name)
			}
			continue
		}
		if slices.Contains(r.Types, t.Name) {
			if err := grant.Require(t.Scope); err != nil {
				return nil, err
			}
			out = append(out, t.Name)
		}
	}
	for _, name := range r.Types {
		if !slices.Contains(out, name) {
			msg := "names a type this server does not export: " + name
			if r.Patients {
				msg = "names a type outside the patient compartment, or not exported: " + name
			}
			return nil, domain.FieldErrors{{Field: "_type", Message: msg}}.Err()
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the grant may read none of the types an export holds", domain.ErrForbidden)
	}
	return out, nil
}

// Status answers a job of the grant's client.
func (e *Exports) Status(ctx context.Context, grant domain.Grant, id uuid.UUID) (bulk.Job, error) {
	job, err := e.jobs.Get(ctx, grant.CompanyID, id)
	if err != nil {
		return bulk.Job{}, err
	}
	if job.Client != grant.ClientID || job.State == bulk.Deleted ||
		(job.State == bulk.Completed && !e.now().Before(job.ExpiresAt)) {
		return bulk.Job{}, domain.ErrNotFound
	}
	return job, nil
}

// Delete cancels a job (its runner stops at its next word with the store)
// or removes a completed one's files.
func (e *Exports) Delete(ctx context.Context, grant domain.Grant, id uuid.UUID) error {
	if _, err := e.Status(ctx, grant, id); err != nil {
		return err
	}
	names, err := e.jobs.Delete(ctx, grant.CompanyID, id)
	if err != nil {
		return err
	}
	e.remove(ctx, grant.CompanyID, names)
	return nil
}

// Open streams one file of a completed job.
func (e *Exports) Open(ctx context.Context, grant domain.Grant, id uuid.UUID, name string) (io.ReadCloser, bulk.File, error) {
	job, err := e.Status(ctx, grant, id)
	if err != nil {
		return nil, bulk.File{}, err
	}
	i := slices.IndexFunc(job.Files, func(f bulk.File) bool { return f.Name == name })
	if job.State != bulk.Completed || i < 0 {
		return nil, bulk.File{}, domain.ErrNotFound
	}
	r, err := e.blobs.Open(ctx, job.Company, name, 0, -1)
	return r, job.Files[i], err
}

// remove deletes files of company; one that stays is the orphan sweep's.
func (e *Exports) remove(ctx context.Context, company domain.CompanyID, names []string) {
	for _, n := range names {
		if err := e.blobs.Delete(ctx, company, n); err != nil {
			e.log.Warn("exports: deleting a file failed; the orphan sweep takes it", "error", err.Error())
		}
	}
}

// Start runs exports and sweeps expired ones until Stop.
func (e *Exports) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		e.loop(ctx)
	}()
}

// Stop ends the run in flight (another replica, or this one after a
// restart, starts it again once its lease runs out).
func (e *Exports) Stop() {
	if e.cancel != nil {
		e.cancel()
	}
	e.wg.Wait()
}

func (e *Exports) loop(ctx context.Context) {
	tick := time.NewTicker(e.s.Poll)
	defer tick.Stop()
	var swept time.Time
	for {
		if now := e.now(); now.Sub(swept) >= e.s.Sweep {
			swept = now
			e.sweep(ctx, now)
		}
		for ctx.Err() == nil {
			job, err := e.jobs.Claim(ctx, e.owner, e.now(), e.s.Lease)
			if err != nil {
				if ctx.Err() == nil {
					e.log.Warn("exports: claiming a job failed", "error", err.Error())
				}
				break
			}
			if job == nil {
				break
			}
			e.run(ctx, *job)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-e.wake:
		}
	}
}

// sweep removes the files of exports past their expiry.
func (e *Exports) sweep(ctx context.Context, now time.Time) {
	jobs, err := e.jobs.Expired(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("exports: listing expired exports failed", "error", err.Error())
		}
		return
	}
	for _, j := range jobs {
		names, err := e.jobs.Delete(ctx, j.Company, j.ID)
		if err != nil {
			if !errors.Is(err, domain.ErrNotFound) && ctx.Err() == nil {
				e.log.Warn("exports: expiring an export failed", "error", err.Error())
			}
			continue
		}
		e.remove(ctx, j.Company, names)
	}
}

// errCancelled ends a run whose job was deleted or taken over.
var errCancelled = errors.New("the export was cancelled or taken over")

// run writes a claimed job's files, from scratch: a run cut off before
// leaves files that this one removes first.
func (e *Exports) run(ctx context.Context, claimed bulk.Job) {
	job, err := e.jobs.Get(ctx, claimed.Company, claimed.ID)
	if err != nil {
		e.log.Warn("exports: reading a claimed job failed", "error", err.Error())
		return
	}
	if job.Owner != e.owner || job.State != bulk.Running || job.Attempts != claimed.Attempts {
		return // taken over while this replica stood still: the files are the other run's
	}
	// The files of earlier attempts, whose leases ran out, go; never a
	// later attempt's (the job may be taken over while this runs).
	var stale []string
	for _, f := range job.Files {
		if a := bulk.FileAttempt(job.ID, f.Name); a > 0 && a < job.Attempts {
			stale = append(stale, f.Name)
		}
	}
	e.remove(ctx, job.Company, stale)
	job.Files = nil
	if job.Attempts > bulk.Attempts {
		job.State, job.Error, job.Progress = bulk.Failed, "the export failed on every attempt", "failed"
		job.ExpiresAt = e.now().Add(bulk.FileExpiry)
		_ = e.save(ctx, &job) // a save lost is the next claim's: it fails the job again
		return
	}
	r := exportRun{Exports: e, job: &job, lastSave: e.now()}
	err = safely(func() error { return r.write(ctx) })
	switch {
	case err == nil:
		now := e.now()
		job.State, job.Progress, job.CompletedAt, job.ExpiresAt = bulk.Completed, "completed", &now, now.Add(bulk.FileExpiry)
		if err := e.save(ctx, &job); err != nil {
			e.remove(ctx, job.Company, names(job.Files))
		}
	case errors.Is(err, errCancelled) || ctx.Err() != nil:
		e.remove(ctx, job.Company, names(job.Files))
	default:
		// Started again by whichever replica claims it after a pause that
		// grows with each attempt.
		e.log.Warn("exports: a run failed; it is tried again", "attempt", job.Attempts, "error", err.Error())
		e.remove(ctx, job.Company, names(job.Files))
		job.Files = nil
		job.LeaseUntil = e.now().Add(time.Duration(job.Attempts) * 10 * time.Second)
		job.Progress = "waiting to be tried again"
		_ = e.save(ctx, &job) // unsaved, the lease runs out all the same
	}
}

// safely runs fn; a panic in it (a bug) is its error, so that the run
// fails and is tried again instead of the server going down.
func safely(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the run panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return fn()
}

// save writes the job; errCancelled when it is no longer this runner's.
func (e *Exports) save(ctx context.Context, job *bulk.Job) error {
	if job.State == bulk.Running && job.LeaseUntil.Before(e.now().Add(e.s.Lease/2)) {
		job.LeaseUntil = e.now().Add(e.s.Lease)
	}
	err := e.jobs.Save(ctx, *job, e.owner)
	if errors.Is(err, domain.ErrNotFound) {
		return errCancelled
	}
	if err != nil && ctx.Err() == nil {
		e.log.Warn("exports: saving a job failed", "error", err.Error())
	}
	return err
}

func names(files []bulk.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Name
	}
	return out
}

// exportRun is one run of a job: the file being written and its event.
type exportRun struct {
	*Exports
	job      *bulk.Job
	lastSave time.Time
	total    int64
}

func (r *exportRun) write(ctx context.Context) error {
	grant := r.job.Grant()
	for i, typ := range r.job.Types {
		q := domain.ListQuery{Limit: r.s.Page, From: r.job.SinceCut, Below: r.job.Cut}
		if r.job.SinceCut == 0 && r.job.Since != nil {
			q.UpdatedSince = r.job.Since
		}
		for more := true; more; {
			var err error
			if more, err = r.file(ctx, grant, typ, &q); err != nil {
				return err
			}
			r.job.Progress = fmt.Sprintf("%s: type %d of %d, %d resources written", typ, i+1, len(r.job.Types), r.total)
		}
	}
	return nil
}

// file writes one NDJSON file of typ from q's position, up to the bound;
// more tells whether the type goes on in another file.
func (r *exportRun) file(ctx context.Context, grant domain.Grant, typ string, q *domain.ListQuery) (more bool, err error) {
	name := bulk.FileName(r.job.ID, r.job.Attempts, len(r.job.Files)+1)
	w, err := r.blobs.NewWriter(ctx, r.job.Company, name, bulk.MediaType)
	if err != nil {
		return false, err
	}
	committed := false
	defer func() {
		if !committed {
			w.Abort()
		}
	}()
	ev := audit.New(r.now())
	ev.Agent = audit.Agent{Type: audit.AgentClient, ID: string(r.job.Client)}
	ev.Action, ev.Section, ev.ObjectID = audit.ActionFHIRExport, "fhir", r.job.ID.String()+"/"+name
	access := audit.NewAccess(ev, nil)
	actx := audit.With(ctx, access)
	out := newRenderQueue(w)
	defer out.close()
	for read := 0; read < r.s.LinesPerFile; {
		q.Limit = min(r.s.Page, r.s.LinesPerFile-read)
		page, err := r.source.ExportPage(actx, grant, typ, *q, r.job.Since)
		if err != nil {
			return false, err
		}
		if err := out.add(page.Render); err != nil {
			return false, err
		}
		read += q.Limit // a page followed by more is full
		q.After = &page.Next
		if more = page.HasMore; !more {
			break
		}
		if r.now().Sub(r.lastSave) > r.s.Lease/3 { // hold the lease through a long file
			r.lastSave = r.now()
			if err := r.save(ctx, r.job); err != nil {
				return false, err
			}
		}
	}
	lines, err := out.flush()
	if err != nil {
		return false, err
	}
	if lines == 0 {
		return false, nil // nothing of this type: no file (the Bulk Data IG allows none)
	}
	if err := w.Commit(); err != nil {
		return false, err
	}
	committed = true
	// The file's event is durable before the file can be downloaded: it
	// names the customers whose data the file holds.
	if err := r.auditor.Record(ctx, r.job.Company, access.Event(domain.OutcomeOK.Status(), "")); err != nil {
		r.remove(ctx, r.job.Company, []string{name})
		return false, err
	}
	r.job.Files = append(r.job.Files, bulk.File{Type: typ, Name: name, Count: int64(lines)})
	r.total += int64(lines)
	r.lastSave = r.now()
	if err := r.save(ctx, r.job); err != nil {
		return false, err
	}
	return more, nil
}

// renderQueue renders an export's pages on up to GOMAXPROCS goroutines
// while the next pages are read, and writes them to the file in order.
type renderQueue struct {
	w       io.Writer
	pending []chan rendered
	lines   int
}

type rendered struct {
	buf   *bytes.Buffer
	lines int
	err   error
}

func newRenderQueue(w io.Writer) *renderQueue { return &renderQueue{w: w} }

// add starts rendering a page, first writing the oldest one when as many
// are in flight as there are processors.
func (q *renderQueue) add(render func(*bytes.Buffer) (int, error)) error {
	if len(q.pending) >= runtime.GOMAXPROCS(0) {
		if err := q.writeOldest(); err != nil {
			return err
		}
	}
	done := make(chan rendered, 1)
	q.pending = append(q.pending, done)
	go func() {
		buf := renderBuffers.Get().(*bytes.Buffer)
		buf.Reset()
		var n int
		var err error
		defer func() {
			if p := recover(); p != nil { // a bug in a mapping fails the run, not the server
				err = fmt.Errorf("rendering a page panicked: %v\n%s", p, debug.Stack())
			}
			done <- rendered{buf: buf, lines: n, err: err}
		}()
		if render != nil { // nil: a page with nothing to write
			n, err = render(buf)
		}
	}()
	return nil
}

func (q *renderQueue) writeOldest() error {
	r := <-q.pending[0]
	q.pending = q.pending[1:]
	defer renderBuffers.Put(r.buf)
	if r.err != nil {
		return r.err
	}
	q.lines += r.lines
	_, err := q.w.Write(r.buf.Bytes())
	return err
}

// flush writes every page still in flight and answers the lines written.
func (q *renderQueue) flush() (int, error) {
	for len(q.pending) > 0 {
		if err := q.writeOldest(); err != nil {
			return 0, err
		}
	}
	return q.lines, nil
}

// close waits for the pages still rendering (after an error), so that no
// goroutine outlives the file.
func (q *renderQueue) close() {
	for _, p := range q.pending {
		renderBuffers.Put((<-p).buf)
	}
	q.pending = nil
}

var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
