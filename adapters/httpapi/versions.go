package httpapi

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// Versions on the wire (docs/contract.md §4): every answer of one object
// carries its version as a strong ETag; a write may name the version it
// read in If-Match (412 when the object has moved on), a read the version it
// has in If-None-Match (304).

// writeOf reads how a PATCH, DELETE or cancel names its write: If-Match and
// the Idempotency-Key, whose fingerprint holds the If-Match too (the same
// key with another condition is another request).
func writeOf(c *fiber.Ctx, body []byte) (ports.Write, error) {
	cond, err := domain.ParsePrecondition("If-Match", c.Get(fiber.HeaderIfMatch), false)
	if err != nil {
		return ports.Write{}, err
	}
	key, err := idempotencyKey(c, body)
	return ports.Write{IfMatch: cond, Key: key}, err
}

// notModified answers 304 with the ETag, and no body, when the request's
// If-None-Match names version: the client's copy is current.
func notModified(c *fiber.Ctx, version int64) (bool, error) {
	cond, err := domain.ParsePrecondition("If-None-Match", c.Get(fiber.HeaderIfNoneMatch), true)
	if err != nil || !cond.Sent() || !cond.Matches(version) {
		return false, err
	}
	c.Set(fiber.HeaderETag, domain.ETag(version))
	c.Status(fiber.StatusNotModified)
	return true, nil
}

// sendVersioned answers one object with its ETag.
func sendVersioned(c *fiber.Ctx, status int, body []byte, version int64) error {
	if version > 0 {
		c.Set(fiber.HeaderETag, domain.ETag(version))
	}
	return sendJSON(c, status, body)
}

// sendWritten answers a write of one object: its status and body (a
// replay's first answer, marked), the ETag of the version it left, and a
// Location where it made one.
func sendWritten(c *fiber.Ctx, resp ports.Response) error {
	if resp.Replayed {
		c.Set("Idempotent-Replayed", "true")
	}
	if resp.Status == fiber.StatusCreated {
		c.Set(fiber.HeaderLocation, resourcePrefix+"/"+resp.Location)
	}
	if len(resp.Body) == 0 {
		return c.SendStatus(resp.Status)
	}
	return sendVersioned(c, resp.Status, resp.Body, resp.Version)
}

// staleVersion is the 412's own part: the current version, in the problem
// document and as the ETag.
func staleVersion(c *fiber.Ctx, doc *problemDoc, stale *domain.StaleVersion) {
	doc.CurrentVersion = stale.Current
	doc.Detail = "the object has changed since the version If-Match names: its current version is " + strconv.FormatInt(stale.Current, 10)
	c.Set(fiber.HeaderETag, domain.ETag(stale.Current))
}
