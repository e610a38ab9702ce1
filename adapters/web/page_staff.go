package web

import (
	"context"
	"net/url"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain/staff"
)

// The Team page: members, invitations, roles, and a member's passkeys.

func (s *Site) staffView(c *fiber.Ctx, link string) error {
	m := memberOf(c)
	o, err := s.settings.Overview(ctx(c), m)
	if err != nil {
		return s.fail(c, err)
	}
	keys, err := s.settings.Passkeys(ctx(c), m)
	if err != nil {
		return s.fail(c, err)
	}
	return s.render(c, "staff", map[string]any{"Overview": o, "Passkeys": keys, "Link": link})
}

func (s *Site) staffPage(c *fiber.Ctx) error { return s.staffView(c, "") }

// roleForm reads a form that names a role (an invitation, a change of role).
func roleForm(c *fiber.Ctx) (url.Values, staff.Role, error) {
	form, err := readForm(c)
	if err != nil {
		return nil, "", err
	}
	role, err := staff.ParseRole(form.Get("role"))
	return form, role, err
}

func (s *Site) inviteMember(c *fiber.Ctx) error {
	form, role, err := roleForm(c)
	if err != nil {
		return err
	}
	in, token, err := s.settings.Invite(ctx(c), memberOf(c), form.Get("email"), role)
	if err != nil {
		return err
	}
	c.Locals(objectKey{}, in.Email)
	c.Status(fiber.StatusCreated)
	return s.staffView(c, s.opts.SiteURL+staff.JoinPath(in.Company, token))
}

func (s *Site) setRole(c *fiber.Ctx) error {
	id, err := memberParam(c)
	if err != nil {
		return err
	}
	_, role, err := roleForm(c)
	if err != nil {
		return err
	}
	if err := s.settings.SetRole(ctx(c), memberOf(c), id, role); err != nil {
		return err
	}
	return c.Redirect("/settings/staff", fiber.StatusSeeOther)
}

func (s *Site) removeMember(c *fiber.Ctx) error {
	return s.onObject(c, s.settings.Remove, "/settings/staff")
}

// onObject does one change to the object the path names and goes back to next.
func (s *Site) onObject(c *fiber.Ctx, do func(context.Context, staff.Member, uuid.UUID) error, next string) error {
	id, err := memberParam(c)
	if err != nil {
		return err
	}
	if err := do(ctx(c), memberOf(c), id); err != nil {
		return err
	}
	return c.Redirect(next, fiber.StatusSeeOther)
}

func (s *Site) removePasskey(c *fiber.Ctx) error {
	id, err := staff.ParsePasskeyKey(c.Params("key"))
	if err != nil {
		return err
	}
	c.Locals(objectKey{}, staff.PasskeyKey(id))
	if err := s.settings.RemovePasskey(ctx(c), memberOf(c), id); err != nil {
		return err
	}
	return c.Redirect("/settings/staff#passkeys", fiber.StatusSeeOther)
}
