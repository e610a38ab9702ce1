package web

import (
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// TestEveryMessageInBothLanguages: every key a template asks for is in the
// German and the English catalogue, and the two catalogues have the same keys.
func TestEveryMessageInBothLanguages(t *testing.T) {
	used := regexp.MustCompile(`\.Tf? "([a-z_.0-9]+)"`)
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil || len(files) < len(pageNames) {
		t.Fatalf("templates: %v %v", files, err)
	}
	keys := map[string]bool{"error.400": true, "error.401": true, "error.403": true, "error.404": true, "error.409": true,
		"error.413": true, "error.422": true, "error.429": true, "error.500": true, "error.503": true, "role.admin": true, "role.viewer": true}
	for _, name := range pageNames {
		keys["title."+name] = true
	}
	for _, f := range files {
		b, _ := fs.ReadFile(templateFS, f)
		for _, m := range used.FindAllStringSubmatch(string(b), -1) {
			keys[m[1]] = true
		}
	}
	for lang, catalogue := range messages {
		for key := range keys {
			if _, ok := catalogue[key]; !ok {
				t.Errorf("%s has no %q", lang, key)
			}
		}
		for key := range catalogue {
			if _, ok := messages["de"][key]; !ok {
				t.Errorf("%q is in %s, not in de", key, lang)
			}
			if _, ok := messages["en"][key]; !ok {
				t.Errorf("%q is in %s, not in en", key, lang)
			}
		}
	}
	if _, err := parsePages(); err != nil {
		t.Fatal(err)
	}
}

// TestLocalPath: the language switch goes back only to a page of the site,
// never to an invitation link or another origin.
func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/settings/staff":                "/settings/staff",
		"/settings/audit?customer_id=1":  "/settings/audit",
		"https://evil.example/settings/": "/settings/",
		"//evil.example/settings":        "/settings/",
		"/settings/join/c/token":         "/settings/",
		"/api/oauth/v2/resource/company": "/settings/",
		"javascript:alert(1)":            "/settings/",
		"%zz":                            "/settings/",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAnAddressTurnsTheSiteOff: passkeys refuse an IP address as their
// relying party, so a public URL that is one leaves the API serving and the
// settings answering 404 with the reason.
func TestAnAddressTurnsTheSiteOff(t *testing.T) {
	s, err := New(Options{SiteURL: "https://10.0.0.5"}, nil, API{}, nil, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	s.Register(app)
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/settings/signin", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "host name") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	if _, err := New(Options{SiteURL: "no host"}, nil, API{}, nil, nil, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a public URL without a host was taken")
	}
}
