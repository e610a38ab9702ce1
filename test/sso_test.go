// Holds docs/contract.md §13 The settings pages: single sign-on.

package test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	oidcstorage "github.com/zitadel/oidc/v3/example/server/storage"
)

// startProvider runs a real OpenID provider (zitadel's certified library,
// with its example storage and login page) on 127.0.0.1: another site than
// localhost, where the settings are. Its user test-user@127.0.0.1 (password
// verysecure) has the verified address test-user@zitadel.ch.
func startProvider(t *testing.T, clientID, secret, redirect string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String() + "/"
	// Its own client list: RegisterClients would write a map every provider shares.
	clients := map[string]*oidcstorage.Client{clientID: oidcstorage.WebClient(clientID, secret, redirect)}
	store := oidcstorage.NewStorageWithClients(oidcstorage.NewUserStore(issuer), clients)
	srv := &http.Server{Handler: exampleop.SetupServer(issuer, store, nil, false), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return issuer
}

// TestSettingsSingleSignOn: a member signs in at the operator's OpenID
// provider (authorization code with PKCE), matched by the verified address;
// a callback whose state is not the session's is refused.
func TestSettingsSingleSignOn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be backend) {
		addr, site := settingsAddr(t)
		clientID := "praxis-" + be.name
		issuer := startProvider(t, clientID, "sso-secret", site+"/settings/sso/callback")
		s := startServerAt(t, be, addr, "PRAXIS_PUBLIC_URL="+site, "PRAXIS_SSO_ISSUER="+issuer, "PRAXIS_SSO_CLIENT_ID="+clientID,
			"PRAXIS_SSO_CLIENT_SECRET=sso-secret", "PRAXIS_SSO_NAME=Praxis-IdP")
		c := s.newCompany(t, 1<<20)
		path := s.invite(t, c, site, "test-user@zitadel.ch")
		b := newBrowser(t, site, shotsDir(t, "sso-"+be.name))
		b.join(path)
		b.click("#signout")
		b.waitPath("/settings/signin")
		b.screenshot("signin-sso-en")

		b.click("#sso")
		b.do(chromedp.WaitVisible(chromedp.CSS("#username")),
			chromedp.SendKeys(chromedp.CSS("#username"), "test-user@127.0.0.1"),
			chromedp.SendKeys(chromedp.CSS("#password"), "verysecure"))
		b.click(`button[type="submit"]`)
		b.waitPath("/settings/")
		if who := b.text(".who"); !strings.Contains(who, "test-user@zitadel.ch") {
			t.Errorf("signed in as %q", who)
		}
		b.open("/settings/audit")
		if page := b.html(); !strings.Contains(page, "settings.sessions") {
			t.Error("the single sign-on is not in the audit trail")
		}

		// A forged callback: no session state, or another one.
		p := &pageClient{t: t, site: site, cookies: map[string]string{}}
		p.do(http.MethodGet, "/settings/signin", "", "")
		if code, _, _ := p.do(http.MethodGet, "/settings/sso/finish?code=x&state=y", "", ""); code != http.StatusUnauthorized {
			t.Errorf("a callback of no sign-in: %d, want 401", code)
		}
		if code, header, _ := p.do(http.MethodGet, "/settings/sso/start", "", ""); code != http.StatusSeeOther || !strings.HasPrefix(header.Get("Location"), issuer) ||
			!strings.Contains(header.Get("Location"), "code_challenge_method=S256") {
			t.Errorf("start: %d to %q, want the provider with PKCE", code, header.Get("Location"))
		}
		if code, _, _ := p.do(http.MethodGet, "/settings/sso/finish?code=x&state=forged", "", ""); code != http.StatusUnauthorized {
			t.Errorf("a callback with another state: %d, want 401", code)
		}
	})
}
