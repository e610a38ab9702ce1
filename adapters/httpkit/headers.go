package httpkit

import "github.com/gofiber/fiber/v2"

// SecurityHeaders are what every answer of both doors carries: no content
// sniffing, no referrer, no framing. The pages add their
// Content-Security-Policy; the API's authorised answers add no-store.
func SecurityHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	return c.Next()
}
