package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/ports"
)

// idempotencyKey reads the Idempotency-Key of a POST, PATCH or DELETE with
// its request's fingerprint (httpkit.IdempotencyKey); nil without one.
func idempotencyKey(c *fiber.Ctx, body []byte) (*ports.IdempotencyKey, error) {
	key, fingerprint, err := httpkit.IdempotencyKey(c, body)
	if key == "" || err != nil {
		return nil, err
	}
	return &ports.IdempotencyKey{Key: key, Fingerprint: fingerprint}, nil
}
