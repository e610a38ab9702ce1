package httpapi

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/ports"
)

// Health serves the Kubernetes probes.
type Health struct {
	checks   []ports.HealthCheck
	draining atomic.Bool
}

// Drain turns /readyz to 503 for good: the process is shutting down and
// wants no new requests; /livez stays 200 while in-flight ones finish.
func (h *Health) Drain() { h.draining.Store(true) }

// NewHealth asks each check on /readyz.
func NewHealth(checks []ports.HealthCheck) *Health { return &Health{checks: checks} }

func (h *Health) Register(app fiber.Router) {
	app.Get("/livez", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"status": "ok"})
	})
	app.Get("/readyz", h.ready)
}

// ready answers 503 naming each failing dependency; the reasons go to the log only.
func (h *Health) ready(c *fiber.Ctx) error {
	if h.draining.Load() {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "shutting_down", "checks": fiber.Map{}})
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	status, results := fiber.StatusOK, fiber.Map{}
	for _, check := range h.checks {
		if err := check.Check(ctx); err != nil {
			slog.WarnContext(ctx, "readiness check failed", "check", check.Name(), "error", err.Error())
			results[check.Name()] = "unavailable"
			status = fiber.StatusServiceUnavailable
			continue
		}
		results[check.Name()] = "ok"
	}
	state := "ok"
	if status != fiber.StatusOK {
		state = "unavailable"
	}
	return c.Status(status).JSON(fiber.Map{"status": state, "checks": results})
}
