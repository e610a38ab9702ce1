package httpapi

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// openAPIDocument describes every route; a test keeps it in step with the router.
//
// openAPIPath is where the document is served.
const openAPIPath = "/api/oauth/v2/openapi.json"

//go:embed openapi/openapi.json
var openAPIDocument []byte

// OpenAPI serves the OpenAPI 3.1 document.
type OpenAPI struct{}

func (OpenAPI) Register(app fiber.Router) {
	app.Get(openAPIPath, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Send(openAPIDocument)
	})
}
