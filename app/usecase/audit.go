package usecase

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// Auditor records the audit trail (docs/contract.md §11) and answers it.
// A write's event goes into the write's own transaction (recordInTx); every
// other event is made durable before its answer leaves, by group commit:
// requests that arrive while one batch is written wait for the next, which
// writes them all in one transaction, so that no request pays a round trip
// of its own. Under load a batch waits for more (auditLinger), but only
// while requests the doors announced (Expect) are still on their way: once
// every one of them has recorded its event or ended, the batch is written.
type Auditor struct {
	log       ports.AuditLog
	tx        ports.Transactor
	companies ports.CompanyRepository
	customers ports.CustomerRepository
	clients   ports.ClientRepository
	names     sync.Map // domain.ClientID → string: a client's name, for its events
	logger    *slog.Logger

	mu      sync.RWMutex
	queue   chan auditRequest
	stopped chan struct{}

	// expected counts the requests under way that may still record an
	// event (Expect); arrived wakes a lingering batch when it falls to 0.
	expected atomic.Int64
	arrived  chan struct{}
	linger   time.Duration // auditLinger; a test's own
	observe  func(events int, oldest time.Duration)
}

type auditRequest struct {
	company domain.CompanyID
	event   audit.Event
	done    chan error
	at      time.Time // when it was queued
}

// maxAuditBatch bounds one group commit.
const maxAuditBatch = 512

// auditLinger is the longest a batch waits for more events while requests
// arrive together. Measured with 64 clients reading one customer (make
// bench): 3 ms gave 28 events a block where 1 ms gave 21, and the database
// time the trail adds to a read fell by a third (68 → 47 µs). A batch whose
// expected requests have all arrived does not wait it out.
const auditLinger = 3 * time.Millisecond

var _ ports.Auditor = (*Auditor)(nil)

// NewAuditor records to log.
func NewAuditor(log ports.AuditLog, tx ports.Transactor, companies ports.CompanyRepository, customers ports.CustomerRepository,
	clients ports.ClientRepository, logger *slog.Logger) *Auditor {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Auditor{log: log, tx: tx, companies: companies, customers: customers, clients: clients, logger: logger,
		arrived: make(chan struct{}, 1), linger: auditLinger}
}

// expectation is one request Expect announced; it arrives once.
type expectation struct {
	a    *Auditor
	done atomic.Bool
}

type expectationKey struct{}

// Expect announces a request that may record an event: a lingering batch
// waits for it until it records one (Record, or its write's transaction)
// or calls end, which the door does when the request is over.
func (a *Auditor) Expect(ctx context.Context) (context.Context, func()) {
	a.expected.Add(1)
	x := &expectation{a: a}
	return context.WithValue(ctx, expectationKey{}, x), x.arrive
}

func (x *expectation) arrive() {
	if x.done.Swap(true) {
		return
	}
	if x.a.expected.Add(-1) == 0 {
		select { // wake a lingering batch: nothing else is on its way
		case x.a.arrived <- struct{}{}:
		default:
		}
	}
}

// arrive ends ctx's expectation, if it has one: no batch waits for its
// request any more. A use case that waits (a long poll) or streams (an
// upload) arrives before it does.
func arrive(ctx context.Context) {
	if x, ok := ctx.Value(expectationKey{}).(*expectation); ok {
		x.arrive()
	}
}

// ObserveBatches tells fn of every group commit once it is written: how
// many events it held and how long the oldest of them waited, from its
// Record to the commit — the longest a read's answer waited for its event.
// Call it before Start.
func (a *Auditor) ObserveBatches(fn func(events int, oldest time.Duration)) { a.observe = fn }

// Start runs the group commit until Stop.
func (a *Auditor) Start() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.queue != nil {
		return
	}
	a.queue, a.stopped = make(chan auditRequest, 4*maxAuditBatch), make(chan struct{})
	go a.run(a.queue, a.stopped)
}

// Stop writes what is queued and ends the group commit; later events are
// written one transaction each.
func (a *Auditor) Stop() {
	a.mu.Lock()
	queue, stopped := a.queue, a.stopped
	a.queue = nil
	a.mu.Unlock()
	if queue != nil {
		close(queue)
		<-stopped
	}
}

// Record makes e durable in company's chain and answers when it is; an
// error means it is not, and the data it is about must not be served.
func (a *Auditor) Record(ctx context.Context, company domain.CompanyID, e audit.Event) error {
	if e.Outcome.Status >= 400 {
		// A refusal names only the company's own customers: an unknown id,
		// or another company's, is recorded without one. A company that does
		// not exist (an upload naming a made-up one) has no trail to keep it;
		// a client's or a member's company is the one its grant names.
		if e.Agent.Type != audit.AgentClient && e.Agent.Type != audit.AgentStaff {
			if _, err := a.companies.Get(ctx, company); errors.Is(err, domain.ErrNotFound) {
				return nil
			} else if err != nil {
				return err
			}
		}
		own := e.CustomerIDs[:0]
		for _, id := range e.CustomerIDs {
			if _, err := a.customers.Get(ctx, company, id); err == nil {
				own = append(own, id)
			}
		}
		e.CustomerIDs = own
	}
	a.name(ctx, &e)
	a.mu.RLock()
	queue := a.queue
	if queue == nil {
		a.mu.RUnlock()
		arrive(ctx)
		return a.write(ctx, []auditRequest{{company: company, event: e}})[company]
	}
	done := make(chan error, 1)
	queue <- auditRequest{company: company, event: e, done: done, at: time.Now()} // Stop waits for this send
	a.mu.RUnlock()
	arrive(ctx)   // after the send: a batch that sees no one expected has it
	return <-done // never abandoned: the answer waits for its event
}

func (a *Auditor) run(queue chan auditRequest, stopped chan struct{}) {
	defer close(stopped)
	busy := false            // the last batch had company: requests are arriving together
	var batch []auditRequest // one buffer for every batch
	for first := range queue {
		batch = append(batch[:0], first)
		// Under load, wait a moment for more: a batch's statement costs the
		// database about the same for one event as for twenty. Alone, a
		// request does not wait.
		var linger <-chan time.Time
		if busy {
			linger = time.After(a.linger)
		}
		for len(batch) < maxAuditBatch {
			r, ok := a.next(queue, linger)
			if !ok {
				break
			}
			batch = append(batch, r)
		}
		busy = len(batch) > 1
		oldest := batch[0].at // the queue is in order; write sorts the batch by company
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		failed := a.write(ctx, batch)
		if a.observe != nil {
			a.observe(len(batch), time.Since(oldest))
		}
		for _, r := range batch {
			r.done <- failed[r.company]
		}
		cancel()
		clear(batch) // the buffer keeps no event past its batch
	}
}

// next takes a queued request: at once, or, when linger is set, within it
// while an expected request is still on its way. false: none came, or the
// queue is closed.
func (a *Auditor) next(queue chan auditRequest, linger <-chan time.Time) (auditRequest, bool) {
	for {
		select {
		case r, ok := <-queue:
			return r, ok
		default:
		}
		if linger == nil || a.expected.Load() == 0 {
			return auditRequest{}, false
		}
		select {
		case r, ok := <-queue:
			return r, ok
		case <-a.arrived: // the last expected request arrived or ended: look again
		case <-linger:
			return auditRequest{}, false
		}
	}
}

// write appends a batch company by company, each company's events atomic
// on their own (the store's one statement, or a transaction of its own):
// one company's failure refuses only its requests. It answers the
// companies that failed.
func (a *Auditor) write(ctx context.Context, batch []auditRequest) map[domain.CompanyID]error {
	// Each company's events side by side in one slice, in the order they
	// came: the batch sorted by company, stably.
	slices.SortStableFunc(batch, func(x, y auditRequest) int { return bytes.Compare(x.company[:], y.company[:]) })
	events := make([]audit.Event, len(batch))
	for i, r := range batch {
		events[i] = r.event
	}
	var failed map[domain.CompanyID]error
	for from := 0; from < len(batch); {
		c, to := batch[from].company, from+1
		for to < len(batch) && batch[to].company == c {
			to++
		}
		own := events[from:to:to]
		from = to
		err := a.log.Append(ctx, c, own)
		if err == nil {
			continue
		}
		a.logger.ErrorContext(ctx, "audit events could not be written", "events", len(own), "error", err)
		if !errors.Is(err, domain.ErrUnavailable) {
			err = fmt.Errorf("%w: audit: %w", domain.ErrUnavailable, err)
		}
		if failed == nil {
			failed = map[domain.CompanyID]error{}
		}
		failed[c] = err
	}
	return failed
}

// name gives a client's event the client's name, read once per process.
func (a *Auditor) name(ctx context.Context, e *audit.Event) {
	if e.Agent.Type != audit.AgentClient || e.Agent.Name != "" {
		return
	}
	id := domain.ClientID(e.Agent.ID)
	if name, ok := a.names.Load(id); ok {
		e.Agent.Name = name.(string)
		return
	}
	if c, err := a.clients.Get(ctx, id); err == nil {
		a.names.Store(id, c.Name)
		e.Agent.Name = c.Name
	}
}

// inTx puts the request's event into the write's transaction, with the
// write's outcome: it commits with the write or not at all.
func (a *Auditor) inTx(ctx context.Context, company domain.CompanyID, outcome domain.Outcome) error {
	access := audit.From(ctx)
	if access == nil || a == nil {
		return nil
	}
	arrive(ctx) // its event goes with the write: no batch waits for it
	e := access.Event(outcome.Status(), "")
	a.name(ctx, &e)
	if err := a.log.Append(ctx, company, []audit.Event{e}); err != nil {
		return err
	}
	access.MarkWritten()
	return nil
}

// List answers one page of the company's events in chain order.
func (a *Auditor) List(ctx context.Context, grant domain.Grant, q audit.Query) (audit.Page, error) {
	if err := grant.Require(domain.ScopeAuditRead); err != nil {
		return audit.Page{}, err
	}
	return a.log.List(ctx, grant.CompanyID, q)
}

// Verify walks the company's chain from its checkpoint to its head and
// answers how many events it checked, or the first broken link.
func (a *Auditor) Verify(ctx context.Context, company domain.CompanyID, checkpoints ...audit.Link) (int64, audit.Link, error) {
	if _, err := a.companies.Get(ctx, company); err != nil {
		return 0, audit.Link{}, err
	}
	from, head, err := a.log.Chain(ctx, company)
	if err != nil {
		return 0, head, err
	}
	n, err := audit.Verify(company, from, head, func(fn func(audit.Sealed) error) error { return a.log.Walk(ctx, company, head.Seq, fn) }, checkpoints...)
	return n, head, err
}

// LogCheckpoints writes every company's head to the log: kept outside the
// database, a head is a checkpoint that verify --checkpoint holds a
// rewritten chain against.
func (a *Auditor) LogCheckpoints(ctx context.Context) error {
	ids, err := a.companies.ListIDs(ctx)
	if err != nil {
		return err
	}
	for _, c := range ids {
		_, head, err := a.log.Chain(ctx, c)
		if err != nil {
			return err
		}
		if head.Seq > 0 {
			a.logger.InfoContext(ctx, "audit checkpoint", "company", c.String(), "checkpoint", head.String())
		}
	}
	return nil
}

// Export writes the company's events between from and to (either may be
// nil) as NDJSON, one FHIR AuditEvent (IHE BALP) per line.
func (a *Auditor) Export(ctx context.Context, company domain.CompanyID, from, to *time.Time, w io.Writer) (int, error) {
	if _, err := a.companies.Get(ctx, company); err != nil {
		return 0, err
	}
	q := audit.Query{From: from, To: to, Limit: 1000}
	n := 0
	for {
		page, err := a.log.List(ctx, company, q)
		if err != nil {
			return n, err
		}
		for _, payload := range page.Events {
			var e audit.Event
			if err := json.Unmarshal(payload, &e); err != nil {
				return n, err
			}
			line, err := json.Marshal(e.BALP(company))
			if err != nil {
				return n, err
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return n, err
			}
			n++
		}
		if !page.HasMore {
			return n, nil
		}
		q.After = page.Last
	}
}

// Sweep deletes, in every company, the events older than retention.
func (a *Auditor) Sweep(ctx context.Context, retention time.Duration, now time.Time) (int64, error) {
	ids, err := a.companies.ListIDs(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, c := range ids {
		var n int64
		err := a.tx.InTx(ctx, func(ctx context.Context) error {
			var err error
			n, err = a.log.Sweep(ctx, c, now.Add(-retention))
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
