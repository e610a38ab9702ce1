package httpapi

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// DeviceOrders serves the GDT round trip's writes (docs/contract.md §14):
// the practice's orders and cancellations, the bridge's long poll and
// reports, assigning a result, and a device's credential. The reads of
// devices and device orders are the generic ones (records_handler.go).
type DeviceOrders struct{ orders ports.DeviceOrders }

// NewDeviceOrders serves the round trip.
func NewDeviceOrders(orders ports.DeviceOrders) *DeviceOrders { return &DeviceOrders{orders: orders} }

func (h *DeviceOrders) Register(r fiber.Router) {
	write, bridge := requireScope(domain.WriteScope("device-orders")), requireScope(domain.ScopeDeviceBridge)
	r.Post("/device-orders", write, h.create)
	r.Post("/device-orders/:id/cancel", write, h.cancel)
	for _, status := range []string{"written", "taken", "failed", "withdrawn"} {
		r.Post("/device-orders/:id/"+status, bridge, h.report(status))
	}
	r.Post("/device-orders/:id/assign", write, h.assign)
	r.Get("/device-outbox", bridge, httpkit.Longer(maxOutboxWait*time.Second), h.outbox)
	r.Post("/devices/:id/credential", requireScope(domain.WriteScope("devices")), h.credential)
}

var ordersKind = domain.KindOf("device-orders")

func (h *DeviceOrders) create(c *fiber.Ctx) error {
	return created(c, objectOf(ordersKind), func(body []byte, key *ports.IdempotencyKey) (ports.WrittenObject, error) {
		return h.orders.Create(c.UserContext(), grantOf(c), domain.ParseDocument(body), key)
	})
}

func (h *DeviceOrders) cancel(c *fiber.Ctx) error {
	w, err := writeOf(c, nil)
	if err != nil {
		return err
	}
	resp, err := h.orders.Cancel(c.UserContext(), grantOf(c), c.Params("id"), w)
	if err != nil {
		return err
	}
	return sendWritten(c, resp, objectOf(ordersKind))
}

func (h *DeviceOrders) report(status string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var in struct {
			Reason *string `json:"reason"`
		}
		body, err := optionalBody(c, &in)
		if err != nil {
			return err
		}
		reason := ""
		if in.Reason != nil {
			reason = *in.Reason
			if len([]rune(reason)) > 500 {
				return domain.FieldErrors{{Field: "reason", Message: "must be at most 500 characters"}}.Err()
			}
		}
		w, err := writeOf(c, body)
		if err != nil {
			return err
		}
		resp, err := h.orders.Report(c.UserContext(), grantOf(c), c.Params("id"), status, reason, w)
		if err != nil {
			return err
		}
		return sendWritten(c, resp, objectOf(ordersKind))
	}
}

func (h *DeviceOrders) assign(c *fiber.Ctx) error {
	body, err := jsonBody(c)
	if err != nil {
		return err
	}
	var in struct {
		FileID *string `json:"file_id"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	if in.FileID == nil {
		return domain.FieldErrors{{Field: "file_id", Message: "is required"}}.Err()
	}
	file, err := domain.ParseFileID(*in.FileID)
	if err != nil {
		return domain.FieldErrors{{Field: "file_id", Message: "must be a UUID in canonical lower-case form"}}.Err()
	}
	w, err := writeOf(c, body)
	if err != nil {
		return err
	}
	resp, err := h.orders.Assign(c.UserContext(), grantOf(c), c.Params("id"), file, w)
	if err != nil {
		return err
	}
	return sendWritten(c, resp, objectOf(ordersKind))
}

// maxOutboxWait is the longest a long poll waits: below the usual 60 s of
// proxies and of the server's idle timeout.
const maxOutboxWait = 50

func (h *DeviceOrders) outbox(c *fiber.Ctx) error {
	var errs domain.FieldErrors
	onlyParams(c, []string{"wait"}, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	wait := 0
	if v := c.Query("wait"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxOutboxWait || strconv.Itoa(n) != v {
			return domain.FieldErrors{{Field: "wait", Message: "must be a whole number of seconds from 0 to " + strconv.Itoa(maxOutboxWait)}}.Err()
		}
		wait = n
	}
	box, err := h.orders.Outbox(c.UserContext(), grantOf(c), time.Duration(wait)*time.Second)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"device": box.Device, "data": box.Orders})
}

func (h *DeviceOrders) credential(c *fiber.Ctx) error {
	var in struct {
		OverlapSeconds *int64 `json:"overlap_seconds"`
	}
	if _, err := optionalBody(c, &in); err != nil {
		return err
	}
	overlap := domain.DefaultSecretOverlap
	if in.OverlapSeconds != nil {
		if *in.OverlapSeconds < 0 || *in.OverlapSeconds > int64(domain.MaxSecretOverlap/time.Second) {
			return domain.FieldErrors{{Field: "overlap_seconds", Message: "must be from 0 to 604800 (7 days)"}}.Err()
		}
		overlap = time.Duration(*in.OverlapSeconds) * time.Second
	}
	cred, err := h.orders.Credential(c.UserContext(), grantOf(c), c.Params("id"), overlap)
	if err != nil {
		return err
	}
	out := fiber.Map{"client_id": cred.ClientID, "client_secret": string(cred.ClientSecret), "device_id": cred.DeviceID,
		"scope": string(domain.ScopeDeviceBridge), "previous_secret_expires_at": nil}
	if cred.PreviousUntil != nil {
		out["previous_secret_expires_at"] = cred.PreviousUntil.UTC().Format(time.RFC3339)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}
