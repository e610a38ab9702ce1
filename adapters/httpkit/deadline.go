package httpkit

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Deadline gives every request a deadline (docs/contract.md §5,
// "Failover"): a database or Redis that does not answer (a failover, a
// partition that drops packets) ends the request as 503 with Retry-After
// within timeout, never a hang. The host runs it before every door; a door
// whose route streams a body in or out lifts it there (Streaming), and a
// long poll lengthens it by its longest wait (Longer): no door's paths are
// named here.
func Deadline(timeout time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), timeout)
		defer cancel()
		c.Locals(deadlineKey{}, timeout)
		c.SetUserContext(ctx)
		return c.Next()
	}
}

// deadlineKey holds the request's deadline's length, for Longer.
type deadlineKey struct{}

// Streaming lifts the request's deadline for the handlers after it: a
// stream (an upload of 20 files at 1 MB/s, a file's download, an export)
// outlasts any request deadline and is bounded by the server's read and
// write timeouts instead. What ran before it (a bearer check) had the
// deadline; what it put in the context (the grant's audit access) stays.
func Streaming(c *fiber.Ctx) error {
	if _, ok := c.Locals(deadlineKey{}).(time.Duration); ok {
		c.SetUserContext(context.WithoutCancel(c.UserContext()))
	}
	return c.Next()
}

// Longer gives the handlers after it a deadline of the usual length plus
// extra, counted from where it runs: a long poll's longest wait on top of
// the usual deadline. The context's values stay.
func Longer(extra time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		timeout, ok := c.Locals(deadlineKey{}).(time.Duration)
		if !ok {
			return c.Next()
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), timeout+extra)
		defer cancel()
		c.SetUserContext(ctx)
		return c.Next()
	}
}
