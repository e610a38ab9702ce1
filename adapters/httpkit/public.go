package httpkit

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// PublicBase is the server's base URL as its clients reach it:
// publicURL (PRAXIS_PUBLIC_URL) when set, else the request's own. Every
// absolute link and discovery document of the doors is written against it.
func PublicBase(c *fiber.Ctx, publicURL string) string {
	if base := strings.TrimSuffix(publicURL, "/"); base != "" {
		return base
	}
	return c.BaseURL()
}
