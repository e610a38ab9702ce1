package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/adapters/httpapi"
	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/test/testenv"
)

// FuzzTokenEndpoint drives the token, revocation and introspection endpoints
// with arbitrary bodies, content types, Authorization headers and query
// strings: the answer is always a token or an RFC 6749 error with its
// status, never a 500, never cacheable, and never echoes the client secret.
func FuzzTokenEndpoint(f *testing.F) {
	ctx := context.Background()
	env := testenv.NewEmbedded(f)
	company, _, err := env.Admin.CreateCompany(ctx, usecase.NewCompanyInput{Name: "Fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	client, secret, err := env.Admin.CreateClient(ctx, usecase.NewClientInput{Company: company.ID, Scopes: "company:read customers:read"})
	if err != nil {
		f.Fatal(err)
	}
	app := httpapi.Hosted(httpkit.Telemetry{}, nil, httpapi.NewOAuth(env.OAuth, httpapi.OAuthOptions{}, httpkit.Telemetry{}))
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(string(client.ID)+":"+string(secret)))
	form := "application/x-www-form-urlencoded"
	for _, seed := range []struct{ path, query, contentType, authorization, body string }{
		{"/api/oauth/v2/token", "", form, basic, "grant_type=client_credentials"},
		{"/api/oauth/v2/token", "", form, "", "grant_type=client_credentials&client_id=" + string(client.ID) + "&client_secret=" + string(secret) + "&scope=company:read"},
		{"/api/oauth/v2/token", "", "application/json", "", `{"grant_type":"client_credentials","client_id":"` + string(client.ID) + `","client_secret":"` + string(secret) + `"}`},
		{"/api/oauth/v2/token", "x=1", form, basic, "grant_type=client_credentials"},
		{"/api/oauth/v2/token", "", "multipart/form-data; boundary=b", basic, "--b\r\nContent-Disposition: form-data; name=\"grant_type\"\r\n\r\nclient_credentials\r\n--b--\r\n"},
		{"/api/oauth/v2/token", "", "application/json", basic, `{"grant_type":["client_credentials"]}`},
		{"/api/oauth/v2/revoke", "", form, basic, "token=abc"},
		{"/api/oauth/v2/introspect", "", form, "Basic %%%", "token=abc"},
	} {
		f.Add(seed.path, seed.query, seed.contentType, seed.authorization, []byte(seed.body))
	}
	paths := []string{"/api/oauth/v2/token", "/api/oauth/v2/revoke", "/api/oauth/v2/introspect"}
	f.Fuzz(func(t *testing.T, path, query, contentType, authorization string, body []byte) {
		if !strings.HasPrefix(path, "/api/oauth/v2/") {
			path = paths[len(path)%len(paths)]
		}
		target := path
		if query != "" {
			target += "?" + query
		}
		req, err := buildRequest(target, contentType, authorization, body)
		if err != nil {
			return // not a request net/http can send
		}
		resp, err := app.Test(req, int((10 * time.Second).Milliseconds()))
		if err != nil {
			return // net/http refused to write the request (invalid header bytes): nothing reached the server
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 500 {
			t.Fatalf("%s: %d %q", path, resp.StatusCode, raw)
		}
		if resp.StatusCode == 404 || resp.StatusCode == 405 {
			return // a path that is not an OAuth endpoint
		}
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %d: Cache-Control %q", path, resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
		if bytes.Contains(raw, []byte(secret)) {
			t.Fatalf("the answer echoes the client secret: %q", raw)
		}
		if resp.StatusCode == 200 {
			return
		}
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if err := json.Unmarshal(raw, &e); err != nil || e.Error == "" || e.Description == "" {
			t.Fatalf("%s %d: %q is not an RFC 6749 error", path, resp.StatusCode, raw)
		}
		switch {
		case resp.StatusCode == 401 && e.Error == "invalid_client",
			resp.StatusCode == 429 && e.Error == "slow_down",
			resp.StatusCode == 413 && e.Error == "invalid_request",
			resp.StatusCode == 400 && e.Error != "invalid_client" && e.Error != "slow_down":
		default:
			t.Fatalf("%s: status %d with error %q", path, resp.StatusCode, e.Error)
		}
	})
}

var errUnsendable = errors.New("not a sendable request")

func buildRequest(target, contentType, authorization string, body []byte) (req *http.Request, err error) {
	defer func() {
		if recover() != nil { // httptest.NewRequest panics on a target it cannot parse
			req, err = nil, errUnsendable
		}
	}()
	r := httptest.NewRequest("POST", target, bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	return r, nil
}
