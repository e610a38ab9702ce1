package usecase

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// DispatcherSettings tune the dispatcher; the defaults suit production.
type DispatcherSettings struct {
	// Lease is how long an endpoint stays with this replica without a word
	// from it: a replica killed mid-delivery hands its endpoints on after it.
	Lease time.Duration
	// Poll is how often an idle endpoint looks for changes, and how often
	// this replica looks for endpoints to take.
	Poll time.Duration
	// Workers is how many endpoints this replica drives at once.
	Workers int
	// Batch is how many changes one read of the feed takes.
	Batch int
	// TimeScale shrinks the retry schedule and the time to disable (tests:
	// a whole schedule of 75 hours in seconds); 1 in production.
	TimeScale float64
}

// DefaultDispatcherSettings are production's.
var DefaultDispatcherSettings = DispatcherSettings{Lease: 30 * time.Second, Poll: 250 * time.Millisecond, Workers: 16, Batch: 100, TimeScale: 1}

// Dispatcher delivers every company's changes to its webhook endpoints
// (docs/contract.md §12): per endpoint in feed order, one event after the
// acknowledgement of the one before, retried on the Standard Webhooks
// schedule; the endpoint's position is a feed position, so an outage of
// any length loses nothing. Replicas share the endpoints by leases: one
// drives an endpoint at a time.
type Dispatcher struct {
	store   ports.WebhookEndpoints
	feed    ports.ChangeFeed
	keys    *webhook.Keyring
	out     ports.Deliverer
	auditor ports.Auditor
	log     *slog.Logger
	s       DispatcherSettings
	owner   string
	now     func() time.Time

	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	driving map[uuid.UUID]bool
}

// NewDispatcher delivers the endpoints of store; auditor tells a company
// that its endpoint was disabled (nil: nobody is told, the benchmark build).
func NewDispatcher(store ports.WebhookEndpoints, feed ports.ChangeFeed, keys *webhook.Keyring, out ports.Deliverer,
	auditor ports.Auditor, log *slog.Logger, s DispatcherSettings) *Dispatcher {
	return &Dispatcher{store: store, feed: feed, keys: keys, out: out, auditor: auditor, log: log, s: s,
		owner: leaseOwner(), now: time.Now, driving: map[uuid.UUID]bool{}}
}

// leaseOwner names this process as the holder of leases (endpoints,
// exports, a company's import, restore or erasure): host, pid and a random part, so that a restart on the same
// pid is another owner.
func leaseOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Start runs the dispatcher until Stop.
func (d *Dispatcher) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.run(ctx)
	}()
}

// Stop ends every delivery in flight (not counted as an attempt), gives
// the leases up and returns when all have ended.
func (d *Dispatcher) Stop() {
	if d.cancel != nil {
		d.cancel()
	}
	d.wg.Wait()
}

func (d *Dispatcher) run(ctx context.Context) {
	tick := time.NewTicker(d.s.Poll)
	defer tick.Stop()
	for {
		d.claim(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// claim takes due endpoints up to the free workers and drives each.
func (d *Dispatcher) claim(ctx context.Context) {
	d.mu.Lock()
	free := d.s.Workers - len(d.driving)
	d.mu.Unlock()
	if free <= 0 {
		return
	}
	endpoints, err := d.store.Claim(ctx, d.owner, d.now(), d.s.Lease, free)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("webhooks: claiming endpoints failed", "error", err.Error())
		}
		return
	}
	for _, e := range endpoints {
		d.mu.Lock()
		if d.driving[e.ID] {
			d.mu.Unlock()
			continue
		}
		d.driving[e.ID] = true
		d.mu.Unlock()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.drive(ctx, e)
			d.mu.Lock()
			delete(d.driving, e.ID)
			d.mu.Unlock()
		}()
	}
}

// turnBatches is how many batches an endpoint with a backlog gets before
// it goes back to the claim loop, so that a replica's workers take turns
// among more endpoints than there are workers.
const turnBatches = 10

// drive delivers e's changes in order while this replica holds its lease,
// and gives the lease up when e is caught up (it is due again after one
// poll), has had its turn, must wait (a retry later) or is disabled.
func (d *Dispatcher) drive(ctx context.Context, e webhook.Endpoint) {
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = d.store.Release(rctx, e, d.owner)
	}()
	for turn := 0; turn < turnBatches && ctx.Err() == nil; turn++ {
		current, err := d.store.Renew(ctx, e, d.owner, d.now().Add(d.s.Lease))
		if err != nil {
			return // deleted, taken over, or the database is away: the claim loop comes back
		}
		e = current
		if !e.Enabled || e.NextAttempt.After(d.now()) {
			return
		}
		changes, err := d.feed.After(ctx, e.Company, e.Position, d.s.Batch)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Warn("webhooks: reading the change feed failed", "endpoint", e.ID.String(), "error", err.Error())
			}
			return
		}
		if len(changes) == 0 {
			// Caught up: due again after one poll, behind the endpoints
			// that have waited longer.
			e.NextAttempt = d.now().Add(d.s.Poll)
			_ = d.store.Advance(ctx, e, d.owner, d.now(), nil)
			return
		}
		if !d.deliverBatch(ctx, &e, changes) {
			return
		}
	}
}

// Acknowledged events are stored in groups: the position moves, with the
// attempts' log entries, after saveEvery events or saveAfter, whichever
// comes first, and at once after a failure. A replica killed between two
// saves sends at most the events since the last one again, each with its
// webhook-id.
const (
	saveEvery = 20
	saveAfter = 100 * time.Millisecond
)

// deliverBatch sends changes one after another, each after the receiver
// acknowledged the one before; it answers false when e must stop (a
// failure to retry later, disabled, the lease lost, shutting down).
func (d *Dispatcher) deliverBatch(ctx context.Context, e *webhook.Endpoint, changes []webhook.Change) bool {
	var pending []webhook.Attempt
	moved := false
	saved := time.Now()
	save := func(ctx context.Context) bool {
		if len(pending) == 0 && !moved {
			return true
		}
		err := d.store.Advance(ctx, *e, d.owner, d.now().Add(d.s.Lease), pending)
		pending, moved, saved = nil, false, time.Now()
		return err == nil // else a replay or a change by the owner (Renew reads it), or the lease is gone
	}
	for _, c := range changes {
		if !e.EventTypes.Wants(c.Type()) {
			e.Position, moved = c.Position, true
			continue
		}
		a, res, err := d.send(ctx, *e, c)
		if ctx.Err() != nil {
			// Shutting down: this attempt does not count; what was
			// acknowledged before it is kept.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			save(sctx)
			return false
		}
		if err != nil {
			d.log.Error("webhooks: an event could not be signed", "endpoint", e.ID.String(), "error", err.Error())
			save(ctx)
			return false
		}
		pending = append(pending, a)
		now := d.now().UTC()
		if a.Outcome == webhook.Delivered {
			e.Position, e.Failures, e.FailingSince, e.NextAttempt, moved = c.Position, 0, nil, now, true
			if len(pending) >= saveEvery || time.Since(saved) >= saveAfter {
				if !save(ctx) {
					return false
				}
			}
			continue
		}
		if a.Outcome == webhook.Gone {
			d.disable(e, "the receiver answered 410 Gone")
		} else {
			e.Failures++
			if e.FailingSince == nil {
				e.FailingSince = &now
			}
			e.NextAttempt = now.Add(d.scaled(webhook.NextDelay(e.Failures-1, res.RetryAfter)))
			if now.Sub(*e.FailingSince) >= d.scaled(webhook.DisableAfter) {
				d.disable(e, "failing since "+e.FailingSince.Format(time.RFC3339))
			}
		}
		if save(ctx) && !e.Enabled {
			d.tell(ctx, *e, now)
		}
		return false
	}
	return save(ctx)
}

// send makes one attempt at c.
func (d *Dispatcher) send(ctx context.Context, e webhook.Endpoint, c webhook.Change) (webhook.Attempt, ports.DeliveryResult, error) {
	body, err := c.Body()
	if err != nil {
		return webhook.Attempt{}, ports.DeliveryResult{}, err
	}
	now := d.now()
	var secrets []webhook.Secret
	for _, sealed := range e.Secrets(now) {
		s, err := d.keys.Open(e.ID, sealed)
		if err != nil {
			return webhook.Attempt{}, ports.DeliveryResult{}, err
		}
		secrets = append(secrets, s)
	}
	id := c.MessageID(e.ID)
	h, err := webhook.Sign(id, now, body, secrets...)
	if err != nil {
		return webhook.Attempt{}, ports.DeliveryResult{}, err
	}
	start := time.Now()
	res := d.out.Deliver(ctx, ports.Delivery{URL: e.URL, Headers: h, Body: body})
	a := webhook.Attempt{ID: uuid.Must(uuid.NewV7()), Endpoint: e.ID, MessageID: id, Type: c.Type(), Position: c.Position,
		At: now.UTC(), Status: res.Status, Duration: time.Since(start), Outcome: webhook.OutcomeOf(res.Status)}
	if res.Err != nil {
		a.Error = res.Err.Error()
	}
	return a, res, nil
}

// disable stops e; tell says so once it is stored.
func (d *Dispatcher) disable(e *webhook.Endpoint, reason string) {
	e.Enabled, e.DisabledReason = false, reason
}

// tell tells e's company that the dispatcher disabled e: in the log, and
// as an event of its audit trail.
func (d *Dispatcher) tell(ctx context.Context, e webhook.Endpoint, now time.Time) {
	d.log.Warn("webhooks: endpoint disabled", "company", e.Company.String(), "endpoint", e.ID.String(), "reason", e.DisabledReason)
	if d.auditor == nil {
		return
	}
	ev := audit.New(now)
	ev.Agent = audit.Agent{Type: audit.AgentSystem, ID: "webhooks", Name: "webhook dispatcher"}
	ev.Action, ev.Section, ev.ObjectID = audit.ActionUpdate, "webhook-endpoints", e.ID.String()
	ev.Outcome = audit.Outcome{Status: domain.OutcomeOK.Status(), Reason: "endpoint disabled: " + e.DisabledReason}
	if err := d.auditor.Record(ctx, e.Company, ev); err != nil && !errors.Is(err, context.Canceled) {
		d.log.Error("webhooks: the audit event of a disabled endpoint could not be written", "endpoint", e.ID.String(), "error", err.Error())
	}
}

func (d *Dispatcher) scaled(t time.Duration) time.Duration {
	return time.Duration(float64(t) * d.s.TimeScale)
}

// SweepDeliveries drops delivery-log entries older than webhook.LogRetention.
func (d *Dispatcher) SweepDeliveries(ctx context.Context) (int64, error) {
	return d.store.SweepDeliveries(ctx, d.now().Add(-webhook.LogRetention))
}
