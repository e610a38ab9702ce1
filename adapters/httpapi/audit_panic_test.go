package httpapi

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
)

// recordingAuditor keeps what the door records, and counts the requests
// it announced and ended.
type recordingAuditor struct {
	mu              sync.Mutex
	events          []audit.Event
	expected, ended int
}

func (r *recordingAuditor) Expect(ctx context.Context) (context.Context, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expected++
	return ctx, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ended++
	}
}

func (r *recordingAuditor) Record(_ context.Context, _ domain.CompanyID, e audit.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return nil
}

func (r *recordingAuditor) List(context.Context, domain.Grant, audit.Query) (audit.Page, error) {
	return audit.Page{}, nil
}

// panickingSection reads a patient's record and panics, as a bug would.
type panickingSection struct{ door httpkit.AuditDoor }

func (p panickingSection) Register(r fiber.Router) {
	describe := func(*fiber.Ctx) (httpkit.Subject, bool) {
		return httpkit.Subject{Company: domain.CompanyID(uuid.New()), Agent: audit.Agent{Type: audit.AgentClient, ID: "pc_x"}, Section: "notes", Action: audit.ActionRead}, true
	}
	r.Get("/notes/:id", p.door.Audited(describe), func(c *fiber.Ctx) error {
		audit.Touch(c.UserContext(), 1042)
		var none []int
		return c.SendString(string(rune(none[len(c.Params("id"))])))
	})
}

// TestAPanickingRequestIsAnEvent: the answer is the 500 of telemetry.go,
// and the access it made before it panicked is recorded with its customers;
// the request the door announced to the group commit is ended.
func TestAPanickingRequestIsAnEvent(t *testing.T) {
	t.Parallel()
	rec := &recordingAuditor{}
	app := Hosted(httpkit.Telemetry{}, nil, panickingSection{door: newAuditDoor(rec, nil, httpkit.Telemetry{})})
	resp, err := app.Test(httptest.NewRequest("GET", "/notes/abc", nil))
	if err != nil || resp.StatusCode != 500 {
		t.Fatalf("%v %v", resp, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.events) != 1 || rec.events[0].Outcome.Status != 500 || rec.events[0].Outcome.Reason != "panic" ||
		rec.events[0].Section != "notes" || len(rec.events[0].CustomerIDs) != 1 || rec.events[0].CustomerIDs[0] != 1042 {
		t.Errorf("events: %+v", rec.events)
	}
	if rec.expected != 1 || rec.ended != 1 { // a group commit would otherwise wait for it
		t.Errorf("the door announced %d requests and ended %d, want 1 and 1", rec.expected, rec.ended)
	}
}
