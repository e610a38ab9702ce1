package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httphost"
	"github.com/praxis-health/praxis/adapters/httpkit"
)

// Hosted is the API's routes on the host as the server mounts them: the
// API's error handler answers what a route lets through, and life, when
// given, dates every answer.
func Hosted(tel httpkit.Telemetry, life *Lifecycle, routes ...httpkit.Route) *fiber.App {
	o := httphost.Options{Telemetry: tel, ErrorHandler: ErrorHandler}
	if life != nil {
		o.Before = []fiber.Handler{life.Handle}
	}
	return httphost.New(o, routes...)
}
