package httpapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
)

// Metrics serves GET /metrics in the Prometheus text format.
type Metrics struct{ handler http.Handler }

// NewMetrics serves handler (the OpenTelemetry Prometheus exporter's registry).
func NewMetrics(handler http.Handler) *Metrics { return &Metrics{handler: handler} }

func (m *Metrics) Register(app fiber.Router) {
	app.Get("/metrics", adaptor.HTTPHandler(m.handler))
}
