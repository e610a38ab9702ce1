package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"sync"
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

// checkTimeout bounds each readiness check on its own: a frozen dependency
// makes only its own check fail, and /readyz answers within it.
const checkTimeout = time.Second

// ready answers 503 naming each failing dependency; the reasons go to the
// log only. The checks run at once, each under its own deadline.
func (h *Health) ready(c *fiber.Ctx) error {
	if h.draining.Load() {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "shutting_down", "checks": fiber.Map{}})
	}
	results := make([]string, len(h.checks))
	var wg sync.WaitGroup
	for i, check := range h.checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(c.UserContext(), checkTimeout)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- check.Check(ctx) }()
			var err error
			select { // a check that ignores its context still cannot hold the answer
			case err = <-done:
			case <-ctx.Done():
				err = ctx.Err()
			}
			switch {
			case err == nil:
				results[i] = "ok"
			case errors.Is(err, ports.ErrLowDisk):
				results[i] = "low_disk"
			default:
				results[i] = "unavailable"
			}
			if err != nil {
				slog.WarnContext(ctx, "readiness check failed", "check", check.Name(), "error", err.Error())
			}
		})
	}
	wg.Wait()
	status, state, checks := fiber.StatusOK, "ok", fiber.Map{}
	for i, check := range h.checks {
		checks[check.Name()] = results[i]
		if results[i] != "ok" {
			status, state = fiber.StatusServiceUnavailable, "unavailable"
		}
	}
	return c.Status(status).JSON(fiber.Map{"status": state, "checks": checks})
}
