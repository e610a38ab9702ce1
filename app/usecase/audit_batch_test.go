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
	event := func(id string) audit.Event {
		e := audit.New(time.Now())
		e.ID, e.Action, e.Outcome.Status = id, audit.ActionRead, 200
		return e
	}
	held := make(chan error, 1)
	go func() { held <- a.Record(context.Background(), companies[0], event("held")) }()
	<-log.entered

	const perCompany = 20
	var wg sync.WaitGroup
	errs := make([][]error, len(companies))
	for c := range companies {
		errs[c] = make([]error, perCompany)
		wg.Go(func() { // one client per company, its requests one after another
			for i := range perCompany {
				errs[c][i] = a.Record(context.Background(), companies[c], event(fmt.Sprintf("%d-%02d", c, i)))
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
