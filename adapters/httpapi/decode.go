package httpapi

import (
	"mime"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
)

// jsonBody is the only way a resource handler reads a request body: at most
// 1 MiB (else 413), and only as application/json (else 415). The body is
// handed on as bytes: the domain's schema validator reads it.
func jsonBody(c *fiber.Ctx) ([]byte, error) {
	mediaType, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || (mediaType != fiber.MIMEApplicationJSON && mediaType != "application/merge-patch+json") {
		httpkit.DrainOrClose(c, httpkit.Body(c))
		return nil, fiber.NewError(fiber.StatusUnsupportedMediaType, "the body must be application/json")
	}
	body, err := readSmallBody(c)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, domain.FieldErrors{{Field: "", Message: "the body must be one JSON object"}}.Err()
	}
	return body, nil
}

// optionalBody reads a JSON body where one may be left out.
func optionalBody(c *fiber.Ctx, v any) ([]byte, error) {
	if len(c.Request().Header.ContentType()) == 0 && c.Request().Header.ContentLength() <= 0 {
		return nil, nil
	}
	body, err := jsonBody(c)
	if err != nil {
		return nil, err
	}
	return body, decodeStrict(body, v)
}
