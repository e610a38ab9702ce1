package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/staff"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
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
	"deviceName": func(b ports.DeviceBoard, id domain.UUID) string {
		for _, d := range b.Devices {
			if d.ID == string(id) {
				return d.Name
			}
		}
		return string(id)
	},
	// assignable are the orders of the file's patient a result may be filed under.
	"assignable": func(b ports.DeviceBoard, f domain.File) []ports.OrderEntry {
		var out []ports.OrderEntry
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
		Signed: m.ID != uuid.Nil, Admin: m.Role.CanChange(), Member: m, Data: data}
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

// scopeRow is one section of the scope table with its read and write scopes.
type scopeRow struct {
	Section     string
	Read, Write domain.Scope
}

func scopeTable() []scopeRow {
	var rows []scopeRow
	index := map[string]int{}
	for _, sc := range domain.SupportedScopes() {
		section, access, _ := strings.Cut(string(sc), ":")
		i, ok := index[section]
		if !ok {
			i = len(rows)
			index[section] = i
			rows = append(rows, scopeRow{Section: section})
		}
		if access == "read" {
			rows[i].Read = sc
		} else {
			rows[i].Write = sc
		}
	}
	return rows
}

// shown is a secret on the one page that shows it.
type shown struct {
	ClientID domain.ClientID
	Secret   domain.Secret
	Until    string
}

func (s *Site) integrations(c *fiber.Ctx, once *shown) error {
	clients, err := s.settings.Clients(ctx(c), memberOf(c))
	if err != nil {
		return s.fail(c, err)
	}
	calls, err := s.settings.DeprecatedCalls(ctx(c), memberOf(c))
	if err != nil {
		return s.fail(c, err)
	}
	usage, err := s.settings.ClientUsage(ctx(c), memberOf(c), clients)
	if err != nil {
		return s.fail(c, err)
	}
	return s.render(c, "integrations", map[string]any{"Clients": clients, "ScopeTable": scopeTable(), "Shown": once, "Calls": calls,
		"Usage": usage})
}

func (s *Site) integrationsPage(c *fiber.Ctx) error { return s.integrations(c, nil) }

func (s *Site) createClient(c *fiber.Ctx) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	scopes, err := domain.ParseScopes(strings.Join(form["scope"], " "))
	if err != nil {
		return err
	}
	client, secret, err := s.settings.CreateClient(ctx(c), memberOf(c), form.Get("name"), scopes)
	if err != nil {
		return err
	}
	c.Locals(objectKey{}, string(client.ID))
	c.Status(fiber.StatusCreated)
	return s.integrations(c, &shown{ClientID: client.ID, Secret: secret})
}

// rotationOverlap is how long a rotated client secret keeps working.
const rotationOverlap = 24 * time.Hour

func (s *Site) rotateClient(c *fiber.Ctx) error {
	id := domain.ClientID(c.Params("id"))
	if !id.Plausible() {
		return domain.ErrNotFound
	}
	c.Locals(objectKey{}, string(id))
	secret, err := s.settings.RotateClientSecret(ctx(c), memberOf(c), id, rotationOverlap)
	if err != nil {
		return err
	}
	return s.integrations(c, &shown{ClientID: id, Secret: secret, Until: s.now().Add(rotationOverlap).UTC().Format("2006-01-02 15:04 UTC")})
}

func (s *Site) revokeClient(c *fiber.Ctx) error {
	id := domain.ClientID(c.Params("id"))
	if !id.Plausible() {
		return domain.ErrNotFound
	}
	c.Locals(objectKey{}, string(id))
	if err := s.settings.RevokeClient(ctx(c), memberOf(c), id); err != nil {
		return err
	}
	return c.Redirect("/settings/integrations", fiber.StatusSeeOther)
}

func (s *Site) devices(c *fiber.Ctx, secret domain.Secret) error {
	return s.devicesView(c, secret, nil, "")
}

// devicesView is the Devices tab: the round trip's devices, orders and
// unmatched results (docs/contract.md §14), and the upload secret; cred is
// a device credential just made (shown once, with a bridge configuration),
// sent the number of an order just made.
func (s *Site) devicesView(c *fiber.Ctx, secret domain.Secret, cred *ports.DeviceCredential, sent string) error {
	m := memberOf(c)
	board, err := s.settings.DeviceBoard(ctx(c), m)
	if err != nil {
		return s.fail(c, err)
	}
	data := map[string]any{"CompanyID": m.Company.String(), "SiteURL": s.opts.SiteURL, "Board": board}
	if sent != "" {
		data["Sent"] = sent
	}
	if cred != nil {
		data["Credential"] = cred
		name := cred.DeviceID
		for _, d := range board.Devices {
			if d.ID == cred.DeviceID {
				name = d.Name
			}
		}
		config, _ := json.MarshalIndent(map[string]any{"url": s.opts.SiteURL, "company": m.Company.String(),
			"devices": []map[string]string{{"name": name, "client_id": string(cred.ClientID),
				"client_secret": string(cred.ClientSecret), "order_dir": `D:\GDT\orders`, "result_dir": `D:\GDT\results`}}}, "", "  ")
		data["DeviceConfig"] = string(config)
	}
	if secret != "" {
		data["Secret"] = secret
		data["Config"] = fmt.Sprintf("# praxis GDT bridge (praxis-gdt-bridge), made %s\n"+
			"PRAXIS_BRIDGE_URL=%s\nPRAXIS_BRIDGE_COMPANY=%s\nPRAXIS_BRIDGE_SECRET=%s\n"+
			"# the GDT exchange folder the devices write to\nPRAXIS_BRIDGE_DIR=D:\\GDT\n"+
			"# gdt, or sonogdt for a SonoGdt device\nPRAXIS_BRIDGE_PREFIX=gdt\n",
			s.now().UTC().Format(time.RFC3339), s.opts.SiteURL, m.Company, secret)
	}
	return s.render(c, "devices", data)
}

func (s *Site) devicesPage(c *fiber.Ctx) error { return s.devices(c, "") }

// registerDevice registers a device from the tab's form: procedures one a
// line, "CODE Name".
func (s *Site) registerDevice(c *fiber.Ctx) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	body := map[string]any{"name": form.Get("name"), "gdt_id": form.Get("gdt_id"), "gdt_version": form.Get("gdt_version"),
		"file_naming": form.Get("file_naming"), "removes_files": form.Get("reads_on_start") == ""}
	for field, v := range map[string]string{"praxis_gdt_id": form.Get("praxis_gdt_id"), "encoding": form.Get("encoding"), "fixed_name": form.Get("fixed_name")} {
		if v = strings.TrimSpace(v); v != "" {
			body[field] = v
		}
	}
	procedures := []map[string]string{}
	for _, line := range strings.Split(form.Get("procedures"), "\n") {
		code, name, _ := strings.Cut(strings.TrimSpace(line), " ")
		if code != "" {
			procedures = append(procedures, map[string]string{"code": code, "name": strings.TrimSpace(name)})
		}
	}
	body["procedures"] = procedures
	raw, _ := json.Marshal(body)
	resp, err := s.settings.RegisterDevice(ctx(c), memberOf(c), raw)
	if err != nil {
		return err
	}
	var made struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(resp.Body, &made)
	c.Locals(objectKey{}, made.ID)
	c.Status(fiber.StatusCreated)
	return s.devices(c, "")
}

// deviceCredential makes or renews a device's credential and shows it once,
// with a configuration file for its bridge.
func (s *Site) deviceCredential(c *fiber.Ctx) error {
	id := c.Params("id")
	if !domain.ValidObjectID(id) {
		return domain.ErrNotFound
	}
	c.Locals(objectKey{}, id)
	cred, err := s.settings.DeviceCredential(ctx(c), memberOf(c), id)
	if err != nil {
		return err
	}
	return s.devicesView(c, "", &cred, "")
}

// orderAtDevice sends a patient to a device (or asks it to show a result).
func (s *Site) orderAtDevice(c *fiber.Ctx) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	customer, err := strconv.ParseInt(strings.TrimSpace(form.Get("customer_id")), 10, 64)
	if err != nil {
		return &domain.ValidationError{Field: "customer_id", Message: "the patient number must be a number"}
	}
	body := map[string]any{"customer_id": customer, "device_id": form.Get("device_id"), "type": form.Get("type")}
	for _, field := range []string{"procedure", "file_id", "comment"} {
		if v := strings.TrimSpace(form.Get(field)); v != "" {
			body[field] = v
		}
	}
	raw, _ := json.Marshal(body)
	resp, err := s.settings.OrderAtDevice(ctx(c), memberOf(c), raw)
	if err != nil {
		return err
	}
	var made struct {
		ID     string `json:"id"`
		Number int64  `json:"number"`
	}
	_ = json.Unmarshal(resp.Body, &made)
	c.Locals(objectKey{}, made.ID)
	c.Status(fiber.StatusCreated)
	return s.devicesView(c, "", nil, strconv.FormatInt(made.Number, 10))
}

func (s *Site) cancelDeviceOrder(c *fiber.Ctx) error {
	id := c.Params("id")
	if !domain.ValidObjectID(id) {
		return domain.ErrNotFound
	}
	c.Locals(objectKey{}, id)
	form, err := readForm(c)
	if err != nil {
		return err
	}
	v, err := strconv.ParseInt(form.Get("version"), 10, 64)
	if err != nil || v < 1 {
		return &domain.ValidationError{Field: "version", Message: "the form names no version: reload the page"}
	}
	if err := s.settings.CancelDeviceOrder(ctx(c), memberOf(c), id, v); err != nil {
		return err
	}
	return s.devices(c, "")
}

// assignResult files an unmatched result under the order the form names ("id:version").
func (s *Site) assignResult(c *fiber.Ctx) error {
	file, err := domain.ParseFileID(c.Params("file"))
	if err != nil {
		return domain.ErrNotFound
	}
	form, err := readForm(c)
	if err != nil {
		return err
	}
	order, version, _ := strings.Cut(form.Get("order"), ":")
	v, err := strconv.ParseInt(version, 10, 64)
	if err != nil || v < 1 || !domain.ValidObjectID(order) {
		return &domain.ValidationError{Field: "order", Message: "the form names no order: reload the page"}
	}
	c.Locals(objectKey{}, order)
	if err := s.settings.AssignResult(ctx(c), memberOf(c), order, file, v); err != nil {
		return err
	}
	return s.devices(c, "")
}

func (s *Site) rotateUploadSecret(c *fiber.Ctx) error {
	m := memberOf(c)
	c.Locals(objectKey{}, m.Company.String())
	secret, err := s.settings.RotateUploadSecret(ctx(c), m)
	if err != nil {
		return err
	}
	return s.devices(c, secret)
}

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

func (s *Site) inviteMember(c *fiber.Ctx) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	role, err := staff.ParseRole(form.Get("role"))
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

func memberParam(c *fiber.Ctx) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return uuid.Nil, domain.ErrNotFound
	}
	c.Locals(objectKey{}, id.String())
	return id, nil
}

func (s *Site) setRole(c *fiber.Ctx) error {
	id, err := memberParam(c)
	if err != nil {
		return err
	}
	form, err := readForm(c)
	if err != nil {
		return err
	}
	role, err := staff.ParseRole(form.Get("role"))
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

// auditPageSize is how many events the audit page shows at once.
const auditPageSize = 50

// auditQuery reads the audit page's filters: a customer, an agent (a
// client id, or a door: gdt, sonogdt), a cursor.
func auditQuery(c *fiber.Ctx) (audit.Query, error) {
	q := audit.Query{Limit: auditPageSize, Agent: strings.TrimSpace(c.Query("agent"))}
	if raw := strings.TrimSpace(c.Query("customer_id")); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			return q, &domain.ValidationError{Field: "customer_id", Message: "customer_id must be a positive number"}
		}
		customer := domain.CustomerID(id)
		q.Customer = &customer
	}
	if cur := c.Query("cursor"); cur != "" {
		after, err := strconv.ParseInt(cur, 10, 64)
		if err != nil || after < 0 {
			return q, errBadRequest
		}
		q.After = after
	}
	return q, nil
}

// auditPage answers "who accessed this patient": the company's events,
// narrowed to a customer or an agent. Reading the trail is an event too.
func (s *Site) auditPage(c *fiber.Ctx) error {
	q, err := auditQuery(c)
	if err != nil {
		return s.fail(c, err)
	}
	data := map[string]any{"CustomerID": c.Query("customer_id"), "Agent": q.Agent}
	if s.auditor == nil {
		return s.render(c, "audit", data)
	}
	var page audit.Page
	err = s.change(audit.ActionList, "audit-events", func(c *fiber.Ctx) error {
		var err error
		page, err = s.auditor.List(ctx(c), domain.Grant{CompanyID: memberOf(c).Company}, q)
		return err
	})(c)
	if err != nil || c.Response().StatusCode() >= 400 {
		return err
	}
	events := make([]audit.Event, 0, len(page.Events))
	for _, raw := range page.Events {
		var e audit.Event
		if err := json.Unmarshal(raw, &e); err != nil {
			return s.fail(c, err)
		}
		events = append(events, e)
	}
	if page.HasMore {
		data["Next"] = strconv.FormatInt(page.Last, 10)
	}
	data["Events"] = events
	return s.render(c, "audit", data)
}

// maxExport bounds an export from the page, which is built in memory.
const maxExport = 50_000

// auditExport downloads the events the filters select as JSON lines, each
// the event as the chain keeps it.
func (s *Site) auditExport(c *fiber.Ctx) error {
	q, err := auditQuery(c)
	if err != nil {
		return s.fail(c, err)
	}
	if s.auditor == nil {
		return s.fail(c, domain.ErrNotFound)
	}
	var out []byte
	n := 0
	err = s.change(audit.ActionExport, "audit-events", func(c *fiber.Ctx) error {
		for q.Limit = 500; ; {
			page, err := s.auditor.List(ctx(c), domain.Grant{CompanyID: memberOf(c).Company}, q)
			if err != nil {
				return err
			}
			if n += len(page.Events); n > maxExport {
				return &domain.ValidationError{Field: "customer_id", Message: fmt.Sprintf(
					"more than %d events: narrow the export to a customer or an agent (the operator's export has no bound)", maxExport)}
			}
			for _, e := range page.Events {
				out = append(append(out, e...), '\n')
			}
			if !page.HasMore {
				return nil
			}
			q.After = page.Last
		}
	})(c)
	if err != nil || c.Response().StatusCode() >= 400 {
		return err
	}
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="praxis-audit.jsonl"`)
	c.Type("jsonl")
	c.Set(fiber.HeaderContentType, "application/jsonl")
	return c.Send(out)
}

// webhooksView shows the company's endpoints; with id, one endpoint's
// delivery log; with a secret, the one showing of a new endpoint's.
func (s *Site) webhooksView(c *fiber.Ctx, id uuid.UUID, secret string, ping *webhook.Attempt) error {
	m := memberOf(c)
	data := map[string]any{}
	endpoints, err := s.settings.Webhooks(ctx(c), m)
	switch {
	case errors.Is(err, domain.ErrWebhooksDisabled) || errors.Is(err, domain.ErrNotFound):
		data["Off"] = true // no key: the use case answers 503, the page says why
	case err != nil:
		return s.fail(c, err)
	}
	data["Endpoints"] = endpoints
	if id != uuid.Nil {
		e, attempts, err := s.settings.WebhookDeliveries(ctx(c), m, id)
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
	e, secret, err := s.settings.CreateWebhook(ctx(c), memberOf(c), strings.TrimSpace(form.Get("url")), types)
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
	a, err := s.settings.PingWebhook(ctx(c), memberOf(c), id)
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
	if err := s.settings.ReplayWebhook(ctx(c), memberOf(c), id, version, since); err != nil {
		return err
	}
	return c.Redirect("/settings/webhooks/"+id.String(), fiber.StatusSeeOther)
}

func (s *Site) deleteWebhook(c *fiber.Ctx) error {
	id, _, version, err := versionedForm(c)
	if err != nil {
		return err
	}
	if err := s.settings.DeleteWebhook(ctx(c), memberOf(c), id, version); err != nil {
		return err
	}
	return c.Redirect("/settings/webhooks", fiber.StatusSeeOther)
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
