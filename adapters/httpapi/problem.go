package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
)

// ErrorHandler maps every error a handler returns to its contract's shape:
// the upload endpoints answer {"status":"error","message":…}, everything
// else RFC 9457 problem+json.
func ErrorHandler(c *fiber.Ctx, err error) error {
	var answered *problemError
	if errors.As(err, &answered) {
		return writeProblem(c, answered.doc)
	}
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
		return writeProblem(c, problemDoc{Type: "too-many-attempts", Title: http.StatusText(fiber.StatusTooManyRequests),
			Status: fiber.StatusTooManyRequests, Detail: "too many failed attempts"})
	}
	if isUploadPath(c.Path()) {
		status, detail := fiber.StatusInternalServerError, "internal error"
		var fe *fiber.Error
		switch {
		case errors.Is(err, domain.ErrStorageFull):
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(domain.RetryAfterUnavailable))
			status, detail = fiber.StatusInsufficientStorage, domain.MessageStorageFull
		case errors.Is(err, domain.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(domain.RetryAfterUnavailable))
			status, detail = fiber.StatusServiceUnavailable, domain.MessageUnavailable
		case errors.As(err, &fe):
			status, detail = fe.Code, fe.Message
		case errors.Is(err, domain.ErrNotFound):
			status, detail = fiber.StatusNotFound, "not found"
		}
		logFailure(c, status, err)
		return uploadError(c, status, detail)
	}
	p := problemFor(err)
	var stale *domain.StaleVersion
	if errors.As(err, &stale) {
		staleVersion(c, &p, stale)
	}
	if sc := trace.SpanContextFromContext(c.UserContext()); p.Status >= 500 && sc.HasTraceID() {
		p.TraceID = sc.TraceID().String()
	}
	if p.Status == fiber.StatusServiceUnavailable || p.Status == fiber.StatusInsufficientStorage {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(domain.RetryAfterUnavailable))
	}
	logFailure(c, p.Status, err)
	return writeProblem(c, p)
}

// logFailure logs a 5xx with the error text only: never headers, bodies or
// query strings, which carry secrets and patient data.
func logFailure(c *fiber.Ctx, status int, err error) {
	if status >= 500 {
		slog.ErrorContext(c.UserContext(), "request failed", "method", c.Method(), "route", httpkit.RouteOf(c), "error", err.Error())
	}
}

// problemError is an error its handler already turned into a problem
// document (the Files section's upload refusals, which would otherwise be
// answered in the device endpoints' shape).
type problemError struct{ doc problemDoc }

func (e *problemError) Error() string { return e.doc.Detail }

// problemDoc is an RFC 9457 problem document.
type problemDoc struct {
	Type   string              `json:"type"`
	Title  string              `json:"title"`
	Status int                 `json:"status"`
	Detail string              `json:"detail"`
	Errors []domain.FieldError `json:"errors,omitempty"`
	// TraceID names the request's trace on a 5xx, for the operator's logs.
	TraceID string `json:"trace_id,omitempty"`
	// CurrentVersion is the object's version on a 412 (its ETag too).
	CurrentVersion int64 `json:"current_version,omitempty"`
}

// StatusOf is the status the API answers err with (a handler's error,
// outside the upload doors): the settings pages answer the same
// (adapters/httpkit's test holds the two doors alike).
func StatusOf(err error) int { return problemFor(err).Status }

// problemFor is err's problem document: its row of the doors' one table
// (httpkit.Problems), the field errors of a 422, a fiber error's own
// status, else 500.
func problemFor(err error) problemDoc {
	if p, ok := httpkit.ProblemOf(err); ok {
		doc := problemDoc{Type: p.Type, Title: http.StatusText(p.Status), Status: p.Status, Detail: p.Detail}
		if p.Status == fiber.StatusUnprocessableEntity {
			doc.Errors = []domain.FieldError{}
			if fe, ok := domain.AsFieldErrors(err); ok {
				doc.Errors = fe
			} else if errors.Is(err, domain.ErrIdempotencyKeyReused) {
				doc.Errors = []domain.FieldError{{Field: "Idempotency-Key", Message: "was used with another request"}}
			}
		}
		return doc
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		typ := "about:blank"
		if fe.Code == fiber.StatusRequestEntityTooLarge {
			typ = "payload-too-large"
		}
		return problemDoc{Type: typ, Title: http.StatusText(fe.Code), Status: fe.Code, Detail: fe.Message}
	}
	return problemDoc{Type: "internal-error", Title: http.StatusText(500), Status: 500, Detail: "internal error"}
}

func uploadError(c *fiber.Ctx, status int, message string) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	body, err := c.App().Config().JSONEncoder(fiber.Map{"status": "error", "message": message})
	if err != nil {
		return err
	}
	return c.Status(status).Send(body)
}

// writeProblem answers an RFC 9457 problem document.
func writeProblem(c *fiber.Ctx, p problemDoc) error {
	body, err := c.App().Config().JSONEncoder(p)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/problem+json")
	return c.Status(p.Status).Send(body)
}

func isUploadPath(path string) bool {
	return strings.HasSuffix(path, "/upload") && (strings.HasPrefix(path, "/api/gdt/") || strings.HasPrefix(path, "/api/sonogdt/"))
}
