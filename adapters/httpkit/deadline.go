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
		c.SetUserContext(ctx)
		return c.Next()
	}
}

// Streaming lifts the request's deadline for the handlers after it: a
// stream (an upload of 20 files at 1 MB/s, a file's download, an export)
// outlasts any request deadline and is bounded by the server's read and
// write timeouts instead. What ran before it (a bearer check) had the
// deadline; what it put in the context (the grant's audit access) stays.
func Streaming(c *fiber.Ctx) error {
	c.SetUserContext(context.WithoutCancel(c.UserContext()))
	return c.Next()
}

// Longer moves the request's deadline extra later for the handlers after
// it: a long poll's longest wait on top of the usual deadline. The
// context's values stay; the request's slot of its company's share is
// given back (CompanyShare).
func Longer(extra time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		// A request that may wait this long holds no slot of its company's share.
		ReleaseShare(c)
		ctx := c.UserContext()
		deadline, ok := ctx.Deadline()
		if !ok {
			return c.Next()
		}
		ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline.Add(extra))
		defer cancel()
		c.SetUserContext(ctx)
		return c.Next()
	}
}
