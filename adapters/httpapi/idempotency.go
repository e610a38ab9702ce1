package httpapi

import (
	"crypto/sha256"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// maxIdempotencyKey bounds the header: keys are UUIDs or similar tokens.
const maxIdempotencyKey = 255

var errIdempotencyKeyTooLong = domain.FieldErrors{{Field: "Idempotency-Key", Message: "must have at most 255 characters"}}.Err()

// idempotencyKey reads the Idempotency-Key header of a POST, PATCH or DELETE
// and fingerprints the request (method, path, If-Match, body), so a reused
// key with another request is told apart.
func idempotencyKey(c *fiber.Ctx, body []byte) (*ports.IdempotencyKey, error) {
	key := c.Get("Idempotency-Key")
	if key == "" {
		return nil, nil
	}
	if len(key) > maxIdempotencyKey {
		return nil, errIdempotencyKeyTooLong
	}
	h := sha256.New()
	h.Write([]byte(c.Method() + " " + c.Path() + "\n"))
	ifMatchFingerprint(c, h)
	h.Write(body)
	return &ports.IdempotencyKey{Key: key, Fingerprint: h.Sum(nil)}, nil
}
