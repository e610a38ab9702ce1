package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
)

// maxForm bounds what a page sends: a form, or a passkey's answer.
const maxForm = 64 << 10

// readBody reads the body whole, up to maxForm (httpkit.ReadBody: a longer
// one is 413, a broken one 400).
func readBody(c *fiber.Ctx) ([]byte, error) { return httpkit.ReadBody(c, maxForm) }
