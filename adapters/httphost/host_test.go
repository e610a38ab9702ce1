package httphost_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/praxis-health/praxis/adapters/httphost"
	"github.com/praxis-health/praxis/adapters/httpkit"
)

// door is a door's routes as the host mounts them.
type door func(r fiber.Router)

func (d door) Register(r fiber.Router) { d(r) }

var errDoor = errors.New("a door's error it did not answer")

// TestTheHostRunsBeforeEveryDoor: two doors on one host; each answer has
// the security headers, a server span named by its route template with the
// path's values redacted, and the trace's traceparent; an error a door lets
// through reaches the error handler the host was given, and so does a path
// no door took (fiber's 404), which is "unmatched" with its raw path never
// recorded.
func TestTheHostRunsBeforeEveryDoor(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewSpanRecorder()
	handled := 0
	app := httphost.New(httphost.Options{
		Telemetry: httpkit.Telemetry{Tracer: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), Propagator: propagation.TraceContext{}},
		ErrorHandler: func(c *fiber.Ctx, err error) error {
			handled++
			status, fe := fiber.StatusTeapot, (*fiber.Error)(nil)
			if errors.As(err, &fe) {
				status = fe.Code
			}
			return c.Status(status).SendString(err.Error())
		},
	},
		door(func(r fiber.Router) {
			r.Get("/api/patients/:id", func(c *fiber.Ctx) error { return c.SendString("a") })
		}),
		door(func(r fiber.Router) { r.Get("/fhir/Patient", func(*fiber.Ctx) error { return errDoor }) }),
	)
	for _, tc := range []struct {
		path, span, urlPath string
		status              int
	}{
		{"/api/patients/4711", "GET /api/patients/:id", "/api/patients/REDACTED", 200},
		{"/fhir/Patient", "GET /fhir/Patient", "/fhir/Patient", fiber.StatusTeapot},
		{"/anna-berger-1980", "GET unmatched", "/REDACTED", 404},
	} {
		resp, err := app.Test(httptest.NewRequest("GET", tc.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tc.status || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
			resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("traceparent") == "" {
			t.Errorf("%s: %d, headers %v", tc.path, resp.StatusCode, resp.Header)
		}
		ended := spans.Ended()
		span := ended[len(ended)-1]
		attrs := attribute.NewSet(span.Attributes()...)
		if got, _ := attrs.Value("url.path"); span.Name() != tc.span || got.AsString() != tc.urlPath {
			t.Errorf("%s: span %q url.path %q, want %q %q", tc.path, span.Name(), got.AsString(), tc.span, tc.urlPath)
		}
	}
	if handled != 2 {
		t.Errorf("the error handler ran %d times, want twice (the FHIR route's error, the unmatched path's 404)", handled)
	}
}
