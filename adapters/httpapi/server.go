// Package httpapi is praxis's HTTP interface on fiber: the upload endpoints,
// health probes and, later, the OAuth API. Handlers return errors; one
// ErrorHandler turns them into the response shape of the route's contract.
package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
)

// Route is the one registration interface: a set of handlers mounted on the
// app, or, for a section of the resource API, on the group behind the bearer guard.
type Route interface {
	Register(r fiber.Router)
}

// nonStreamingBodyLimit bounds bodies read whole into memory (everything but uploads).
const nonStreamingBodyLimit = 1 << 20

// New builds the fiber app with every route, observed by tel; life, when
// given, dates every answer (release, deprecations, removals).
func New(tel Telemetry, life *Lifecycle, routes ...Route) *fiber.App {
	return NewWithDeadline(tel, life, DefaultRequestTimeout, routes...)
}

// NewWithDeadline is New with every request's deadline (see deadline).
func NewWithDeadline(tel Telemetry, life *Lifecycle, timeout time.Duration, routes ...Route) *fiber.App {
	app := fiber.New(fiber.Config{
		AppName:               "praxis",
		DisableStartupMessage: true,
		ErrorHandler:          ErrorHandler,
		// Upload bodies are read as a stream in the handler: fasthttp then
		// buffers at most 8 KiB of a body, and never parses multipart itself.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		BodyLimit:                    nonStreamingBodyLimit,
		// Room for long header lines (proxies, trace context) without letting
		// a client make the server buffer an absurd header block.
		ReadBufferSize: 16 << 10,
		// A whole request, body included, must arrive within ReadTimeout:
		// 20 files of 15 MiB at 1 MB/s still fit.
		ReadTimeout:  10 * time.Minute,
		WriteTimeout: time.Minute,
		IdleTimeout:  2 * time.Minute,
	})
	app.Use(observe(tel))
	// Both doors' answers: no sniffing, no referrer, no framing.
	app.Use(httpkit.SecurityHeaders)
	app.Use(httpkit.Deadline(timeout))
	if life != nil {
		app.Use(life.handle)
	}
	for _, r := range routes {
		r.Register(app)
	}
	return app
}

// DefaultRequestTimeout is PRAXIS_REQUEST_TIMEOUT's default.
const DefaultRequestTimeout = 10 * time.Second
