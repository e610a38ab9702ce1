package httpkit

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Route is what the host mounts: a door's set of handlers registered on
// the app (or, for a section of the resource API, on the group behind its
// bearer guard).
type Route interface {
	Register(r fiber.Router)
}

// Telemetry instruments the host and the doors' own counters; the zero
// value records nothing and logs nothing.
type Telemetry struct {
	Tracer     trace.TracerProvider
	Meter      metric.MeterProvider
	Propagator propagation.TextMapPropagator
	Logger     *slog.Logger
}

// WithDefaults fills what is unset with providers that record nothing and
// a logger that drops every line.
func (t Telemetry) WithDefaults() Telemetry {
	if t.Tracer == nil {
		t.Tracer = tracenoop.NewTracerProvider()
	}
	if t.Meter == nil {
		t.Meter = metricnoop.NewMeterProvider()
	}
	if t.Propagator == nil {
		t.Propagator = propagation.NewCompositeTextMapPropagator()
	}
	if t.Logger == nil {
		t.Logger = slog.New(slog.DiscardHandler)
	}
	return t
}

// Must panics on an instrument the SDK refuses: only a programming error
// (an invalid name) makes it do so.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// RouteOf names the matched route template, never the raw path: a request
// no route took (a 404, where the raw path could hold anything) is
// Unmatched. Below a group's guard it is the group's prefix.
func RouteOf(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && r.Path != "" && r.Path != "/" && len(r.Handlers) > 0 {
		return r.Path
	}
	return Unmatched
}

// Unmatched is the route of a request no route took.
const Unmatched = "unmatched"

// SmallBodyLimit bounds the bodies a door reads whole into memory
// (everything but uploads and files, which stream).
const SmallBodyLimit = 1 << 20
