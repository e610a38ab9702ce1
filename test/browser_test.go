// Holds docs/contract.md §13 The settings pages, in a real browser.

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/praxis-health/praxis/test/testenv"
)

// browser is one headless Chromium with a virtual passkey authenticator,
// driving the settings pages of one server.
type browser struct {
	t             *testing.T
	ctx           context.Context
	site          string // http://localhost:PORT
	authenticator cdpwebauthn.AuthenticatorID
	shots         string // where screenshots go
	pages         []string
}

// newBrowser starts Debian's chromium; without it the test skips loudly,
// or fails under CI=true.
func newBrowser(t *testing.T, site, shots string) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium (apt-get install chromium)", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("lang", "en-US"))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, site: site, shots: shots}
	if _, err := chromedp.Call(ctx, cdpwebauthn.Enable, cdpwebauthn.EnableParams{}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b.newAuthenticator()
	return b
}

// newAuthenticator replaces the virtual authenticator by an empty one: a
// person with a new device.
func (b *browser) newAuthenticator() {
	b.t.Helper()
	if b.authenticator != "" {
		if _, err := chromedp.Call(b.ctx, cdpwebauthn.RemoveVirtualAuthenticator,
			cdpwebauthn.RemoveVirtualAuthenticatorParams{AuthenticatorID: b.authenticator}); err != nil {
			b.t.Fatal(err)
		}
	}
	res, err := chromedp.Call(b.ctx, cdpwebauthn.AddVirtualAuthenticator, cdpwebauthn.AddVirtualAuthenticatorParams{
		Options: &cdpwebauthn.VirtualAuthenticatorOptions{Protocol: cdpwebauthn.AuthenticatorProtocolCtap2,
			Ctap2version: cdpwebauthn.Ctap2versionCtap21, Transport: cdpwebauthn.AuthenticatorTransportInternal,
			HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
	if err != nil {
		b.t.Fatalf("virtual authenticator: %v", err)
	}
	b.authenticator = res.AuthenticatorID
}

func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v (at %s)", err, b.location())
	}
}

func (b *browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	return loc
}

func (b *browser) open(path string) { b.t.Helper(); b.do(chromedp.Navigate(b.site + path)) }

func (b *browser) click(sel string) { b.t.Helper(); b.do(chromedp.Click(chromedp.CSS(sel))) }

// submitFresh clicks a button that shows a secret; when the page asks for
// the passkey again first, it confirms and clicks again. fill, if given,
// fills the button's form before each click: the page the passkey check
// returns to is a fresh one, its fields empty.
func (b *browser) submitFresh(button string, fill ...func()) {
	b.t.Helper()
	b.submitFreshFor(button, "#shown-secret", fill...)
}

// submitFreshFor is submitFresh for a button whose answer shows shown.
func (b *browser) submitFreshFor(button, shown string, fill ...func()) {
	b.t.Helper()
	for _, f := range fill {
		f()
	}
	b.click(button)
	b.waitJS(`!!document.querySelector("` + shown + `, #verify")`)
	if b.evalString(`document.querySelector("#verify") ? "verify" : ""`) == "verify" {
		b.click("#verify")
		b.waitJS(`!!document.querySelector(` + fmt.Sprintf("%q", button) + `)`)
		for _, f := range fill {
			f()
		}
		b.click(button)
	}
	b.do(chromedp.WaitVisible(chromedp.CSS(shown)))
}

// join opens an invitation's path, registers a passkey with the current
// authenticator and waits for the overview.
func (b *browser) join(path string) {
	b.t.Helper()
	b.open(path)
	b.click("#register")
	b.waitPath("/settings/")
}

// submit clicks a form's button and waits for the answer's page to have
// loaded, also when it is the same address as before.
func (b *browser) submit(button string) {
	b.t.Helper()
	b.evalString(`window.__praxisBefore = "old"; "ok"`)
	b.click(button)
	b.waitJS(`window.__praxisBefore === undefined && document.readyState === "complete"`)
}

// waitPath waits until the browser is on path (after a redirect or a ceremony).
func (b *browser) waitPath(path string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		u, err := url.Parse(b.location())
		if err == nil && u.Path == path {
			b.do(chromedp.WaitReady(chromedp.CSS("body")))
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("browser at %s, want %s; the page says %q", b.location(), path, b.text("main"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitText waits until the element sel holds want (after a form that
// answers with the same page).
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		cancel()
		if err == nil && strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s says %q, want %q (at %s)", sel, got, want, b.location())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitJS waits until the expression is true in the page; a navigation in
// between only delays it.
func (b *browser) waitJS(expr string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("never true: %s (at %s)", expr, b.location())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// evalString evaluates expr in the page, again after a navigation got in
// the way (a node or a context of the page before).
func (b *browser) evalString(expr string) string {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		cancel()
		if err == nil {
			return v
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("evaluate %s: %v (at %s)", expr, err, b.location())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	b.do(chromedp.WaitVisible(chromedp.CSS(sel)))
	return strings.TrimSpace(b.evalString(fmt.Sprintf(`document.querySelector(%q).innerText`, sel)))
}

// html is the page as served now; every page is kept for the secret check.
func (b *browser) html() string {
	b.t.Helper()
	s := b.evalString(`document.documentElement.outerHTML`)
	b.pages = append(b.pages, s)
	return s
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	// A page that has just been navigated to may not be laid out yet (a
	// screenshot of it fails with "0 width"): wait for its layout first.
	b.waitJS(`document.readyState === "complete" && document.documentElement.getBoundingClientRect().width > 0`)
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	for attempt := 0; err != nil && strings.Contains(err.Error(), "0 width") && attempt < 5; attempt++ {
		time.Sleep(200 * time.Millisecond)
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	}
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// cookies are the browser's cookies of the site as one Cookie header.
func (b *browser) cookies() string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{b.site + "/settings/"}})
	if err != nil {
		b.t.Fatal(err)
	}
	var parts []string
	for _, c := range res.Cookies {
		if !c.Secure || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || !strings.HasPrefix(c.Name, "__Host-") || c.Path != "/" {
			b.t.Errorf("cookie %s: secure %v, httpOnly %v, sameSite %s, path %s; want __Host-, Secure, HttpOnly, Strict, /",
				c.Name, c.Secure, c.HTTPOnly, c.SameSite, c.Path)
		}
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// csrf is the page's CSRF token, as its forms carry it.
func (b *browser) csrf() string {
	b.t.Helper()
	return b.evalString(`document.querySelector('meta[name="csrf-token"]').content`)
}

// forge posts a form with the browser's cookies from outside the browser,
// as another site's page would (but with the cookies, which SameSite=Strict
// would not even send).
func forge(t *testing.T, site, path, cookies string, form url.Values) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, site+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", cookies)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// shotsDir is the artefact folder of the settings' screenshots.
func shotsDir(t *testing.T, name string) string {
	dir := filepath.Join("artifacts", "settings", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSettingsInABrowser walks the practice's settings pages in headless
// Chromium with a virtual authenticator, on both backends: invite → passkey
// → client → its secret works → revoke → it fails; the upload secret's
// rotation; a viewer; a forged form; another company's object; sign-out.
func TestSettingsInABrowser(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be backend) {
		addr, site := settingsAddr(t)
		// Spans as JSON in the server's output: the secret check reads traces too.
		s := startServerAt(t, be, addr, append(webhookEnv(t, "1"), "PRAXIS_PUBLIC_URL="+site, "PRAXIS_SETTINGS_REVERIFY=4s",
			"OTEL_TRACES_EXPORTER=console")...)
		c := s.newCompany(t, 10<<20)
		customer := s.newCustomer(t, c)
		other := s.newCompany(t, 10<<20)
		othersClient := s.newClient(t, other, "company:read")
		joinPath := s.invite(t, c, site, "anna@praxis.example")
		s.praxis(t, nil, "admin", "company", "hold", "--company", c.ID, "--until", "2031-12-31", "--json")
		b := newBrowser(t, site, shotsDir(t, be.name))
		var secrets []string // every secret shown, to look for afterwards

		// The invitation registers a passkey and signs in.
		b.open(joinPath)
		b.screenshot("join-en")
		b.do(chromedp.SendKeys(chromedp.CSS("#passkey-name"), "Front desk"))
		b.click("#register")
		b.waitPath("/settings/")
		if got := b.text("dl.facts dd"); !strings.Contains(got, "Praxis") {
			t.Errorf("overview names %q", got)
		}
		if got := b.text("dl.facts"); !strings.Contains(got, "Retention hold") || !strings.Contains(got, "until the end of 2031-12-31") {
			t.Errorf("overview shows no retention hold: %q", got)
		}
		b.html()
		b.screenshot("overview-en")
		b.open(joinPath) // a spent link
		b.click("#register")
		time.Sleep(500 * time.Millisecond)
		if got := b.text("[data-status]"); !strings.Contains(got, "not found") && !strings.Contains(got, "Not found") {
			t.Errorf("a spent invitation link: %q", got)
		}

		// A client with the company:read scope; its secret works, then is revoked.
		// (Each form that shows a secret may meet the passkey check first:
		// the test's window is 4 s, and a loaded machine takes longer.)
		b.open("/settings/integrations")
		b.submitFresh("#create-client-button", func() {
			b.do(chromedp.SendKeys(chromedp.CSS("#client-name"), "Billing"),
				chromedp.Click(chromedp.CSS(`input[value="company:read"]`)))
		})
		cl := oauthClient{ID: b.text("#shown-client-id"), Secret: b.text("#shown-secret")}
		secrets = append(secrets, cl.Secret)
		b.screenshot("integrations-secret-en")
		if token := s.tokenFor(t, cl); s.getCompany(t, token).status != http.StatusOK {
			t.Fatal("the client made in the settings cannot read its company")
		}
		// Rotation: the new secret works, and the old one for a day more.
		b.open("/settings/integrations")
		// Scopes in the practice's words, not slugs (the table's names).
		if got := b.text(fmt.Sprintf(`tr[data-client="%s"] td.scopes`, cl.ID)); got != "Practice (read)" {
			t.Errorf("the client's scopes read %q, want %q", got, "Practice (read)")
		}
		if got := b.evalString(`document.querySelector('input[value="notes:write"]').getAttribute("aria-label")`); got != "Notes (write)" {
			t.Errorf("the notes:write box is labelled %q, want %q", got, "Notes (write)")
		}
		if got := b.text(`th[title="medical-fee-services"]`); got != "Medical fee services" {
			t.Errorf("a section's row reads %q, want its name", got)
		}
		b.submitFresh(fmt.Sprintf(`tr[data-client="%s"] button:not(.danger)`, cl.ID))
		rotated := oauthClient{ID: b.text("#shown-client-id"), Secret: b.text("#shown-secret")}
		secrets = append(secrets, rotated.Secret)
		if rotated.ID != cl.ID || rotated.Secret == cl.Secret {
			t.Fatalf("rotation showed %s", rotated.ID)
		}
		s.tokenFor(t, rotated)
		s.tokenFor(t, cl)
		b.open("/settings/integrations")
		b.html()
		b.submit(fmt.Sprintf(`tr[data-client="%s"] button.danger`, cl.ID))
		b.waitText(fmt.Sprintf(`tr[data-client="%s"]`, cl.ID), "revoked")
		if r := s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cl)); r.status != http.StatusUnauthorized {
			t.Errorf("token of a revoked client: %d, want 401", r.status)
		}
		b.waitText(fmt.Sprintf(`tr[data-client="%s"]`, cl.ID), "1 / 1") // its one resource call, today and this week
		b.html()
		b.screenshot("integrations-en")

		// A client that signs in with its key (SMART Backend Services): its
		// JWK Set pasted, no secret shown, no secret to rotate; its signed
		// assertion gets a token.
		key := newECKey(t, "settings-1")
		b.open("/settings/integrations")
		b.submitFreshFor("#create-client-button", "#shown-keys", func() {
			b.do(chromedp.SendKeys(chromedp.CSS("#client-name"), "FHIR sync"),
				chromedp.Click(chromedp.CSS(`input[value="company:read"]`)),
				chromedp.SetValue(chromedp.CSS("#client-jwks"), string(keySet(t, key))))
		})
		keyed := b.text("#shown-client-id")
		if b.evalString(`document.querySelector("#shown-secret") ? "shown" : ""`) != "" {
			t.Error("a client that signs in with its key was shown a secret")
		}
		b.screenshot("integrations-keyed-en")
		signed := s.signIn(t, assertion(t, key, keyed, site+"/api/oauth/v2/token", nil)) // the public URL is the site's
		if signed.status != http.StatusOK {
			t.Fatalf("the keyed client's assertion: %d %s", signed.status, signed.body)
		}
		b.open("/settings/integrations")
		if got := b.evalString(fmt.Sprintf(`document.querySelectorAll('tr[data-client="%s"] button:not(.danger)').length + " " + document.querySelector('tr[data-client="%s"] small.keys').textContent`, keyed, keyed)); got != "0 signs in with its key" {
			t.Errorf("the keyed client's row: %q", got)
		}

		// Another company's client is not found, and stays alive.
		cookies := b.cookies()
		if code := forge(t, site, "/settings/integrations/"+othersClient.ID+"/revoke", cookies, url.Values{"_csrf": {b.csrf()}}); code != http.StatusNotFound {
			t.Errorf("revoking another company's client: %d, want 404", code)
		}
		s.tokenFor(t, othersClient)
		// A form without the CSRF token, or with a wrong one, is refused.
		for _, token := range []string{"", "forged"} {
			if code := forge(t, site, "/settings/integrations", cookies, url.Values{"_csrf": {token}, "name": {"Evil"}, "scope": {"company:read"}}); code != http.StatusForbidden {
				t.Errorf("a form with CSRF token %q: %d, want 403", token, code)
			}
		}

		// The upload secret: after the reverification window the passkey is asked again.
		time.Sleep(4500 * time.Millisecond)
		b.open("/settings/devices")
		b.click("#rotate-upload-secret")
		b.do(chromedp.WaitVisible(chromedp.CSS("#verify")))
		b.screenshot("verify-en")
		b.click("#verify")
		b.waitPath("/settings/devices")
		b.click("#rotate-upload-secret")
		b.do(chromedp.WaitVisible(chromedp.CSS("#shown-secret")))
		fresh := b.text("#shown-secret")
		secrets = append(secrets, fresh)
		if cfg := b.text("#bridge-config"); !strings.Contains(cfg, "PRAXIS_BRIDGE_SECRET="+fresh) || !strings.Contains(cfg, "PRAXIS_BRIDGE_COMPANY="+c.ID) {
			t.Errorf("bridge configuration:\n%s", cfg)
		}
		b.screenshot("devices-secret-en")
		pdf := filePart("befund.pdf", pdfOfSize(2000))
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, customer), pdf); r.status == http.StatusOK {
			t.Error("the replaced upload secret still uploads")
		}
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(company{ID: c.ID, Secret: fresh}, customer), pdf); r.status != http.StatusOK {
			t.Errorf("the new upload secret: %d", r.status)
		}
		b.open("/settings/devices")
		b.html()
		secrets = append(secrets, b.devices(s, company{ID: c.ID, Secret: fresh})...)

		// A webhook endpoint: its secret, shown once, signs what the receiver gets.
		r := newReceiver(t)
		b.open("/settings/webhooks")
		b.submitFresh("#create-webhook", func() {
			b.do(chromedp.SetValue(chromedp.CSS("#webhook-url"), r.srv.URL), chromedp.SetValue(chromedp.CSS("#webhook-events"), "customers.created"))
		})
		hookSecret := b.text("#shown-secret")
		secrets = append(secrets, hookSecret)
		r.trust(t, hookSecret)
		endpoint := b.evalString(`document.querySelector("tr[data-endpoint]").dataset.endpoint`)
		b.screenshot("webhooks-secret-en")
		s.newCustomer(t, c, "--first-name", "Clara")
		waitFor(t, 20*time.Second, "a signed customers.created event", func() bool { return len(r.received()) > 0 })
		if ev := r.received()[0]; ev.Type != "customers.created" {
			t.Errorf("event %+v", ev)
		}
		// The log is saved a moment after the receiver answered: reload until it shows.
		waitFor(t, 20*time.Second, "the attempt in the delivery log", func() bool {
			b.open("/settings/webhooks/" + endpoint)
			return strings.Contains(b.text("#log-title + table tbody"), "customers.created")
		})
		b.submit("#ping-button")
		if got := b.text("#ping-result"); !strings.Contains(got, "delivered 204") {
			t.Errorf("test event: %q", got)
		}
		r.mu.Lock()
		last := r.raw[len(r.raw)-1]
		r.mu.Unlock()
		if !strings.Contains(string(last.body), `"type":"webhook.test"`) {
			t.Errorf("the receiver got %s", last.body)
		}
		b.do(chromedp.SetValue(chromedp.CSS("#replay-since"), time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")))
		before := len(r.received())
		b.submit("#replay-button")
		waitFor(t, 20*time.Second, "the replayed events", func() bool { return len(r.received()) > before })
		b.open("/settings/webhooks/" + endpoint)
		b.html()
		b.screenshot("webhooks-en")

		// A stale form (a second tab that showed the endpoint before it
		// changed) is refused with a clear message, not applied.
		b.open("/settings/webhooks")
		hooks := "Authorization: Bearer " + s.tokenFor(t, s.newClient(t, c, everyScope()))
		if r := s.request(t, http.MethodPatch, "/api/oauth/v2/resource/webhook-endpoints/"+endpoint, "application/json",
			`{"description":"changed in another tab"}`, hooks); r.status != http.StatusOK {
			t.Fatalf("change the endpoint meanwhile: %d %s", r.status, r.body)
		}
		b.submit(`form[action="/settings/webhooks/` + endpoint + `/delete"] button`)
		if got := b.text(`p[role="alert"]`); !strings.Contains(got, "Someone changed this in the meantime") {
			t.Errorf("a stale delete form: %q", got)
		}
		b.screenshot("webhooks-stale-en")
		if r := s.request(t, http.MethodGet, "/api/oauth/v2/resource/webhook-endpoints/"+endpoint, "", "", hooks); r.status != http.StatusOK {
			t.Errorf("the stale form deleted the endpoint: %d", r.status)
		}

		// A viewer is invited in the page, and may look but not change.
		b.open("/settings/staff")
		b.do(chromedp.SendKeys(chromedp.CSS("#invite-email"), "ben@praxis.example"))
		b.click("#invite-button")
		b.do(chromedp.WaitVisible(chromedp.CSS("#shown-link")))
		viewerLink := b.text("#shown-link")
		secrets = append(secrets, viewerLink)
		b.screenshot("staff-en")

		// A second passkey of one's own, on another device (an authenticator
		// refuses a second credential for the same account); the first one
		// removed; the last one stays.
		b.newAuthenticator()
		b.open("/settings/staff")
		b.do(chromedp.SendKeys(chromedp.CSS("#passkey-name"), "Laptop"))
		b.click("#add-passkey")
		b.waitJS(`document.querySelectorAll("#passkeys + ul li").length === 2`)
		b.submit("#passkeys + ul li:first-child button.danger")
		if n := b.evalString(`String(document.querySelectorAll("#passkeys + ul li").length)`); n != "1" {
			t.Errorf("passkeys after a removal: %s", n)
		}
		b.submit("#passkeys + ul li:first-child button.danger")
		if got := b.text("main"); !strings.Contains(got, "Not possible") {
			t.Errorf("removing the last passkey: %q", got)
		}
		b.audited(t, "audit-en")
		export := &pageClient{t: t, site: site, cookies: map[string]string{}}
		for _, kv := range strings.Split(b.cookies(), "; ") {
			k, v, _ := strings.Cut(kv, "=")
			export.cookies[k] = v
		}
		code, header, body := export.do(http.MethodGet, fmt.Sprintf("/settings/audit/export?customer_id=%d", customer), "", "")
		lines := strings.Split(strings.TrimSpace(body), "\n")
		if code != http.StatusOK || !strings.Contains(header.Get("Content-Disposition"), "attachment") || len(lines) < 3 {
			t.Errorf("export of the patient's events: %d, %d lines", code, len(lines))
		}
		for _, line := range lines {
			if !strings.Contains(line, fmt.Sprintf(`"customer_ids":[%d]`, customer)) {
				t.Errorf("exported an event of another patient or none: %s", line)
			}
		}

		// The language switch: every page in German too.
		b.submit(`button[name="lang"]`)
		b.waitJS(`document.documentElement.lang === "de" && location.pathname === "/settings/audit"`)
		for _, p := range []string{"", "integrations", "devices", "webhooks", "staff", "audit"} {
			b.open("/settings/" + p)
			b.html()
			b.accessible(p)
			b.screenshot(map[string]string{"": "overview"}[p] + p + "-de")
		}

		b.click("#signout")
		b.waitPath("/settings/signin")
		b.screenshot("signin-de")
		b.open("/settings/integrations")
		b.waitPath("/settings/signin")
		if code := forge(t, site, "/settings/integrations", cookies, url.Values{"_csrf": {"x"}, "name": {"Late"}}); code != http.StatusForbidden && code != http.StatusUnauthorized {
			t.Errorf("the signed-out session's cookies still post: %d", code)
		}

		// The viewer, on a device of their own.
		b.newAuthenticator()
		b.join(strings.TrimPrefix(viewerLink, site))
		b.open("/settings/integrations")
		if html := b.html(); strings.Contains(html, `id="create-client"`) {
			t.Error("a viewer sees the form to create a client")
		}
		if code := forge(t, site, "/settings/integrations", b.cookies(), url.Values{"_csrf": {b.csrf()}, "name": {"Viewer's"}, "scope": {"company:read"}}); code != http.StatusForbidden {
			t.Errorf("a viewer's client creation: %d, want 403", code)
		}
		// The pages do what the API has through the API's own use cases, with
		// the viewer's grant (the read scopes): they refuse each change, and
		// the reads pass.
		for path, form := range map[string]url.Values{
			"/settings/webhooks":         {"url": {"https://hooks.example/praxis"}, "events": {"customers.created"}},
			"/settings/devices/register": {"name": {"EKG"}, "gdt_id": {"EKG1"}, "gdt_version": {"3.0"}},
			"/settings/devices/orders":   {"customer_id": {"1"}, "device_id": {"019c0000-0000-7000-8000-000000000000"}, "type": {"6302"}},
		} {
			form.Set("_csrf", b.csrf())
			if code := forge(t, site, path, b.cookies(), form); code != http.StatusForbidden {
				t.Errorf("a viewer's POST %s: %d, want 403", path, code)
			}
		}
		for _, path := range []string{"/settings/webhooks", "/settings/devices", "/settings/audit"} {
			req, _ := http.NewRequest(http.MethodGet, site+path, nil)
			req.Header.Set("Cookie", b.cookies())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("a viewer's GET %s: %d, want 200", path, resp.StatusCode)
			}
		}
		b.click("#signout")
		b.waitPath("/settings/signin")

		// Signing in again: the passkey names its account.
		b.click("#signin")
		b.waitPath("/settings/")
		if who := b.text(".who"); !strings.Contains(who, "ben@praxis.example") {
			t.Errorf("signed in as %q, want the viewer", who)
		}

		// No secret appears in a page after its showing, nor in the log or a span.
		if !strings.Contains(s.log.String(), `"Name":"POST /settings/integrations"`) {
			t.Error("the server's output holds no span of the settings")
		}
		for _, secret := range secrets {
			for i, page := range b.pages {
				if strings.Contains(page, secret) {
					t.Errorf("page %d (after its one showing) holds a secret", i)
				}
			}
			if strings.Contains(s.log.String(), secret) {
				t.Error("the server log holds a secret")
			}
		}
		for _, token := range []string{strings.TrimPrefix(joinPath, "/settings/join/"+c.ID+"/")} {
			if strings.Contains(s.log.String(), token) {
				t.Error("the server log holds an invitation token")
			}
		}
	})
}

// accessible checks the page's controls: each has a name a screen reader
// reads (its text, a label, aria-label), and each is reached by the Tab key
// (none taken out of the order, none disabled without reason).
func (b *browser) accessible(page string) {
	b.t.Helper()
	unnamed := b.evalString(`[...document.querySelectorAll("main input:not([type=hidden]), main select, main button, main a, header button, header a")]
		.filter(e => !(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.textContent.trim())
		.map(e => e.outerHTML.slice(0, 80)).join(" | ")`)
	if unnamed != "" {
		b.t.Errorf("page %q: controls without a name: %s", page, unnamed)
	}
	untabbable := b.evalString(`[...document.querySelectorAll("input:not([type=hidden]), select, button, a[href]")]
		.filter(e => e.tabIndex < 0 || e.disabled).map(e => e.outerHTML.slice(0, 80)).join(" | ")`)
	if untabbable != "" {
		b.t.Errorf("page %q: controls the Tab key does not reach: %s", page, untabbable)
	}
	// Tab from the top reaches the first control of the page's content.
	b.do(chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"))
	if focused := b.evalString(`document.activeElement ? document.activeElement.tagName : ""`); focused == "BODY" || focused == "" {
		b.t.Errorf("page %q: Tab focuses nothing", page)
	}
}

// audited checks that the audit page shows the settings' own changes.
func (b *browser) audited(t *testing.T, shot string) {
	t.Helper()
	b.open("/settings/audit")
	page := b.html()
	for _, section := range []string{"settings.clients", "settings.upload_secret", "settings.staff", "settings.passkeys", "settings.sessions", "webhook-endpoints"} {
		if !strings.Contains(page, section) {
			t.Errorf("the audit page shows no %s event", section)
		}
	}
	b.screenshot(shot)
}

// TestSettingsSessionTimes: a session ends after the idle timeout without a
// request, and after its lifetime however busy (here 3 s and 8 s).
func TestSettingsSessionTimes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be backend) {
		addr, site := settingsAddr(t)
		s := startServerAt(t, be, addr, "PRAXIS_PUBLIC_URL="+site, "PRAXIS_SETTINGS_IDLE_TIMEOUT=3s", "PRAXIS_SETTINGS_SESSION_LIFETIME=8s")
		c := s.newCompany(t, 1<<20)
		path := s.invite(t, c, site, "idle@praxis.example")
		b := newBrowser(t, site, shotsDir(t, "times-"+be.name))
		b.join(path)

		time.Sleep(4 * time.Second) // idle past 3 s
		b.open("/settings/staff")
		b.waitPath("/settings/signin")

		b.click("#signin")
		b.waitPath("/settings/")
		signedIn := time.Now()
		for time.Since(signedIn) < 7*time.Second { // busy, never idle for 3 s
			b.open("/settings/staff")
			b.waitPath("/settings/staff")
			time.Sleep(300 * time.Millisecond)
		}
		time.Sleep(time.Until(signedIn.Add(8500 * time.Millisecond)))
		b.open("/settings/staff")
		b.waitPath("/settings/signin")
	})
}

// devices walks the Devices tab (docs/contract.md §14): a device registered,
// its credential shown once with a bridge configuration that works, a
// patient sent to it twice, a result that cannot tell its two orders apart
// assigned by hand, the other order cancelled. It answers the secrets shown.
func (b *browser) devices(s *server, c company) []string {
	t := b.t
	t.Helper()
	b.do(chromedp.SetValue(chromedp.CSS("#device-name"), "ECG room 2"), chromedp.SetValue(chromedp.CSS("#device-gdt-id"), "EKG1"),
		chromedp.SetValue(chromedp.CSS("#device-praxis-id"), "PRAX"), chromedp.SetValue(chromedp.CSS("#device-procedures"), "EKG04 Ruhe-EKG"))
	b.submit("#register-button")
	if got := b.text("#devices tbody"); !strings.Contains(got, "ECG room 2") || !strings.Contains(got, "EKG04") {
		t.Fatalf("the registered device: %q", got)
	}
	b.submitFresh("tr[data-device] button")
	secret := b.text("#shown-secret")
	var cfg struct {
		Company string `json:"company"`
		Devices []struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(b.text("#device-config")), &cfg); err != nil || cfg.Company != c.ID || len(cfg.Devices) != 1 || cfg.Devices[0].ClientSecret != secret {
		t.Fatalf("the bridge configuration: %v %+v", err, cfg)
	}
	s.tokenFor(t, oauthClient{ID: cfg.Devices[0].ClientID, Secret: secret}) // the credential works
	b.screenshot("devices-credential-en")

	var patient struct {
		CustomerID int64 `json:"customer_id"`
	}
	s.praxis(t, &patient, "admin", "customer", "create", "--company", c.ID, "--first-name", "Jürgen", "--last-name", "Wałęsa",
		"--birth-date", "1961-03-07", "--json")
	b.open("/settings/devices")
	for range 2 {
		b.do(chromedp.SetValue(chromedp.CSS("#order-customer"), fmt.Sprint(patient.CustomerID)), chromedp.SetValue(chromedp.CSS("#order-procedure"), "EKG04"))
		b.submit("#send-button")
		if got := b.text("#order-sent"); !strings.Contains(got, "is made") {
			t.Fatalf("send a patient: %q", got)
		}
	}
	if got := b.text("#orders tbody"); strings.Count(got, "open") != 2 || !strings.Contains(got, "name approximated") {
		t.Errorf("the orders: %q", got)
	}
	// A result that names neither order (no 8310, no 8314): two candidates, so it waits for a person.
	r := s.upload(t, "/api/gdt/upload", gdtHeaders(c, patient.CustomerID),
		filePart("EKG.gdt", gdtRecord([2]string{"8000", "6310"}, [2]string{"8316", "EKG1"}, [2]string{"3000", fmt.Sprint(patient.CustomerID)},
			[2]string{"8402", "EKG04"}, [2]string{"6200", "26112026"})))
	if r.status != http.StatusOK || len(r.Files) != 1 || r.Files[0].OrderMatch == nil || *r.Files[0].OrderMatch != "unmatched" {
		t.Fatalf("the ambiguous result: %+v", r)
	}
	b.open("/settings/devices")
	b.screenshot("devices-en")
	b.submit("#unmatched form button")
	if got := b.text("#unmatched tbody"); !strings.Contains(got, "Every result is filed") {
		t.Errorf("after assigning: %q", got)
	}
	if got := b.text("#orders tbody"); !strings.Contains(got, "done") {
		t.Errorf("the assigned order: %q", got)
	}
	b.submit("#orders form button")
	if got := b.text("#orders tbody"); !strings.Contains(got, "cancelled") || !strings.Contains(got, "done") {
		t.Errorf("after cancelling the other: %q", got)
	}
	b.screenshot("devices-orders-en")
	return []string{secret}
}
