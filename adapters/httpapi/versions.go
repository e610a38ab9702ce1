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

// sendWritten answers a write in the resource API's wire: the outcome's
// status (a replay's first answer, marked), a Location where it made
// something, and the value render writes with its version (the ETag; 0
// for a value that has none). No content is answered without a body.
func sendWritten[T any](c *fiber.Ctx, w ports.Written[T], render func(T) (body []byte, version int64, err error)) error {
	if w.Replayed {
		c.Set("Idempotent-Replayed", "true")
	}
	if w.Outcome == domain.OutcomeCreated {
		c.Set(fiber.HeaderLocation, resourcePrefix+"/"+w.Location)
	}
	if w.Outcome == domain.OutcomeNoContent {
		return c.SendStatus(w.Outcome.Status())
	}
	body, version, err := render(w.Value)
	if err != nil {
		return err
	}
	return sendVersioned(c, w.Outcome.Status(), body, version)
}

// objectOf renders an object of kind that a write left.
func objectOf(kind *domain.Kind) func(ports.StoredObject) ([]byte, int64, error) {
	return func(o ports.StoredObject) ([]byte, int64, error) { return o.JSON(kind), o.Version, nil }
}

// staleVersion is the 412's own part: the current version, in the problem
// document and as the ETag.
func staleVersion(c *fiber.Ctx, doc *problemDoc, stale *domain.StaleVersion) {
	doc.CurrentVersion = stale.Current
	doc.Detail = "the object has changed since the version If-Match names: its current version is " + strconv.FormatInt(stale.Current, 10)
	c.Set(fiber.HeaderETag, domain.ETag(stale.Current))
}
