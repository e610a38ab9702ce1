package porttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// WebhookRepositories is what the webhook suite needs of an adapter.
type WebhookRepositories struct {
	Repositories
	Records   ports.RecordStore
	Endpoints ports.WebhookEndpoints
	Feed      ports.ChangeFeed
}

// RunWebhookSuite checks the endpoints' store and the change feed against
// the ports' contract (docs/contract.md §12).
func RunWebhookSuite(t *testing.T, newRepos func(t *testing.T) WebhookRepositories) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, r WebhookRepositories)
	}{
		{"an endpoint is its company's alone; at most 20 per company", webhookTenancy},
		{"one dispatcher holds an endpoint; a change by its owner refuses a stale advance", webhookLeases},
		{"the feed merges the sections in position order; a write moves its object to the end", webhookFeed},
		{"the delivery log pages newest first and is swept", webhookLog},
		{"the backlog counts every company's endpoints by state and finds the longest due", webhookBacklog},
	} {
		// One after another: a claim reaches every company's endpoints, so
		// cases sharing a database would take each other's.
		t.Run(c.name, func(t *testing.T) { c.run(t, newRepos(t)) })
	}
}

func newEndpoint(company domain.CompanyID) webhook.Endpoint {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return webhook.Endpoint{ID: uuid.Must(uuid.NewV7()), Company: company, URL: "https://integrator.example/hook",
		EventTypes: webhook.EventTypes{"*"}, Enabled: true, Secret: webhook.Sealed("sealed"), NextAttempt: now,
		Version: 1, CreatedAt: now, UpdatedAt: now}
}

func mustCreate(t *testing.T, r WebhookRepositories, e webhook.Endpoint) webhook.Endpoint {
	t.Helper()
	if err := r.Endpoints.Create(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return e
}

func webhookTenancy(t *testing.T, r WebhookRepositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	e := mustCreate(t, r, newEndpoint(a.ID))
	if got, err := r.Endpoints.Get(ctx, a.ID, e.ID); err != nil || got.URL != e.URL || string(got.Secret) != "sealed" || got.EventTypes[0] != "*" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if _, err := r.Endpoints.Get(ctx, b.ID, e.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's get: %v", err)
	}
	if list, err := r.Endpoints.List(ctx, b.ID); err != nil || len(list) != 0 {
		t.Errorf("another company's list: %d, %v", len(list), err)
	}
	if _, err := r.Endpoints.Change(ctx, b.ID, e.ID, func(e *webhook.Endpoint) error { e.URL = "https://evil.example/"; return nil }); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's change: %v", err)
	}
	if err := r.Endpoints.Delete(ctx, b.ID, e.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's delete: %v", err)
	}
	if _, err := r.Endpoints.Renew(ctx, webhook.Endpoint{ID: e.ID, Company: b.ID}, "x", time.Now()); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("a renewal naming another company: %v", err)
	}
	for range webhook.MaxEndpoints - 1 {
		mustCreate(t, r, newEndpoint(a.ID))
	}
	if err := r.Endpoints.Create(ctx, newEndpoint(a.ID)); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("endpoint %d: %v", webhook.MaxEndpoints+1, err)
	}
	mustCreate(t, r, newEndpoint(b.ID)) // B's own count
	if err := r.Endpoints.Delete(ctx, a.ID, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Endpoints.Get(ctx, a.ID, e.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
}

func webhookLeases(t *testing.T, r WebhookRepositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	e := mustCreate(t, r, newEndpoint(a.ID))
	now := time.Now()
	claimed, err := r.Endpoints.Claim(ctx, "one", now, time.Minute, 100)
	if err != nil || !slices.ContainsFunc(claimed, func(c webhook.Endpoint) bool { return c.ID == e.ID }) {
		t.Fatalf("claim: %d, %v", len(claimed), err)
	}
	if again, err := r.Endpoints.Claim(ctx, "two", now, time.Minute, 100); err != nil || slices.ContainsFunc(again, func(c webhook.Endpoint) bool { return c.ID == e.ID }) {
		t.Fatalf("a second dispatcher claims a held endpoint: %v", err)
	}
	if _, err := r.Endpoints.Renew(ctx, e, "two", now.Add(time.Minute)); !errors.Is(err, ports.ErrLeaseLost) {
		t.Errorf("renewal by another dispatcher: %v", err)
	}
	e.Position = webhook.Position{Change: 7, Section: "notes", ID: "x"}
	if err := r.Endpoints.Advance(ctx, e, "one", now.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Endpoints.Advance(ctx, e, "two", now.Add(time.Minute), nil); !errors.Is(err, ports.ErrLeaseLost) {
		t.Errorf("advance by another dispatcher: %v", err)
	}
	// Its owner replays: the dispatcher's position is stale and not stored;
	// the attempt it made is logged all the same.
	changed, err := r.Endpoints.Change(ctx, a.ID, e.ID, func(e *webhook.Endpoint) error { e.Position = webhook.Position{}; return nil })
	if err != nil || changed.Version != e.Version+1 {
		t.Fatalf("change: %+v, %v", changed, err)
	}
	stale := e
	stale.Position = webhook.Position{Change: 9}
	tried := webhook.Attempt{ID: uuid.Must(uuid.NewV7()), Endpoint: e.ID, MessageID: "msg_stale", Type: "notes.created", At: now, Status: 204,
		Outcome: webhook.Delivered}
	if err := r.Endpoints.Advance(ctx, stale, "one", now.Add(time.Minute), []webhook.Attempt{tried}); !errors.Is(err, ports.ErrEndpointChanged) {
		t.Errorf("a stale advance after the owner's change: %v", err)
	}
	if logged, _, err := r.Endpoints.Deliveries(ctx, a.ID, e.ID, uuid.Nil, 10); err != nil || len(logged) != 1 || logged[0].MessageID != "msg_stale" {
		t.Errorf("the stale advance's attempt: %+v, %v", logged, err)
	}
	current, err := r.Endpoints.Renew(ctx, e, "one", now.Add(time.Minute))
	if err != nil || current.Version != changed.Version || current.Position != (webhook.Position{}) {
		t.Fatalf("renew after the change: %+v, %v", current, err)
	}
	// A lease that ran out passes to another dispatcher; release gives it
	// up at once. (Claims reach every company: other cases' endpoints may
	// come along.)
	has := func(list []webhook.Endpoint, id uuid.UUID) bool {
		return slices.ContainsFunc(list, func(c webhook.Endpoint) bool { return c.ID == id })
	}
	taken, err := r.Endpoints.Claim(ctx, "two", now.Add(2*time.Minute), time.Minute, 100)
	if err != nil || !has(taken, e.ID) {
		t.Fatalf("claim after the lease ran out: %d, %v", len(taken), err)
	}
	if err := r.Endpoints.Release(ctx, e, "two"); err != nil {
		t.Fatal(err)
	}
	if back, err := r.Endpoints.Claim(ctx, "one", now.Add(2*time.Minute), time.Minute, 100); err != nil || !has(back, e.ID) {
		t.Errorf("claim after release: %d, %v", len(back), err)
	}
	// Not due, not enabled: not claimed.
	later := newEndpoint(a.ID)
	later.NextAttempt = now.Add(time.Hour)
	off := newEndpoint(a.ID)
	off.Enabled = false
	mustCreate(t, r, later)
	mustCreate(t, r, off)
	if got, err := r.Endpoints.Claim(ctx, "three", now.Add(2*time.Minute), time.Minute, 100); err != nil || has(got, later.ID) || has(got, off.ID) {
		t.Errorf("claimed an endpoint not due or disabled, %v", err)
	}
}

func webhookFeed(t *testing.T, r WebhookRepositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	start, err := r.Feed.Head(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	patient := NewCustomer(t, r.Repositories, a.ID, 0)
	NewCustomer(t, r.Repositories, b.ID, 0)
	notes := domain.KindOf("notes")
	var ids []string
	for range 3 {
		o, err := r.Records.Insert(ctx, a.ID, notes, ports.StoredObject{ID: domain.NewObjectID(), Customer: &patient.ID,
			Payload: []byte(`{"text":"x"}`), CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.ID)
	}
	all := func(from webhook.Position, want int) []webhook.Change {
		t.Helper()
		var out []webhook.Change
		deadline := time.Now().Add(10 * time.Second)
		for len(out) < want && time.Now().Before(deadline) { // PostgreSQL settles a change once older transactions end
			page, err := r.Feed.After(ctx, a.ID, from, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			out = append(out, page...)
			from = page[len(page)-1].Position
		}
		return out
	}
	got := all(start, 4)
	if len(got) != 4 || got[0].Section != "customers" || got[0].ID != fmt.Sprint(patient.ID) || !got[0].Created {
		t.Fatalf("feed: %+v", got)
	}
	for i, c := range got[1:] {
		if c.Section != "notes" || c.ID != ids[i] || !c.Created || c.CustomerID == nil || *c.CustomerID != patient.ID || c.Type() != "notes.created" {
			t.Errorf("entry %d: %+v", i+1, c)
		}
	}
	for i := 1; i < len(got); i++ {
		if !got[i-1].Less(got[i].Position) {
			t.Errorf("entries %d and %d out of order", i-1, i)
		}
	}
	// An update moves the first note to the end, a deletion the second.
	// The store reads a status from the payload (an appointment's
	// cancellation); the domain decides which section it means something in.
	if _, err := r.Records.Update(ctx, a.ID, notes, ids[0], []byte(`{"text":"y","status":"cancelled"}`), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := r.Records.Delete(ctx, a.ID, notes, ids[1], time.Now().Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	tail := all(got[len(got)-1].Position, 2)
	if len(tail) != 2 || tail[0].ID != ids[0] || tail[0].Type() != "notes.updated" || !tail[0].Cancelled || tail[1].ID != ids[1] ||
		tail[1].Type() != "notes.deleted" {
		t.Errorf("after an update and a deletion: %+v", tail)
	}
	moved := all(start, 4)
	if len(moved) != 4 || moved[1].ID != ids[2] {
		t.Errorf("the feed from the start after the writes: %+v", moved)
	}
	head, err := r.Feed.Head(ctx, a.ID)
	if err != nil || head.Less(tail[1].Position) {
		t.Errorf("head %+v before the last change %+v (%v)", head, tail[1].Position, err)
	}
	if rest, err := r.Feed.After(ctx, a.ID, head, 10); err != nil || len(rest) != 0 {
		t.Errorf("after the head: %d, %v", len(rest), err)
	}
	since, err := r.Feed.Since(ctx, a.ID, time.Now().Add(time.Second/2))
	if err != nil {
		t.Fatal(err)
	}
	if from := all(since, 2); len(from) != 2 || from[0].ID != ids[0] {
		t.Errorf("since a time: %+v", from)
	}
	// Another company's feed holds its own customer only.
	bStart := webhook.Position{}
	if theirs, err := r.Feed.After(ctx, b.ID, bStart, 100); err != nil || len(theirs) > 1 {
		t.Errorf("another company's feed: %+v, %v", theirs, err)
	}
}

func webhookLog(t *testing.T, r WebhookRepositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	e := mustCreate(t, r, newEndpoint(a.ID))
	now := time.Now()
	// Claimed as if hours later, past any lease the other cases hold, for
	// longer than they look ahead: none of them takes it.
	claimed, err := r.Endpoints.Claim(ctx, "log", now.Add(3*time.Hour), 10*time.Hour, 1000)
	if err != nil || !slices.ContainsFunc(claimed, func(c webhook.Endpoint) bool { return c.ID == e.ID }) {
		t.Fatalf("claim: %v", err)
	}
	var attempts []webhook.Attempt
	for i := range 5 {
		at := now.Add(time.Duration(i-4) * 20 * 24 * time.Hour) // 80, 60, 40, 20 and 0 days ago
		attempts = append(attempts, webhook.Attempt{ID: uuid.Must(uuid.NewV7()), Endpoint: e.ID, MessageID: "msg_" + string(rune('a'+i)),
			Type: "notes.created", Position: webhook.Position{Change: int64(i)}, At: at, Status: 503, Error: "", Duration: time.Millisecond,
			Outcome: webhook.Throttled})
	}
	if err := r.Endpoints.Advance(ctx, e, "log", now.Add(13*time.Hour), attempts); err != nil {
		t.Fatal(err)
	}
	page, more, err := r.Endpoints.Deliveries(ctx, a.ID, e.ID, uuid.Nil, 3)
	if err != nil || len(page) != 3 || !more || page[0].MessageID != "msg_e" || page[0].Outcome != webhook.Throttled || page[0].Status != 503 {
		t.Fatalf("first page: %+v, %v, %v", page, more, err)
	}
	rest, more, err := r.Endpoints.Deliveries(ctx, a.ID, e.ID, page[2].ID, 3)
	if err != nil || len(rest) != 2 || more || rest[1].MessageID != "msg_a" {
		t.Errorf("second page: %+v, %v, %v", rest, more, err)
	}
	if theirs, _, err := r.Endpoints.Deliveries(ctx, b.ID, e.ID, uuid.Nil, 10); err != nil || len(theirs) != 0 {
		t.Errorf("another company reads the log: %d, %v", len(theirs), err)
	}
	n, err := r.Endpoints.SweepDeliveries(ctx, now.Add(-webhook.LogRetention))
	if err != nil || n != 3 {
		t.Errorf("sweep: %d, %v", n, err)
	}
	if left, _, _ := r.Endpoints.Deliveries(ctx, a.ID, e.ID, uuid.Nil, 10); len(left) != 2 {
		t.Errorf("after the sweep: %d attempts", len(left))
	}
}

func webhookBacklog(t *testing.T, r WebhookRepositories) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	before, err := r.Endpoints.Backlog(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	waiting := newEndpoint(a.ID)
	waiting.NextAttempt = now.Add(-90 * 24 * time.Hour) // longer than any other case's
	mustCreate(t, r, waiting)
	later := newEndpoint(b.ID)
	later.NextAttempt = now.Add(time.Hour)
	mustCreate(t, r, later)
	failing := newEndpoint(b.ID)
	failing.Failures, failing.FailingSince, failing.NextAttempt = 3, &now, now.Add(time.Minute)
	mustCreate(t, r, failing)
	off := newEndpoint(a.ID)
	off.Enabled, off.DisabledReason = false, "the receiver answered 410 Gone"
	off.NextAttempt = now.Add(-365 * 24 * time.Hour) // disabled: never due
	mustCreate(t, r, off)

	after, err := r.Endpoints.Backlog(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Delivering - before.Delivering; d != 2 {
		t.Errorf("delivering: +%d, want +2", d)
	}
	if d := after.Failing - before.Failing; d != 1 {
		t.Errorf("failing: +%d, want +1", d)
	}
	if d := after.Disabled - before.Disabled; d != 1 {
		t.Errorf("disabled: +%d, want +1", d)
	}
	if !after.OldestDue.Equal(waiting.NextAttempt) {
		t.Errorf("oldest due %v, want %v (the enabled endpoint due longest)", after.OldestDue, waiting.NextAttempt)
	}
	// Delivered up to now: nothing of these is due any longer.
	if _, err := r.Endpoints.Change(ctx, a.ID, waiting.ID, func(e *webhook.Endpoint) error { e.NextAttempt = now.Add(time.Second); return nil }); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Endpoints.Backlog(ctx, now); err != nil || got.OldestDue.Equal(waiting.NextAttempt) || got.OldestDue.After(now) {
		t.Errorf("after delivery: oldest due %v, %v", got.OldestDue, err)
	}
}
