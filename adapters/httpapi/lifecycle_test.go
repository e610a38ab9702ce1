package httpapi

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/release"
)

// A document that deprecates each kind of thing once: an operation, a
// field of one answer's schema (behind a $ref, inside an array), a query
// parameter and a body field.
const lifecycleDoc = `{
  "paths": {
    "/old": {"get": {"deprecated": true, "x-deprecated-at": "2026-11-24", "x-sunset": "2027-01-05", "responses": {}}},
    "/items/{id}": {"get": {"responses": {
      "200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}}},
      "404": {"content": {"application/problem+json": {"schema": {"type": "object"}}}}}}},
    "/search": {"get": {"parameters": [{"$ref": "#/components/parameters/Old"}, {"name": "q", "in": "query"}], "responses": {}}},
    "/items": {"post": {"requestBody": {"content": {"application/json": {"schema": {"properties": {
      "name": {"type": "string"},
      "label": {"type": "string", "deprecated": true, "x-deprecated-at": "2026-11-24", "x-sunset": "2027-02-01"}}}}}},
      "responses": {}}},
    "/fresh": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Plain"}}}}}}}
  },
  "components": {
    "parameters": {"Old": {"name": "old", "in": "query", "deprecated": true, "x-deprecated-at": "2026-11-24", "x-sunset": "2027-01-10"}},
    "schemas": {
      "Item": {"type": "object", "properties": {"parts": {"type": "array", "items": {"$ref": "#/components/schemas/Part"}}, "self": {"$ref": "#/components/schemas/Item"}}},
      "Part": {"type": "object", "properties": {"size": {"type": "integer", "deprecated": true, "x-deprecated-at": "2026-11-24", "x-sunset": "2027-03-01"}}},
      "Plain": {"type": "object", "properties": {"name": {"type": "string"}}}
    }
  }
}`

type countedCalls struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *countedCalls) Count(_ context.Context, company domain.CompanyID, client domain.ClientID, op string, _ time.Time, n int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[string(client)+" "+op] += int(n)
	return nil
}

func (c *countedCalls) List(context.Context, *domain.CompanyID) ([]release.Calls, error) {
	return nil, nil
}

type lifecycleRoutes struct{}

func (lifecycleRoutes) Register(r fiber.Router) {
	r.Use(func(c *fiber.Ctx) error {
		if client := c.Get("X-Client"); client != "" {
			httpkit.SetGrant(c, domain.Grant{CompanyID: domain.NewCompanyID(), ClientID: domain.ClientID(client)})
		}
		return c.Next()
	})
	ok := func(c *fiber.Ctx) error { return c.SendString("{}") }
	r.Get("/old", ok)
	r.Get("/items/:id", func(c *fiber.Ctx) error {
		if c.Params("id") == "missing" {
			return domain.ErrNotFound
		}
		return ok(c)
	})
	r.Get("/search", ok)
	r.Post("/items", ok)
	r.Get("/fresh", ok)
}

// TestLifecycleHeaders: each deprecated thing announces itself with its
// own dates, only when touched; the release is named on every answer; a
// removed operation answers 410 naming its notes; clients' calls are counted.
func TestLifecycleHeaders(t *testing.T) {
	t.Parallel()
	calls := &countedCalls{calls: map[string]int{}}
	releases := []release.Release{{Date: "2026-11-24", Summary: "s", Changes: []release.Change{
		{Kind: release.KindRemoved, Text: "gone", Operations: []string{"DELETE /gone/{id}"}, Sunset: "2026-11-20"}}}}
	life, err := newLifecycle([]byte(lifecycleDoc), releases, calls, httpkit.Telemetry{})
	if err != nil {
		t.Fatal(err)
	}
	app := Hosted(httpkit.Telemetry{}, life, lifecycleRoutes{})
	for _, tc := range []struct {
		method, target, body string
		status               int
		sunset               string // "" for no deprecation headers
	}{
		{"GET", "/old", "", 200, "Tue, 05 Jan 2027 00:00:00 GMT"},
		{"GET", "/items/1", "", 200, "Mon, 01 Mar 2027 00:00:00 GMT"},
		{"GET", "/items/missing", "", 404, ""}, // the problem's schema holds nothing deprecated
		{"GET", "/search?q=x", "", 200, ""},
		{"GET", "/search?q=x&old=1", "", 200, "Sun, 10 Jan 2027 00:00:00 GMT"},
		{"POST", "/items", `{"name":"a"}`, 200, ""},
		{"POST", "/items", `{"name":"a","label":"b"}`, 200, "Mon, 01 Feb 2027 00:00:00 GMT"},
		{"GET", "/fresh", "", 200, ""},
		{"DELETE", "/gone/7", "", 410, ""},
	} {
		req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Client", "pc_one")
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		name := tc.method + " " + tc.target + " " + tc.body
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d %s, want %d", name, resp.StatusCode, body, tc.status)
		}
		if got := resp.Header.Get("Praxis-Api-Release"); got != "2026-11-24" {
			t.Errorf("%s: Praxis-Api-Release %q", name, got)
		}
		if tc.status == 410 {
			if !strings.Contains(string(body), "/api/oauth/v2/releases/2026-11-24") || resp.Header.Get("Sunset") != "Fri, 20 Nov 2026 00:00:00 GMT" {
				t.Errorf("%s: 410 %s, Sunset %q: want the release notes named and the sunset", name, body, resp.Header.Get("Sunset"))
			}
			continue
		}
		dep, sunset, link := resp.Header.Get("Deprecation"), resp.Header.Get("Sunset"), resp.Header.Get("Link")
		if tc.sunset == "" {
			if dep != "" || sunset != "" || link != "" {
				t.Errorf("%s: Deprecation %q Sunset %q Link %q on an answer that touches nothing deprecated", name, dep, sunset, link)
			}
			continue
		}
		// 2026-11-24T00:00:00Z
		if dep != "@1795478400" || sunset != tc.sunset || link != `</api/oauth/v2/releases/2026-11-24>; rel="deprecation"; type="application/json"` {
			t.Errorf("%s: Deprecation %q Sunset %q Link %q, want @1795478400, %s and the release notes", name, dep, sunset, link, tc.sunset)
		}
	}
	want := map[string]int{"pc_one GET /old": 1, "pc_one GET /items/{id}": 1, "pc_one GET /search": 1, "pc_one POST /items": 1}
	calls.mu.Lock()
	defer calls.mu.Unlock()
	if len(calls.calls) != len(want) {
		t.Errorf("counted %v, want %v", calls.calls, want)
	}
	for k, n := range want {
		if calls.calls[k] != n {
			t.Errorf("counted %v, want %v", calls.calls, want)
		}
	}
}

// TestLifecycleRefusesBadDates: a deprecation without its dates is a
// document this server does not start with.
func TestLifecycleRefusesBadDates(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(lifecycleDoc, `"x-sunset": "2027-01-05"`, `"x-sunset": "soon"`, 1)
	if _, err := newLifecycle([]byte(doc), []release.Release{{Date: "2026-11-24"}}, nil, httpkit.Telemetry{}); err == nil || !strings.Contains(err.Error(), "GET /old") {
		t.Errorf("a sunset that is no date: %v", err)
	}
}
