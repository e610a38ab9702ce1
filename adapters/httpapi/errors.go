package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
)

// ErrorHandler maps every error a handler returns to its contract's shape:
// the upload endpoints answer {"status":"error","message":…}, everything
// else RFC 9457 problem+json.
func ErrorHandler(c *fiber.Ctx, err error) error {
	var refusal *domain.UploadRefusal
	if errors.As(err, &refusal) {
		return uploadError(c, fiber.StatusBadRequest, refusal.Error())
	}
	var tooMany *domain.TooManyAttempts
	if errors.As(err, &tooMany) {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(tooMany.RetryAfterSeconds()))
		if isUploadPath(c.Path()) {
			return uploadError(c, fiber.StatusTooManyRequests, domain.MessageTooManyAttempts)
		}
		return problem(c, fiber.StatusTooManyRequests, "too many failed attempts")
	}
	status, detail := fiber.StatusInternalServerError, "internal error"
	var fe *fiber.Error
	switch {
	case errors.As(err, &fe):
		status, detail = fe.Code, fe.Message
	case errors.Is(err, domain.ErrNotFound):
		status, detail = fiber.StatusNotFound, "not found"
	}
	if status >= 500 {
		// Only the error text: never headers, bodies or query strings, which carry secrets.
		slog.ErrorContext(c.UserContext(), "request failed", "method", c.Method(), "route", routeOf(c), "error", err.Error())
	}
	if isUploadPath(c.Path()) {
		return uploadError(c, status, detail)
	}
	return problem(c, status, detail)
}

func uploadError(c *fiber.Ctx, status int, message string) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	body, err := c.App().Config().JSONEncoder(fiber.Map{"status": "error", "message": message})
	if err != nil {
		return err
	}
	return c.Status(status).Send(body)
}

// problem writes an RFC 9457 problem document.
func problem(c *fiber.Ctx, status int, detail string) error {
	body, err := c.App().Config().JSONEncoder(fiber.Map{
		"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": detail,
	})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/problem+json")
	return c.Status(status).Send(body)
}

func isUploadPath(path string) bool {
	return strings.HasSuffix(path, "/upload") && (strings.HasPrefix(path, "/api/gdt/") || strings.HasPrefix(path, "/api/sonogdt/"))
}

// routeOf names the matched route template, never the raw path: a request
// that only the root middleware matched (or nothing: fiber then reports the
// raw path) is "unmatched". Below a group's guard it is the group's prefix.
func routeOf(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && r.Path != "" && r.Path != "/" && len(r.Handlers) > 0 {
		return r.Path
	}
	return "unmatched"
}
