package test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/test/testenv"
)

// pageClient is a browser without a browser: it keeps the settings' cookies
// (Go's cookie jar refuses Secure cookies over http://localhost) and the
// page's CSRF token.
type pageClient struct {
	t       *testing.T
	site    string
	cookies map[string]string
	csrf    string
}

// settingsAddr is a free loopback address for a server and the public URL
// its settings pages are reached at: localhost on that port (passkeys
// refuse an IP address as their relying party).
func settingsAddr(t *testing.T) (addr, site string) {
	addr = testenv.FreeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	return addr, "http://localhost:" + port
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

func (p *pageClient) do(method, path, contentType, body string) (int, http.Header, string) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.site+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if p.csrf != "" {
		req.Header.Set("X-CSRF-Token", p.csrf)
	}
	var jar []string
	for k, v := range p.cookies {
		jar = append(jar, k+"="+v)
	}
	req.Header.Set("Cookie", strings.Join(jar, "; "))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, c := range resp.Cookies() {
		p.cookies[c.Name] = c.Value
	}
	if m := csrfMeta.FindSubmatch(b); m != nil {
		p.csrf = string(m[1])
	}
	return resp.StatusCode, resp.Header, string(b)
}

// TestSettingsSignInIsThrottled: failed passkey sign-ins from one address
// lock it out for a while (429 with Retry-After), on every replica's store.
func TestSettingsSignInIsThrottled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be backend) {
		addr, site := settingsAddr(t)
		startServerAt(t, be, addr, "PRAXIS_PUBLIC_URL="+site, "PRAXIS_AUTH_MAX_FAILURES=3")
		p := &pageClient{t: t, site: site, cookies: map[string]string{}}
		if code, _, _ := p.do(http.MethodGet, "/settings/signin", "", ""); code != http.StatusOK || p.csrf == "" {
			t.Fatalf("sign-in page: %d, token %q", code, p.csrf)
		}
		forged := `{"credential":{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AAAA","signature":"AAAA","userHandle":"AAAA"}}}`
		for i := range 3 {
			if code, _, body := p.do(http.MethodPost, "/settings/signin/begin", "application/json", "{}"); code != http.StatusOK || !strings.Contains(body, "challenge") {
				t.Fatalf("attempt %d: begin %d %s", i, code, body)
			}
			if code, _, body := p.do(http.MethodPost, "/settings/signin/finish", "application/json", forged); code != http.StatusUnauthorized {
				t.Fatalf("attempt %d: a forged assertion: %d %s, want 401", i, code, body)
			}
		}
		code, header, _ := p.do(http.MethodPost, "/settings/signin/begin", "application/json", "{}")
		if code != http.StatusTooManyRequests || header.Get("Retry-After") == "" {
			t.Errorf("after 3 failures: %d, Retry-After %q; want 429 with Retry-After", code, header.Get("Retry-After"))
		}
		// Without the CSRF token even the ceremony's start is refused.
		p.csrf = ""
		if code, _, _ := p.do(http.MethodPost, "/settings/signin/begin", "application/json", "{}"); code != http.StatusForbidden {
			t.Errorf("begin without a CSRF token: %d, want 403", code)
		}
	})
}
