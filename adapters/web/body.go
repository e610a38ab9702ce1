package web

import (
	"errors"
	"io"

	"github.com/gofiber/fiber/v2"
)

// maxForm bounds what a page sends: a form, or a passkey's answer.
const maxForm = 64 << 10

var errTooLarge = errors.New("the request is too large")

// readBody reads the body whole, up to maxForm. It wants a Content-Length:
// a browser always sends one for a form or a fetch of a string.
func readBody(c *fiber.Ctx) ([]byte, error) {
	n := c.Request().Header.ContentLength()
	if n > maxForm {
		return nil, errTooLarge
	}
	if n < 0 {
		return nil, errBadRequest
	}
	if st := c.Context().RequestBodyStream(); st != nil {
		b, err := io.ReadAll(io.LimitReader(st, int64(n)))
		if err != nil || len(b) != n {
			return nil, errBadRequest
		}
		c.Request().SetBodyRaw(b)
		return b, nil
	}
	return c.Request().Body(), nil
}
