package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/praxis-health/praxis/adapters/httpapi"
	"github.com/praxis-health/praxis/adapters/httpkit"
)

// panicking is a route planted to panic, as a bug in any handler would.
type panicking struct{}

func (panicking) Register(r fiber.Router) {
	r.Get("/boom", func(c *fiber.Ctx) error {
		var visits []int
		return c.SendString(strconv.Itoa(visits[len(c.Path())])) // out of range: a runtime error
	})
	r.Get("/boom-value", func(*fiber.Ctx) error { panic("Anna Berger, 1980-02-29") })
	r.Get("/fine", func(c *fiber.Ctx) error { return c.SendString("ok") })
}

// TestPanicIsA500WithTheTraceID: a panicking handler answers 500
// problem+json carrying the trace id, its stack is logged (without a
// panic value that could hold request data), and the server serves on.
func TestPanicIsA500WithTheTraceID(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	tel := httpkit.Telemetry{Tracer: sdktrace.NewTracerProvider(), Propagator: propagation.TraceContext{},
		Logger: slog.New(slog.NewJSONHandler(&logged, nil))}
	app := httpapi.Hosted(tel, nil, panicking{})
	for _, path := range []string{"/boom", "/boom-value"} {
		resp, err := app.Test(httptest.NewRequest("GET", path, nil))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		var p map[string]any
		if err := json.Unmarshal(raw, &p); err != nil || resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s: %d %s %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
		}
		traceID, _ := p["trace_id"].(string)
		if p["type"] != "internal-error" || len(traceID) != 32 || !strings.Contains(resp.Header.Get("traceparent"), traceID) {
			t.Errorf("%s: %s (traceparent %q)", path, raw, resp.Header.Get("traceparent"))
		}
	}
	if resp, err := app.Test(httptest.NewRequest("GET", "/fine", nil)); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the panics: %v %v", resp, err)
	}
	log := logged.String()
	if strings.Count(log, `"msg":"panic"`) != 2 || !strings.Contains(log, "index out of range") || !strings.Contains(log, "recover_test.go") {
		t.Errorf("the panics and their stacks are not logged:\n%s", log)
	}
	if strings.Contains(log, "Anna Berger") {
		t.Errorf("a panic value reached the log:\n%s", log)
	}
}
