package web

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// The Webhooks page: endpoints, their delivery log, a test event, replay
// and removal (docs/contract.md §12).

// webhooksView shows the company's endpoints; with id, one endpoint's
// delivery log; with a secret, the one showing of a new endpoint's.
func (s *Site) webhooksView(c *fiber.Ctx, id uuid.UUID, secret string, ping *webhook.Attempt) error {
	m := memberOf(c)
	data := map[string]any{}
	endpoints, err := s.api.Webhooks.List(ctx(c), m.Grant())
	switch {
	case errors.Is(err, domain.ErrWebhooksDisabled):
		data["Off"] = true // no key: the use case answers 503, the page says why
	case err != nil:
		return s.fail(c, err)
	}
	data["Endpoints"] = endpoints
	if id != uuid.Nil {
		e, err := s.api.Webhooks.Get(ctx(c), m.Grant(), id)
		if err != nil {
			return s.fail(c, err)
		}
		attempts, _, err := s.api.Webhooks.Deliveries(ctx(c), m.Grant(), id, uuid.Nil, deliveriesShown)
		if err != nil {
			return s.fail(c, err)
		}
		data["Endpoint"], data["Attempts"] = e, attempts
	}
	if secret != "" {
		data["Secret"] = secret
	}
	data["Ping"] = ping
	return s.render(c, "webhooks", data)
}

func (s *Site) webhooksPage(c *fiber.Ctx) error { return s.webhooksView(c, uuid.Nil, "", nil) }

func (s *Site) webhookPage(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return s.fail(c, domain.ErrNotFound)
	}
	return s.webhooksView(c, id, "", nil)
}

func (s *Site) createWebhook(c *fiber.Ctx) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	var types []string
	for _, t := range strings.Split(form.Get("events"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			types = append(types, t)
		}
	}
	url := strings.TrimSpace(form.Get("url"))
	e, secret, err := s.api.Webhooks.Create(ctx(c), memberOf(c).Grant(), ports.WebhookInput{URL: &url, EventTypes: types})
	if err != nil {
		return err
	}
	c.Locals(objectKey{}, e.ID.String())
	c.Status(fiber.StatusCreated)
	return s.webhooksView(c, uuid.Nil, string(secret), nil)
}

// pingWebhook sends a test event and shows how the endpoint answered.
func (s *Site) pingWebhook(c *fiber.Ctx) error {
	id, err := memberParam(c)
	if err != nil {
		return err
	}
	a, err := s.api.Webhooks.Ping(ctx(c), memberOf(c).Grant(), id)
	if err != nil {
		return err
	}
	return s.webhooksView(c, id, "", &a)
}

func (s *Site) replayWebhook(c *fiber.Ctx) error {
	id, form, version, err := versionedForm(c)
	if err != nil {
		return err
	}
	since, err := time.ParseInLocation("2006-01-02T15:04", form.Get("since"), time.UTC)
	if err != nil {
		return &domain.ValidationError{Field: "since", Message: "since must be a date and time"}
	}
	if _, err := s.api.Webhooks.Replay(ctx(c), memberOf(c).Grant(), id, ports.ReplayFrom{Since: &since}, atVersion(version)); err != nil {
		return err
	}
	return c.Redirect("/settings/webhooks/"+id.String(), fiber.StatusSeeOther)
}

func (s *Site) deleteWebhook(c *fiber.Ctx) error {
	id, _, version, err := versionedForm(c)
	if err != nil {
		return err
	}
	if _, err := s.api.Webhooks.Delete(ctx(c), memberOf(c).Grant(), id, ports.Write{IfMatch: atVersion(version)}); err != nil {
		return err
	}
	return c.Redirect("/settings/webhooks", fiber.StatusSeeOther)
}

// deliveriesShown is how many of an endpoint's latest attempts its page shows.
const deliveriesShown = 50

// atVersion is the condition of a form that showed an object at version:
// a second tab's stale form is refused (412), not applied.
func atVersion(version int64) domain.Precondition {
	return domain.Precondition{Versions: []int64{version}}
}

// versionedForm reads a form that changes the object :id, with the
// version of the object it was shown with: a change acts on that version
// only, so a second tab's stale form is refused.
func versionedForm(c *fiber.Ctx) (uuid.UUID, url.Values, int64, error) {
	id, err := memberParam(c)
	if err != nil {
		return uuid.Nil, nil, 0, err
	}
	form, err := readForm(c)
	if err != nil {
		return uuid.Nil, nil, 0, err
	}
	v, err := strconv.ParseInt(form.Get("version"), 10, 64)
	if err != nil || v < 1 {
		return uuid.Nil, nil, 0, &domain.ValidationError{Field: "version", Message: "the form names no version: reload the page"}
	}
	return id, form, v, nil
}
