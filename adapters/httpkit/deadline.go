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
		parent := c.UserContext()
		ctx, cancel := context.WithTimeout(parent, timeout)
		defer cancel()
		c.Locals(deadlineKey{}, bounds{parent: parent, timeout: timeout})
		c.SetUserContext(ctx)
		return c.Next()
	}
}

type deadlineKey struct{}

// bounds are the request's context before its deadline, and the deadline's length.
type bounds struct {
	parent  context.Context
	timeout time.Duration
}

// Streaming lifts the request's deadline for the handlers after it: a
// stream (an upload of 20 files at 1 MB/s, a file's download, an export)
// outlasts any request deadline and is bounded by the server's read and
// write timeouts instead. What ran before it (a bearer check) had the deadline.
func Streaming(c *fiber.Ctx) error {
	if b, ok := c.Locals(deadlineKey{}).(bounds); ok {
		c.SetUserContext(b.parent)
	}
	return c.Next()
}

// Longer gives the handlers after it a deadline of the usual length plus
// extra, counted from where it runs: a long poll's longest wait on top of
// the usual deadline.
func Longer(extra time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		b, ok := c.Locals(deadlineKey{}).(bounds)
		if !ok {
			return c.Next()
		}
		ctx, cancel := context.WithTimeout(b.parent, b.timeout+extra)
		defer cancel()
		c.SetUserContext(ctx)
		return c.Next()
	}
}
