package httphost_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httphost"
	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/adapters/telemetry"
)

// livez answers GET /livez as the health route does, with nothing to check.
type livez struct{}

func (livez) Register(r fiber.Router) {
	r.Get("/livez", func(c *fiber.Ctx) error { return c.SendString("ok") })
}

// BenchmarkObserve: the cost per request of the host's telemetry
// middleware when no exporter is configured (spans never sampled, metrics
// and the access line still written) next to no telemetry at all, on
// GET /livez in process.
func BenchmarkObserve(b *testing.B) {
	tel, err := telemetry.New(context.Background(), telemetry.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	discard := telemetry.NewLogger(io.Discard, slog.LevelInfo) // the server's logger, its access line written by hand
	for _, tc := range []struct {
		name string
		tel  httpkit.Telemetry
	}{
		{"no telemetry", httpkit.Telemetry{Logger: slog.New(slog.DiscardHandler)}},
		{"sdk without exporter", httpkit.Telemetry{Tracer: tel.Tracer, Meter: tel.Meter, Propagator: tel.Propagator, Logger: discard}},
	} {
		handler := httphost.New(httphost.Options{Telemetry: tc.tel}, livez{}).Handler()
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var ctx fasthttp.RequestCtx
			for b.Loop() {
				ctx.ResetUserValues() // fasthttp does this between requests
				ctx.Request.Reset()
				ctx.Response.Reset()
				ctx.Request.Header.SetMethod("GET")
				ctx.Request.SetRequestURI("/livez")
				handler(&ctx)
			}
		})
	}
}
