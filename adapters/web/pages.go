package web

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/staff"
)

// pageNames are the templates besides the layout, one a page.
var pageNames = []string{"signin", "join", "verify", "error", "overview", "integrations", "devices", "staff", "audit", "webhooks"}

var funcs = template.FuncMap{
	"date": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.UTC().Format("2006-01-02 15:04")
		case *time.Time:
			if v != nil {
				return v.UTC().Format("2006-01-02 15:04")
			}
		}
		return ""
	},
	"mib": func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) },
	"key": staff.PasskeyKey,
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"derefBool": func(b *bool) bool { return b != nil && *b },
	"open":      domain.OrderIsOpen,
	// deviceName is the name of a device of the board.
	"deviceName": func(b deviceBoard, id domain.UUID) string {
		for _, d := range b.Devices {
			if d.ID == string(id) {
				return d.Name
			}
		}
		return string(id)
	},
	// assignable are the orders of the file's patient a result may be filed under.
	"assignable": func(b deviceBoard, f domain.File) []orderEntry {
		var out []orderEntry
		for _, o := range b.Orders {
			if o.CustomerID == f.CustomerID && o.Status != domain.OrderCancelled && o.Status != domain.OrderFailed {
				out = append(out, o)
			}
		}
		return out
	},
}

func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("settings: template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// page is what every template sees.
type page struct {
	Lang, Title, Page, CSRF, Path string
	Signed, Admin                 bool
	Member                        staff.Member
	Data                          map[string]any
}

// T translates key into the page's language; Tf formats it with args.
func (p page) T(key string) string               { return translate(p.Lang, key) }
func (p page) Tf(key string, args ...any) string { return translate(p.Lang, key, args...) }

// Section is what the practice calls a section, in the page's language
// (the slug where nothing names it).
func (p page) Section(slug string) string {
	if n, ok := domain.SectionName(slug); ok {
		return n.In(p.Lang)
	}
	return slug
}

// Scope is a scope in the practice's words: "Notizen (lesen)".
func (p page) Scope(sc domain.Scope) string {
	section, access, _ := strings.Cut(string(sc), ":")
	switch access {
	case "read", "write":
		return p.Section(section) + " (" + p.T("integrations."+access) + ")"
	}
	return p.Section(section) + " (" + access + ")"
}

// render answers the page name with data, in the request's language.
func (s *Site) render(c *fiber.Ctx, name string, data map[string]any) error {
	m := memberOf(c)
	token, _ := c.Locals("csrf").(string)
	p := page{Lang: language(c), Title: "title." + name, Page: name, CSRF: token, Path: c.Path(),
		Signed: m.ID != uuid.Nil, Admin: m.Grant().Scopes.Contains(domain.ScopeSettingsWrite), Member: m, Data: data}
	c.Type("html", "utf-8")
	return s.pages[name].ExecuteTemplate(c, "layout", p)
}

func (s *Site) setLanguage(c *fiber.Ctx) error {
	form, err := readForm(c)
	if err != nil {
		return s.fail(c, err)
	}
	lang := form.Get("lang")
	if messages[lang] == nil {
		return s.fail(c, errBadRequest)
	}
	c.Cookie(&fiber.Cookie{Name: languageCookie, Value: lang, Path: "/", Secure: true, HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, MaxAge: 365 * 24 * 3600})
	return c.Redirect(localPath(form.Get("back")), fiber.StatusSeeOther)
}

// localPath is a path of the site to go back to; anything else is the overview.
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(u.Path, "/settings") || strings.HasPrefix(u.Path, "/settings/join/") {
		return "/settings/"
	}
	return u.Path
}

func (s *Site) overviewPage(c *fiber.Ctx) error {
	o, err := s.settings.Overview(ctx(c), memberOf(c))
	if err != nil {
		return s.fail(c, err)
	}
	return s.render(c, "overview", map[string]any{"Overview": o, "Release": s.opts.Release})
}

// memberParam is the :id of the path: a member, an endpoint, an object.
func memberParam(c *fiber.Ctx) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return uuid.Nil, domain.ErrNotFound
	}
	c.Locals(objectKey{}, id.String())
	return id, nil
}
