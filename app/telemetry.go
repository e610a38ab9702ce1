package app

import (
	"context"
	"io"
	"log/slog"
	"os"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/fx"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/adapters/telemetry"
)

// Version is the service.version of traces; set at build time with
// -ldflags "-X github.com/praxis-health/praxis/app.Version=…".
var Version = "dev"

// LogOutput is where the server's JSON log lines go (stdout unless a test supplies one).
type LogOutput struct{ io.Writer }

type telemetryIn struct {
	fx.In
	Config   Config
	Exporter sdktrace.SpanExporter `optional:"true"`
	Output   *LogOutput            `optional:"true"`
}

type telemetryOut struct {
	fx.Out
	Telemetry *telemetry.Telemetry
	HTTP      httpkit.Telemetry
	Logger    *slog.Logger
}

// Telemetry configures traces and metrics from the OTEL_* environment (or an
// exporter a test supplies), the JSON logger, and flushes spans on stop:
// its stop hook runs after the HTTP server has drained, since everything
// that is stopped earlier depends on it.
var Telemetry = fx.Module("telemetry",
	fx.Provide(newTelemetry),
	fx.Invoke(func(l *slog.Logger) { slog.SetDefault(l) }),
)

// NoTelemetry is for the admin commands: nothing recorded, warnings to stderr.
var NoTelemetry = fx.Module("telemetry", fx.Provide(func() telemetryOut {
	logger := telemetry.NewLogger(os.Stderr, slog.LevelWarn)
	return telemetryOut{Telemetry: telemetry.Noop(), HTTP: httpkit.Telemetry{Logger: logger}, Logger: logger}
}))

func newTelemetry(lc fx.Lifecycle, in telemetryIn) (telemetryOut, error) {
	tel, err := telemetry.New(context.Background(), telemetry.Options{Exporter: in.Exporter, Version: Version})
	if err != nil {
		return telemetryOut{}, err
	}
	lc.Append(fx.StopHook(tel.Shutdown))
	var out io.Writer = os.Stdout
	if in.Output != nil {
		out = in.Output
	}
	logger := telemetry.NewLogger(out, in.Config.LogLevel)
	return telemetryOut{
		Telemetry: tel,
		HTTP:      httpkit.Telemetry{Tracer: tel.Tracer, Meter: tel.Meter, Propagator: tel.Propagator, Logger: logger},
		Logger:    logger,
	}, nil
}
