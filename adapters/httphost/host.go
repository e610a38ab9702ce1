// Package httphost is the HTTP server every door is mounted on: the fiber
// app, its limits and timeouts, and what runs before any door — the
// request's span, duration and access line (observe), the security
// headers, the request deadline — and the doors' routes after. It names
// no door's paths: a door marks its own routes (httpkit.Streaming,
// httpkit.Longer) and answers its own errors; the error handler the host
// is given answers what a door lets through.
package httphost

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
)

// Options are the host's: its telemetry, every request's deadline
// (PRAXIS_REQUEST_TIMEOUT), the handler of an error no door answered, and
// handlers that run before every door (the API's lifecycle headers).
type Options struct {
	Telemetry    httpkit.Telemetry
	Timeout      time.Duration
	ErrorHandler fiber.ErrorHandler
	Before       []fiber.Handler
}

// DefaultRequestTimeout is PRAXIS_REQUEST_TIMEOUT's default.
const DefaultRequestTimeout = 10 * time.Second

// New builds the fiber app with every door's routes.
func New(o Options, routes ...httpkit.Route) *fiber.App {
	if o.Timeout == 0 {
		o.Timeout = DefaultRequestTimeout
	}
	app := fiber.New(fiber.Config{
		AppName:               "praxis",
		DisableStartupMessage: true,
		ErrorHandler:          o.ErrorHandler,
		// Upload bodies are read as a stream in the handler: fasthttp then
		// buffers at most 8 KiB of a body, and never parses multipart itself.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		BodyLimit:                    httpkit.SmallBodyLimit,
		// Room for long header lines (proxies, trace context) without letting
		// a client make the server buffer an absurd header block.
		ReadBufferSize: 16 << 10,
		// A whole request, body included, must arrive within ReadTimeout:
		// 20 files of 15 MiB at 1 MB/s still fit.
		ReadTimeout:  10 * time.Minute,
		WriteTimeout: time.Minute,
		IdleTimeout:  2 * time.Minute,
	})
	app.Use(observe(o.Telemetry))
	// Every door's answers: no sniffing, no referrer, no framing.
	app.Use(httpkit.SecurityHeaders)
	app.Use(httpkit.Deadline(o.Timeout))
	for _, h := range o.Before {
		app.Use(h)
	}
	for _, r := range routes {
		r.Register(app)
	}
	return app
}
