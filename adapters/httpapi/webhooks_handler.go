package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// WebhookEndpoints is the company's webhook endpoints (docs/contract.md
// §12): scopes webhooks:read and webhooks:write.
type WebhookEndpoints struct{ webhooks ports.Webhooks }

// NewWebhookEndpoints serves webhooks.
func NewWebhookEndpoints(webhooks ports.Webhooks) *WebhookEndpoints {
	return &WebhookEndpoints{webhooks: webhooks}
}

func (h *WebhookEndpoints) Register(r fiber.Router) {
	read, write := requireScope(domain.ScopeWebhooksRead), requireScope(domain.ScopeWebhooksWrite)
	r.Get("/webhook-endpoints", read, h.list)
	r.Post("/webhook-endpoints", write, h.create)
	r.Get("/webhook-endpoints/:id", read, h.get)
	r.Patch("/webhook-endpoints/:id", write, h.update)
	r.Delete("/webhook-endpoints/:id", write, h.delete)
	r.Post("/webhook-endpoints/:id/rotate-secret", write, h.rotate)
	r.Post("/webhook-endpoints/:id/replay", write, h.replay)
	r.Get("/webhook-endpoints/:id/deliveries", read, h.deliveries)
}

func (h *WebhookEndpoints) list(c *fiber.Ctx) error {
	endpoints, err := h.webhooks.List(c.UserContext(), grantOf(c))
	if err != nil {
		return err
	}
	out := make([]webhook.View, len(endpoints))
	for i, e := range endpoints {
		out[i] = webhook.ViewOf(e, "", time.Now())
	}
	return c.JSON(fiber.Map{"data": out})
}

// endpointInput is a create's or a PATCH's body.
type endpointInput struct {
	URL         *string  `json:"url"`
	Description *string  `json:"description"`
	EventTypes  []string `json:"event_types"`
	Enabled     *bool    `json:"enabled"`
}

// decodeStrict reads body into v: malformed JSON is 400; an unknown field,
// a value of the wrong type or more than one value is 422 naming it.
func decodeStrict(body []byte, v any) error {
	if !json.Valid(body) {
		return domain.ErrMalformedJSON
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return domain.FieldErrors{{Field: "", Message: "the body must be one JSON object"}}.Err()
		}
		return domain.FieldErrors{{Field: field, Message: "must be a " + typeErr.Type.String()}}.Err()
	}
	return domain.FieldErrors{{Field: "", Message: err.Error()}}.Err()
}

// input reads a create's or a PATCH's body, answered too (a PATCH's
// Idempotency-Key fingerprints it).
func (h *WebhookEndpoints) input(c *fiber.Ctx) (ports.WebhookInput, []byte, error) {
	body, err := jsonBody(c)
	if err != nil {
		return ports.WebhookInput{}, nil, err
	}
	var in endpointInput
	if err := decodeStrict(body, &in); err != nil {
		return ports.WebhookInput{}, nil, err
	}
	return ports.WebhookInput(in), body, nil
}

func (h *WebhookEndpoints) create(c *fiber.Ctx) error {
	in, _, err := h.input(c)
	if err != nil {
		return err
	}
	e, secret, err := h.webhooks.Create(c.UserContext(), grantOf(c), in)
	if err != nil {
		return err
	}
	c.Location(resourcePrefix + "/webhook-endpoints/" + e.ID.String())
	return c.Status(fiber.StatusCreated).JSON(webhook.ViewOf(e, secret, time.Now()))
}

// endpointID reads :id; anything but an endpoint's id is not found.
func endpointID(c *fiber.Ctx) (uuid.UUID, error) {
	if !domain.ValidObjectID(c.Params("id")) {
		return uuid.Nil, domain.ErrNotFound
	}
	return uuid.MustParse(c.Params("id")), nil
}

func (h *WebhookEndpoints) get(c *fiber.Ctx) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	e, err := h.webhooks.Get(c.UserContext(), grantOf(c), id)
	if err != nil {
		return err
	}
	if done, err := notModified(c, e.Version); done || err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, domain.ETag(e.Version))
	return c.JSON(webhook.ViewOf(e, "", time.Now()))
}

// endpointOf renders an endpoint that a write left.
func endpointOf(v webhook.View) ([]byte, int64, error) {
	body, err := v.JSON()
	return body, v.Version, err
}

func (h *WebhookEndpoints) update(c *fiber.Ctx) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	in, body, err := h.input(c)
	if err != nil {
		return err
	}
	w, err := writeOf(c, body)
	if err != nil {
		return err
	}
	resp, err := h.webhooks.Update(c.UserContext(), grantOf(c), id, in, w)
	if err != nil {
		return err
	}
	return sendWritten(c, resp, endpointOf)
}

func (h *WebhookEndpoints) delete(c *fiber.Ctx) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	w, err := writeOf(c, nil)
	if err != nil {
		return err
	}
	resp, err := h.webhooks.Delete(c.UserContext(), grantOf(c), id, w)
	if err != nil {
		return err
	}
	return sendWritten(c, resp, endpointOf)
}

func (h *WebhookEndpoints) rotate(c *fiber.Ctx) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	var in struct {
		OverlapSeconds *int64 `json:"overlap_seconds"`
	}
	if _, err := optionalBody(c, &in); err != nil {
		return err
	}
	overlap := webhook.DefaultOverlap
	if in.OverlapSeconds != nil {
		overlap = time.Duration(*in.OverlapSeconds) * time.Second
		if *in.OverlapSeconds < 0 || overlap > webhook.MaxOverlap {
			return domain.FieldErrors{{Field: "overlap_seconds", Message: "must be from 0 to 604800 (7 days)"}}.Err()
		}
	}
	e, secret, err := h.webhooks.RotateSecret(c.UserContext(), grantOf(c), id, overlap)
	if err != nil {
		return err
	}
	return c.JSON(webhook.ViewOf(e, secret, time.Now()))
}

func (h *WebhookEndpoints) replay(c *fiber.Ctx) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	body, err := jsonBody(c)
	if err != nil {
		return err
	}
	var in struct {
		Cursor *string `json:"cursor"`
		Since  *string `json:"since"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	var from ports.ReplayFrom
	switch {
	case (in.Cursor == nil) == (in.Since == nil):
		return domain.FieldErrors{{Field: "", Message: "give either cursor or since"}}.Err()
	case in.Cursor != nil:
		cur, err := domain.ParseCursor(*in.Cursor)
		if err != nil {
			return err
		}
		from.Cursor = &cur
	default:
		t, err := domain.ParseDateTime(*in.Since)
		if err != nil {
			return domain.FieldErrors{{Field: "since", Message: "must be an RFC 3339 date-time with an offset, from year 0001 to 9999"}}.Err()
		}
		from.Since = &t
	}
	cond, err := domain.ParsePrecondition("If-Match", c.Get(fiber.HeaderIfMatch), false)
	if err != nil {
		return err
	}
	e, err := h.webhooks.Replay(c.UserContext(), grantOf(c), id, from, cond)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, domain.ETag(e.Version))
	return c.Status(fiber.StatusAccepted).JSON(webhook.ViewOf(e, "", time.Now()))
}

// attemptView is one entry of the delivery log.
type attemptView struct {
	ID         string    `json:"id"`
	MessageID  string    `json:"webhook_id"`
	Type       string    `json:"type"`
	Cursor     string    `json:"cursor"`
	At         time.Time `json:"attempted_at"`
	Status     *int      `json:"status"`
	Error      *string   `json:"error"`
	DurationMS float64   `json:"duration_ms"`
	Outcome    string    `json:"outcome"`
}

var deliveryParams = []string{"cursor", "limit"}

func (h *WebhookEndpoints) deliveries(c *fiber.Ctx) error {
	id, err := endpointID(c)
	if err != nil {
		return err
	}
	var errs domain.FieldErrors
	onlyParams(c, deliveryParams, &errs)
	limit := limitParam(c, &errs)
	before := uuid.Nil
	if v := c.Query("cursor"); v != "" {
		cur, err := domain.ParseCursor(v)
		if b, perr := uuid.Parse(cur.ID); err != nil || perr != nil || cur.Change != 0 {
			errs.Add("cursor", "is not a cursor this API handed out")
		} else {
			before = b
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	attempts, more, err := h.webhooks.Deliveries(c.UserContext(), grantOf(c), id, before, limit)
	if err != nil {
		return err
	}
	out := make([]attemptView, len(attempts))
	next := ""
	for i, a := range attempts {
		v := attemptView{ID: a.ID.String(), MessageID: a.MessageID, Type: a.Type,
			Cursor: domain.Cursor{Change: a.Position.Change, ID: a.Position.ID}.Encode(), At: a.At,
			DurationMS: float64(a.Duration.Microseconds()) / 1000, Outcome: a.Outcome.String()}
		if a.Status != 0 {
			v.Status = &a.Status
		}
		if a.Error != "" {
			v.Error = &a.Error
		}
		out[i] = v
		next = domain.Cursor{ID: a.ID.String()}.Encode()
	}
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return writePage(c, data, next, more, nil)
}
