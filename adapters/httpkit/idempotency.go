package httpkit

import (
	"crypto/sha256"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
)

// MaxIdempotencyKey bounds the header: keys are UUIDs or similar tokens.
const MaxIdempotencyKey = 255

// ErrIdempotencyKeyTooLong refuses a longer key.
var ErrIdempotencyKeyTooLong = domain.FieldErrors{{Field: "Idempotency-Key", Message: "must have at most 255 characters"}}.Err()

// IdempotencyKey reads the Idempotency-Key header of a write and
// fingerprints the request (method, path, If-Match, body), so that a key
// reused with another request is told apart; key is "" when none was sent.
func IdempotencyKey(c *fiber.Ctx, body []byte) (key string, fingerprint []byte, err error) {
	key = c.Get("Idempotency-Key")
	if key == "" {
		return "", nil, nil
	}
	if len(key) > MaxIdempotencyKey {
		return "", nil, ErrIdempotencyKeyTooLong
	}
	h := sha256.New()
	h.Write([]byte(c.Method() + " " + c.Path() + "\n"))
	// A request without If-Match hashes as before there was one.
	if v := c.Get(fiber.HeaderIfMatch); v != "" {
		h.Write([]byte("If-Match: " + v + "\n"))
	}
	h.Write(body)
	return key, h.Sum(nil), nil
}
