// Package telemetry sets up OpenTelemetry for praxis: traces exported as the
// standard OTEL_* variables say (none when no exporter or endpoint is set),
// W3C trace-context propagation, metrics through the Prometheus exporter, and
// JSON logs that carry the trace and span ids of the request they belong to.
package telemetry

import (
	"context"
	"errors"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	promexporter "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Telemetry is what the adapters instrument themselves with.
type Telemetry struct {
	Tracer     trace.TracerProvider
	Meter      metric.MeterProvider
	Propagator propagation.TextMapPropagator
	// Metrics serves the Prometheus exposition of every instrument.
	Metrics http.Handler
	// Exporting reports whether spans leave the process.
	Exporting bool
	shutdown  []func(context.Context) error
}

// Options: Exporter replaces the exporter the environment names (tests pass
// an in-memory one); Version is the service.version resource attribute.
type Options struct {
	Exporter sdktrace.SpanExporter
	Version  string
}

// New configures traces and metrics from the environment.
//
// Spans are exported only when OTEL_TRACES_EXPORTER names an exporter other
// than "none", or an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; protocol from OTEL_EXPORTER_OTLP_PROTOCOL,
// http/protobuf or grpc). Otherwise spans are never sampled: requests still
// get trace and span ids for their log lines, and nothing is recorded.
func New(ctx context.Context, opts Options) (*Telemetry, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("praxis"), semconv.ServiceVersion(opts.Version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
		resource.WithHost(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, err
	}
	t := &Telemetry{Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}

	exporter := opts.Exporter
	if exporter == nil && exportConfigured() {
		if exporter, err = autoexport.NewSpanExporter(ctx); err != nil {
			return nil, err
		}
	}
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	switch {
	case opts.Exporter != nil:
		// Tests read spans as soon as a request ends.
		tpOpts = append(tpOpts, sdktrace.WithSyncer(exporter), sdktrace.WithSampler(sdktrace.AlwaysSample()))
		t.Exporting = true
	case exporter != nil:
		// The sampler comes from OTEL_TRACES_SAMPLER (default: parent-based, always on).
		tpOpts = append(tpOpts, sdktrace.WithBatcher(exporter))
		t.Exporting = true
	default:
		tpOpts = append(tpOpts, sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	tp := sdktrace.NewTracerProvider(tpOpts...)
	t.Tracer = tp
	t.shutdown = append(t.shutdown, tp.Shutdown)

	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	prom, err := promexporter.New(promexporter.WithRegisterer(registry), promexporter.WithoutScopeInfo())
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(prom), sdkmetric.WithResource(res))
	t.Meter = mp
	t.shutdown = append(t.shutdown, mp.Shutdown)
	t.Metrics = promhttp.HandlerFor(registry, promhttp.HandlerOpts{})

	// Libraries that look the providers up globally get the same ones.
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(t.Propagator)
	return t, nil
}

// Noop is telemetry that records nothing, for the admin commands.
func Noop() *Telemetry {
	return &Telemetry{
		Tracer:     tracenoop.NewTracerProvider(),
		Meter:      metricnoop.NewMeterProvider(),
		Propagator: propagation.NewCompositeTextMapPropagator(),
		Metrics:    http.NotFoundHandler(),
	}
}

// Shutdown flushes spans still in the batch and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

func exportConfigured() bool {
	if e := os.Getenv("OTEL_TRACES_EXPORTER"); e != "" {
		return e != "none"
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}
