package porttest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// AuditRepositories is what the audit suite needs of an adapter, and two
// ways to tamper with what it stored, as someone with the database's
// password could.
type AuditRepositories struct {
	Repositories
	Audit ports.AuditLog
	// Replica is another log on the same store, as another process has it.
	Replica ports.AuditLog
	// Corrupt flips one byte of the stored payload of company's event seq,
	// appended alone.
	Corrupt func(t *testing.T, company domain.CompanyID, seq int64)
	// Remove deletes company's event seq, appended alone.
	Remove func(t *testing.T, company domain.CompanyID, seq int64)
}

// Verify walks company's chain and answers the first broken link.
func Verify(ctx context.Context, log ports.AuditLog, company domain.CompanyID) (int64, error) {
	from, head, err := log.Chain(ctx, company)
	if err != nil {
		return 0, err
	}
	return audit.Verify(company, from, head, func(fn func(audit.Sealed) error) error { return log.Walk(ctx, company, head.Seq, fn) })
}

// RunAuditLogSuite checks an audit log adapter against the port's contract.
func RunAuditLogSuite(t *testing.T, newRepos func(t *testing.T) AuditRepositories) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, r AuditRepositories)
	}{
		{"events are answered by customer, agent and time, in pages; another company sees none", auditQueries},
		{"a customer's events are found among thousands, across appends of a hundred, from two processes", auditLongChain},
		{"an event cannot name another company's customer", auditForeignCustomer},
		{"the chain verifies; one changed byte and one deleted event are found", auditTamper},
		{"16 concurrent appenders make one unbroken chain", auditConcurrent},
		{"appends outside a transaction, from two processes and beside appends in one, make one unbroken chain", auditTwoProcesses},
		{"a sweep removes old events and leaves a chain that verifies from its checkpoint", auditSweep},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newRepos(t))
		})
	}
}

func auditEvent(at time.Time, agent string, customers ...domain.CustomerID) audit.Event {
	e := audit.New(at)
	e.Agent = audit.Agent{Type: audit.AgentClient, ID: agent, Name: "Kalender"}
	e.Action, e.Section, e.Outcome = audit.ActionRead, "customers", audit.Outcome{Status: 200}
	e.CustomerIDs = customers
	return e
}

func appendEvents(t *testing.T, r AuditRepositories, company domain.CompanyID, events ...audit.Event) {
	t.Helper()
	if err := r.Tx.InTx(context.Background(), func(ctx context.Context) error { return r.Audit.Append(ctx, company, events) }); err != nil {
		t.Fatal(err)
	}
}

// AuditEventIDs pages through log's answer to q and answers the ids of its
// events in order.
func AuditEventIDs(t *testing.T, log ports.AuditLog, company domain.CompanyID, q audit.Query) []string {
	t.Helper()
	var ids []string
	for {
		page, err := log.List(context.Background(), company, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page.Events {
			var e audit.Event
			if err := json.Unmarshal(p, &e); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
		}
		if !page.HasMore {
			return ids
		}
		q.After = page.Last
	}
}

func auditQueries(t *testing.T, r AuditRepositories) {
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	anna, bert := NewCustomer(t, r.Repositories, a.ID, 0).ID, NewCustomer(t, r.Repositories, a.ID, 0).ID
	day := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	e1 := auditEvent(day, "pc_one", anna)
	e2 := auditEvent(day.Add(time.Hour), "pc_two", anna, bert, anna)
	e3 := auditEvent(day.Add(2*time.Hour), "pc_one")
	appendEvents(t, r, a.ID, e1, e2)
	appendEvents(t, r, a.ID, e3)
	for name, tc := range map[string]struct {
		q    audit.Query
		want []string
	}{
		"all, two a page": {audit.Query{Limit: 2}, []string{e1.ID, e2.ID, e3.ID}},
		"anna":            {audit.Query{Customer: &anna, Limit: 1}, []string{e1.ID, e2.ID}},
		"bert":            {audit.Query{Customer: &bert, Limit: 10}, []string{e2.ID}},
		"agent":           {audit.Query{Agent: "pc_one", Limit: 10}, []string{e1.ID, e3.ID}},
		"from, to":        {audit.Query{From: new(day.Add(time.Minute)), To: new(day.Add(2 * time.Hour)), Limit: 10}, []string{e2.ID}},
	} {
		if got := AuditEventIDs(t, r.Audit, a.ID, tc.q); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	if got := AuditEventIDs(t, r.Audit, b.ID, audit.Query{Limit: 10}); len(got) != 0 {
		t.Errorf("company B lists %v", got)
	}
	if got := AuditEventIDs(t, r.Audit, b.ID, audit.Query{Customer: &anna, Limit: 10}); len(got) != 0 {
		t.Errorf("company B lists A's customer's events: %v", got)
	}
	page, err := r.Audit.List(context.Background(), a.ID, audit.Query{Customer: &anna, Limit: 10})
	if err != nil || len(page.Events) != 2 {
		t.Fatal(err)
	}
	var stored audit.Event
	if err := json.Unmarshal(page.Events[1], &stored); err != nil {
		t.Fatal(err)
	}
	if len(stored.CustomerIDs) != 2 || stored.CustomerIDs[0] != min(anna, bert) || stored.Time != e2.Time || stored.Agent != e2.Agent {
		t.Errorf("stored %+v, want %+v with its customers once, sorted", stored, e2)
	}
	if n, err := Verify(context.Background(), r.Audit, a.ID); err != nil || n != 3 {
		t.Errorf("verify: %d events, %v", n, err)
	}
}

func auditLongChain(t *testing.T, r AuditRepositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	anna, bert := NewCustomer(t, r.Repositories, a.ID, 0).ID, NewCustomer(t, r.Repositories, a.ID, 0).ID
	start := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	// 30 appends of 100 events; every event reaches bert, those of four
	// appends anna too (the 11th and 12th are seqs 1001..1200). The appends
	// alternate between two processes; every fifth is inside a transaction.
	var all, annas []string
	for block := range 30 {
		reachesAnna := block == 0 || block == 10 || block == 11 || block == 25
		events := make([]audit.Event, 100)
		for i := range events {
			at := start.Add(time.Duration(block*100+i) * time.Second)
			if reachesAnna {
				events[i] = auditEvent(at, "pc_one", bert, anna)
				annas = append(annas, events[i].ID)
			} else {
				events[i] = auditEvent(at, "pc_two", bert)
			}
			all = append(all, events[i].ID)
		}
		var err error
		switch {
		case block%5 == 4:
			err = r.Tx.InTx(ctx, func(ctx context.Context) error { return r.Audit.Append(ctx, a.ID, events) })
		case block%2 == 0:
			err = r.Audit.Append(ctx, a.ID, events)
		default:
			err = r.Replica.Append(ctx, a.ID, events)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, limit := range []int{7, 100, 1000} {
		if got := AuditEventIDs(t, r.Audit, a.ID, audit.Query{Customer: &anna, Limit: limit}); strings.Join(got, ",") != strings.Join(annas, ",") {
			t.Errorf("anna's events, %d a page: %d of them, want %d, in order", limit, len(got), len(annas))
		}
	}
	if got := AuditEventIDs(t, r.Audit, a.ID, audit.Query{Customer: &bert, Limit: 450}); strings.Join(got, ",") != strings.Join(all, ",") {
		t.Errorf("bert's events: %d of them, want %d, in order", len(got), len(all))
	}
	// The 12th append's events in its second half, by time.
	from, to := start.Add(1150*time.Second), start.Add(1250*time.Second)
	if got := AuditEventIDs(t, r.Audit, a.ID, audit.Query{Customer: &anna, From: &from, To: &to, Limit: 10}); strings.Join(got, ",") != strings.Join(annas[250:300], ",") {
		t.Errorf("anna's events from %v to %v: %d of them, want 50", from, to, len(got))
	}
	if got := AuditEventIDs(t, r.Audit, b.ID, audit.Query{Customer: &anna, Limit: 10}); len(got) != 0 {
		t.Errorf("company B lists A's customer's events: %d", len(got))
	}
	if n, err := Verify(ctx, r.Audit, a.ID); err != nil || n != 3000 {
		t.Errorf("verify: %d events, %v", n, err)
	}
}

func auditForeignCustomer(t *testing.T, r AuditRepositories) {
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	theirs := NewCustomer(t, r.Repositories, b.ID, 0).ID
	err := r.Tx.InTx(context.Background(), func(ctx context.Context) error {
		return r.Audit.Append(ctx, a.ID, []audit.Event{auditEvent(time.Now(), "pc_one", theirs)})
	})
	if err == nil {
		t.Fatal("an event of company A naming company B's customer was stored")
	}
	if n, err := Verify(context.Background(), r.Audit, a.ID); err != nil || n != 0 {
		t.Errorf("after the refused append: %d events, %v", n, err)
	}
}

func auditTamper(t *testing.T, r AuditRepositories) {
	ctx := context.Background()
	for _, tamper := range []struct {
		name   string
		do     func(t *testing.T, company domain.CompanyID, seq int64)
		broken string
	}{
		{"one changed byte", r.Corrupt, "event 3 was changed"},
		{"one deleted event", r.Remove, "1 event(s) are missing"},
	} {
		c, _ := NewCompany(t, r.Repositories, "C", 10)
		for i := range 5 {
			appendEvents(t, r, c.ID, auditEvent(time.Now().Add(time.Duration(i)*time.Second), "pc_one"))
		}
		if n, err := Verify(ctx, r.Audit, c.ID); err != nil || n != 5 {
			t.Fatalf("%s: before: %d, %v", tamper.name, n, err)
		}
		tamper.do(t, c.ID, 3)
		if _, err := Verify(ctx, r.Audit, c.ID); err == nil || !strings.Contains(err.Error(), tamper.broken) {
			t.Errorf("%s: verify says %v, want %q", tamper.name, err, tamper.broken)
		}
	}
	// The last event deleted: the head still names it.
	c, _ := NewCompany(t, r.Repositories, "D", 10)
	appendEvents(t, r, c.ID, auditEvent(time.Now(), "pc_one"))
	appendEvents(t, r, c.ID, auditEvent(time.Now(), "pc_one"))
	r.Remove(t, c.ID, 2)
	if _, err := Verify(ctx, r.Audit, c.ID); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("the newest event deleted: verify says %v", err)
	}
}

func auditConcurrent(t *testing.T, r AuditRepositories) {
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	var wg sync.WaitGroup
	for i := range 16 {
		company := a.ID
		if i%4 == 0 {
			company = b.ID
		}
		wg.Go(func() {
			for range 10 {
				if err := r.Tx.InTx(context.Background(), func(ctx context.Context) error {
					return r.Audit.Append(ctx, company, []audit.Event{auditEvent(time.Now(), "pc_one"), auditEvent(time.Now(), "pc_two")})
				}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for company, want := range map[domain.CompanyID]int64{a.ID: 12 * 10 * 2, b.ID: 4 * 10 * 2} {
		if n, err := Verify(context.Background(), r.Audit, company); err != nil || n != want {
			t.Errorf("verify: %d events, %v; want %d", n, err, want)
		}
	}
}

func auditTwoProcesses(t *testing.T, r AuditRepositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	anna := NewCustomer(t, r.Repositories, a.ID, 0).ID
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			for range 10 {
				events := []audit.Event{auditEvent(time.Now(), "pc_one", anna), auditEvent(time.Now(), "pc_two")}
				var err error
				switch i % 3 {
				case 0:
					err = r.Audit.Append(ctx, a.ID, events)
				case 1:
					err = r.Replica.Append(ctx, a.ID, events)
				default:
					err = r.Tx.InTx(ctx, func(ctx context.Context) error { return r.Audit.Append(ctx, a.ID, events) })
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n, err := Verify(ctx, r.Audit, a.ID); err != nil || n != 12*10*2 {
		t.Errorf("verify: %d events, %v; want %d", n, err, 12*10*2)
	}
	if got := AuditEventIDs(t, r.Audit, a.ID, audit.Query{Customer: &anna, Limit: 50}); len(got) != 12*10 {
		t.Errorf("events naming the customer: %d, want %d", len(got), 12*10)
	}
	// Outside a transaction an event naming another company's customer is
	// refused whole, like inside one.
	b, _ := NewCompany(t, r.Repositories, "B", 10)
	if err := r.Audit.Append(ctx, b.ID, []audit.Event{auditEvent(time.Now(), "pc_one", anna)}); err == nil {
		t.Error("an event of B naming A's customer was stored")
	}
	if n, err := Verify(ctx, r.Audit, b.ID); err != nil || n != 0 {
		t.Errorf("B's chain after the refusal: %d events, %v", n, err)
	}
}

func auditSweep(t *testing.T, r AuditRepositories) {
	ctx := context.Background()
	a, _ := NewCompany(t, r.Repositories, "A", 10)
	anna := NewCustomer(t, r.Repositories, a.ID, 0).ID
	old := time.Now().Add(-4 * 365 * 24 * time.Hour)
	appendEvents(t, r, a.ID, auditEvent(old, "pc_one", anna), auditEvent(old.Add(time.Hour), "pc_one", anna))
	recent := auditEvent(time.Now(), "pc_one", anna)
	appendEvents(t, r, a.ID, recent)
	n, err := r.Audit.Sweep(ctx, a.ID, time.Now().Add(-3*365*24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("sweep: %d, %v; want 2", n, err)
	}
	if got := AuditEventIDs(t, r.Audit, a.ID, audit.Query{Customer: &anna, Limit: 10}); len(got) != 1 || got[0] != recent.ID {
		t.Errorf("after the sweep: %v, want only the recent event", got)
	}
	appendEvents(t, r, a.ID, auditEvent(time.Now(), "pc_one"))
	if n, err := Verify(ctx, r.Audit, a.ID); err != nil || n != 2 {
		t.Errorf("verify from the checkpoint: %d, %v", n, err)
	}
	if n, err := r.Audit.Sweep(ctx, a.ID, old); err != nil || n != 0 {
		t.Errorf("a sweep with nothing old: %d, %v", n, err)
	}
}
