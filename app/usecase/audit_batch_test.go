package usecase_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// recordingLog keeps what each company's appends held, refuses one
// company's, and holds the first append back until released, so that the
// requests behind it queue up into one batch of several companies.
type recordingLog struct {
	ports.AuditLog
	failing domain.CompanyID
	entered chan struct{} // closed when the first append begins
	release chan struct{}
	mu      sync.Mutex
	calls   int
	got     map[domain.CompanyID][]string // event ids, in the order appended
}

func (l *recordingLog) Append(_ context.Context, company domain.CompanyID, events []audit.Event) error {
	l.mu.Lock()
	l.calls++
	first := l.calls == 1
	l.mu.Unlock()
	if first {
		close(l.entered)
		<-l.release
	}
	if company == l.failing {
		return errors.New("disk full")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range events {
		l.got[company] = append(l.got[company], e.ID)
	}
	return nil
}

// readEvent is a read's event, named id.
func readEvent(id string) audit.Event {
	e := audit.New(time.Now())
	e.ID, e.Action, e.Outcome.Status = id, audit.ActionRead, 200
	return e
}

// TestAuditorBatchesKeepCompaniesApart: events of three companies that
// arrive together are written to their own company's chain, each once and
// in the order each request sent its own; the company whose append fails
// has only its own requests refused (503's error), the others' answered.
func TestAuditorBatchesKeepCompaniesApart(t *testing.T) {
	t.Parallel()
	companies := []domain.CompanyID{domain.NewCompanyID(), domain.NewCompanyID(), domain.NewCompanyID()}
	log := &recordingLog{failing: companies[1], entered: make(chan struct{}), release: make(chan struct{}), got: map[domain.CompanyID][]string{}}
	a := usecase.NewAuditor(log, nil, nil, nil, nil, nil)
	a.Start()
	defer a.Stop()
	held := make(chan error, 1)
	go func() { held <- a.Record(context.Background(), companies[0], readEvent("held")) }()
	<-log.entered

	const perCompany = 20
	var wg sync.WaitGroup
	errs := make([][]error, len(companies))
	for c := range companies {
		errs[c] = make([]error, perCompany)
		wg.Go(func() { // one client per company, its requests one after another
			for i := range perCompany {
				errs[c][i] = a.Record(context.Background(), companies[c], readEvent(fmt.Sprintf("%d-%02d", c, i)))
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // let the first requests queue behind the held append (the checks hold however they batch)
	close(log.release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}

	for c, company := range companies {
		var want []string
		if c == 0 {
			want = append(want, "held")
		}
		for i := range perCompany {
			if c == 1 {
				if !errors.Is(errs[c][i], domain.ErrUnavailable) {
					t.Errorf("the failing company's request %d: %v, want unavailable", i, errs[c][i])
				}
				continue
			}
			if errs[c][i] != nil {
				t.Errorf("company %d, request %d: %v", c, i, errs[c][i])
			}
			want = append(want, fmt.Sprintf("%d-%02d", c, i))
		}
		if got := log.got[company]; !slices.Equal(got, want) {
			t.Errorf("company %d's chain got %v, want %v", c, got, want)
		}
	}
}

// batchLog keeps the events of each append, one slice per batch, and holds
// the first append back until released.
type batchLog struct {
	ports.AuditLog
	entered, release chan struct{}
	mu               sync.Mutex
	batches          [][]string
}

func (l *batchLog) Append(_ context.Context, _ domain.CompanyID, events []audit.Event) error {
	l.mu.Lock()
	first := len(l.batches) == 0
	var ids []string
	for _, e := range events {
		ids = append(ids, e.ID)
	}
	l.batches = append(l.batches, ids)
	l.mu.Unlock()
	if first {
		close(l.entered)
		<-l.release
	}
	return nil
}

func (l *batchLog) last() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.batches[len(l.batches)-1]
}

// TestAuditorWaitsOnlyForExpectedRequests: under load a batch waits for
// the requests the doors announced and is written the moment the last of
// them records its event or ends without one — never for the rest of its
// linger, which this test makes an hour long. With nobody announced, a
// batch waits for nothing.
func TestAuditorWaitsOnlyForExpectedRequests(t *testing.T) {
	t.Parallel()
	company := domain.NewCompanyID()
	log := &batchLog{entered: make(chan struct{}), release: make(chan struct{})}
	a := usecase.NewAuditor(log, nil, nil, nil, nil, nil)
	usecase.SetAuditLinger(a, time.Hour)
	var observed []int // the events of each batch, as ObserveBatches is told
	var mu sync.Mutex
	a.ObserveBatches(func(events int, oldest time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if oldest <= 0 {
			t.Errorf("a batch of %d whose oldest event waited %v", events, oldest)
		}
		observed = append(observed, events)
	})
	a.Start()
	defer a.Stop()
	record := func(ctx context.Context, id string) chan error {
		done := make(chan error, 1)
		go func() { done <- a.Record(ctx, company, readEvent(id)) }()
		return done
	}
	answered := func(what string, done chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: not answered within a minute: the batch waited for its linger", what)
		}
	}

	// Load: two requests queue behind a held append and make one batch,
	// so that the next batch lingers.
	held := record(context.Background(), "held")
	<-log.entered
	a1, a2 := record(context.Background(), "a1"), record(context.Background(), "a2")
	for usecase.AuditQueued(a) < 2 {
		time.Sleep(time.Millisecond)
	}
	close(log.release)
	answered("held", held)
	answered("a1", a1)
	answered("a2", a2)

	// Two announced requests: the first one's batch waits for the second.
	ctxB, endB := a.Expect(context.Background())
	ctxC, endC := a.Expect(context.Background())
	b := record(ctxB, "b")
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-b:
		t.Fatalf("b was answered (%v) while c, announced, had not recorded: its batch did not wait", err)
	default:
	}
	c := record(ctxC, "c")
	answered("b", b)
	answered("c", c)
	endB()
	endC()
	if got := log.last(); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("the lingering batch held %v, want [b c]", got)
	}

	// Announced requests that end without an event let the batch go.
	ctxD1, endD1 := a.Expect(context.Background())
	ctxD2, endD2 := a.Expect(context.Background())
	_, endE := a.Expect(context.Background())
	d1, d2 := record(ctxD1, "d1"), record(ctxD2, "d2")
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-d1:
		t.Fatalf("d1 was answered (%v) while e, announced, was under way: its batch did not wait", err)
	default:
	}
	endE()
	answered("d1", d1)
	answered("d2", d2)
	endD1()
	endD2()
	if got := slices.Sorted(slices.Values(log.last())); !slices.Equal(got, []string{"d1", "d2"}) {
		t.Fatalf("the batch held %v, want d1 and d2", got)
	}

	// Nobody announced: after that batch of two, one alone is written at once.
	answered("f", record(context.Background(), "f"))

	log.mu.Lock()
	defer log.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	want := make([]int, len(log.batches))
	for i, b := range log.batches {
		want[i] = len(b)
	}
	if !slices.Equal(observed, want) {
		t.Errorf("batches observed %v, written %v", observed, want)
	}
}
