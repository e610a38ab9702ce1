// Helpers: clients, tokens, requests.

package test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

type oauthClient struct {
	ID        string   `json:"client_id"`
	Secret    string   `json:"client_secret"`
	CompanyID string   `json:"company_id"`
	Scopes    []string `json:"scopes"`
}

// newClient creates an OAuth client of c; no scopes means every scope.
func (s *server) newClient(t *testing.T, c company, scopes string) oauthClient {
	t.Helper()
	args := []string{"admin", "client", "create", "--company", c.ID, "--name", "Integrator", "--json"}
	if scopes != "" {
		args = append(args, "--scopes", scopes)
	}
	var cl oauthClient
	s.praxis(t, &cl, args...)
	return cl
}

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) decode(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("%d %q is not a JSON object", r.status, r.body)
	}
	return v
}

// request sends one request, header values given as "Name: value", and
// checks that the answer is one the served OpenAPI document describes.
func (s *server) request(t *testing.T, method, path, contentType, body string, headers ...string) reply {
	t.Helper()
	r := s.requestUndocumented(t, method, path, contentType, body, headers...)
	documentOf(t, s).check(t, method, strings.SplitN(path, "?", 2)[0], r)
	return r
}

// requestUndocumented sends a request to a path no document names (unknown paths under a guard).
func (s *server) requestUndocumented(t *testing.T, method, path, contentType, body string, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: raw}
}

const formType = "application/x-www-form-urlencoded"

// form encodes name/value pairs.
func form(pairs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	return v.Encode()
}

func basic(cl oauthClient) string {
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth(url.QueryEscape(cl.ID), url.QueryEscape(cl.Secret))
	return "Authorization: " + req.Header.Get("Authorization")
}

// tokenFor gets a token for cl (HTTP Basic, form body), failing the test otherwise.
func (s *server) tokenFor(t *testing.T, cl oauthClient, pairs ...string) string {
	t.Helper()
	r := s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form(append([]string{"grant_type", "client_credentials"}, pairs...)...), basic(cl))
	if r.status != http.StatusOK {
		t.Fatalf("token for %s: %d %s", cl.ID, r.status, r.body)
	}
	token, _ := r.decode(t)["access_token"].(string)
	return token
}

func (s *server) getCompany(t *testing.T, token string) reply {
	t.Helper()
	return s.request(t, http.MethodGet, "/api/oauth/v2/resource/company", "", "", "Authorization: Bearer "+token)
}
