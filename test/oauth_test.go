// Holds docs/contract.md §3 OAuth 2.0, client credentials.

package test

import (
	"bufio"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// TestTokenIssuance: every body encoding and both client authentication
// methods give a working token in the RFC 6749 §5.1 shape.
func TestTokenIssuance(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		c := s.newCompany(t, 1<<20)
		cl := s.newClient(t, c, "company:read customers:read")
		if cl.CompanyID != c.ID || strings.Join(cl.Scopes, " ") != "company:read customers:read" || len(cl.Secret) < 43 {
			t.Fatalf("client create printed %+v", cl)
		}
		var mp strings.Builder
		w := multipart.NewWriter(&mp)
		for k, v := range map[string]string{"grant_type": "client_credentials", "client_id": cl.ID, "client_secret": cl.Secret} {
			_ = w.WriteField(k, v)
		}
		_ = w.Close()
		cases := []struct {
			name, contentType, body string
			headers                 []string
			wantScope               string
		}{
			{"form, Basic", formType, form("grant_type", "client_credentials"), []string{basic(cl)}, "company:read customers:read"},
			{"form, body credentials", formType, form("grant_type", "client_credentials", "client_id", cl.ID, "client_secret", cl.Secret), nil, "company:read customers:read"},
			{"form with charset, scope subset", formType + "; charset=UTF-8", form("grant_type", "client_credentials", "scope", "company:read"), []string{basic(cl)}, "company:read"},
			{"JSON", "application/json", `{"grant_type":"client_credentials","client_id":"` + cl.ID + `","client_secret":"` + cl.Secret + `"}`, nil, "company:read customers:read"},
			{"JSON, Basic, client_id repeated in the body", "application/json", `{"grant_type":"client_credentials","client_id":"` + cl.ID + `"}`, []string{basic(cl)}, "company:read customers:read"},
			{"multipart", w.FormDataContentType(), mp.String(), nil, "company:read customers:read"},
		}
		for _, tc := range cases {
			r := s.request(t, http.MethodPost, "/api/oauth/v2/token", tc.contentType, tc.body, tc.headers...)
			if r.status != http.StatusOK {
				t.Errorf("%s: %d %s", tc.name, r.status, r.body)
				continue
			}
			got := r.decode(t)
			token, _ := got["access_token"].(string)
			if len(token) < 43 || got["token_type"] != "Bearer" || got["expires_in"] != float64(3600) || got["scope"] != tc.wantScope {
				t.Errorf("%s: response %s", tc.name, r.body)
			}
			if r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
				t.Errorf("%s: Cache-Control %q, Pragma %q", tc.name, r.header.Get("Cache-Control"), r.header.Get("Pragma"))
			}
			if p := s.getCompany(t, token); p.status != http.StatusOK {
				t.Errorf("%s: the token reads the company with %d %s", tc.name, p.status, p.body)
			}
		}
	})
}

// TestTokenErrors: each refusal has its RFC 6749 §5.2 code and status.
func TestTokenErrors(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		c := s.newCompany(t, 1<<20)
		cl := s.newClient(t, c, "company:read")
		wrong := cl
		wrong.Secret = cl.Secret[:len(cl.Secret)-1] + "x"
		unknown := oauthClient{ID: "pc_nobody", Secret: cl.Secret}
		grant := form("grant_type", "client_credentials")
		cases := []struct {
			name, path, contentType, body string
			headers                       []string
			status                        int
			code                          string
			basicChallenge                bool
		}{
			{"no grant_type", "", formType, "", []string{basic(cl)}, 400, "invalid_request", false},
			{"password grant", "", formType, form("grant_type", "password"), []string{basic(cl)}, 400, "unsupported_grant_type", false},
			{"wrong secret in the body", "", formType, form("grant_type", "client_credentials", "client_id", cl.ID, "client_secret", wrong.Secret), nil, 401, "invalid_client", false},
			{"wrong secret, Basic", "", formType, grant, []string{basic(wrong)}, 401, "invalid_client", true},
			{"unknown client", "", formType, grant, []string{basic(unknown)}, 401, "invalid_client", true},
			{"no client authentication", "", formType, grant, nil, 401, "invalid_client", false},
			{"Basic that is not Basic", "", formType, grant, []string{"Authorization: Basic !!!"}, 401, "invalid_client", true},
			{"scope not granted", "", formType, form("grant_type", "client_credentials", "scope", "company:read customers:write"), []string{basic(cl)}, 400, "invalid_scope", false},
			{"unknown scope", "", formType, form("grant_type", "client_credentials", "scope", "everything"), []string{basic(cl)}, 400, "invalid_scope", false},
			{"empty scope", "", formType, form("grant_type", "client_credentials", "scope", ""), []string{basic(cl)}, 400, "invalid_scope", false},
			{"two authentication methods", "", formType, form("grant_type", "client_credentials", "client_secret", cl.Secret), []string{basic(cl)}, 400, "invalid_request", false},
			{"repeated parameter", "", formType, grant + "&grant_type=client_credentials", []string{basic(cl)}, 400, "invalid_request", false},
			{"credentials in the URL", "?client_secret=" + cl.Secret, formType, grant, []string{basic(cl)}, 400, "invalid_request", false},
			{"unsupported body type", "", "text/plain", "grant_type=client_credentials", []string{basic(cl)}, 400, "invalid_request", false},
			{"JSON array", "", "application/json", `["client_credentials"]`, []string{basic(cl)}, 400, "invalid_request", false},
			{"JSON number", "", "application/json", `{"grant_type":1}`, []string{basic(cl)}, 400, "invalid_request", false},
			{"JSON repeated key", "", "application/json", `{"grant_type":"client_credentials","grant_type":"password"}`, []string{basic(cl)}, 400, "invalid_request", false},
			{"truncated JSON", "", "application/json", `{"grant_type":"client_cre`, []string{basic(cl)}, 400, "invalid_request", false},
			{"multipart without boundary", "", "multipart/form-data", "x", []string{basic(cl)}, 400, "invalid_request", false},
			{"body over 1 MiB", "", formType, grant + "&pad=" + strings.Repeat("a", 1<<20), []string{basic(cl)}, 413, "invalid_request", false},
		}
		for _, tc := range cases {
			r := s.request(t, http.MethodPost, "/api/oauth/v2/token"+tc.path, tc.contentType, tc.body, tc.headers...)
			got := r.decode(t)
			if r.status != tc.status || got["error"] != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
			}
			if desc, _ := got["error_description"].(string); desc == "" || strings.Contains(string(r.body), cl.Secret) {
				t.Errorf("%s: error_description %q (must be present and never echo the secret)", tc.name, desc)
			}
			if challenge := r.header.Get("WWW-Authenticate"); tc.basicChallenge != strings.HasPrefix(challenge, `Basic realm="praxis"`) {
				t.Errorf("%s: WWW-Authenticate %q, want a Basic challenge: %v", tc.name, challenge, tc.basicChallenge)
			}
			if r.header.Get("Cache-Control") != "no-store" {
				t.Errorf("%s: Cache-Control %q", tc.name, r.header.Get("Cache-Control"))
			}
		}
	})
}

// TestBearerGuard: the token only in the header; each failure with its
// RFC 6750 challenge.
func TestBearerGuard(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		c := s.newCompany(t, 1<<20)
		token := s.tokenFor(t, s.newClient(t, c, "company:read"))
		narrow := s.tokenFor(t, s.newClient(t, c, "customers:read"))
		const company, notes = "/api/oauth/v2/resource/company", "/api/oauth/v2/resource/notes"
		cases := []struct {
			name, method, path, contentType, body string
			headers                               []string
			status                                int
			challenge                             string
		}{
			{"valid", "GET", company, "", "", []string{"Authorization: Bearer " + token}, 200, ""},
			{"scheme in lower case", "GET", company, "", "", []string{"Authorization: bearer " + token}, 200, ""},
			{"no token", "GET", company, "", "", nil, 401, `Bearer realm="praxis"`},
			{"another scheme", "GET", company, "", "", []string{"Authorization: Basic " + token}, 401, `Bearer realm="praxis"`},
			{"unknown token", "GET", company, "", "", []string{"Authorization: Bearer AAAA" + token[4:]}, 401, `Bearer realm="praxis", error="invalid_token"`},
			{"Bearer without a token", "GET", company, "", "", []string{"Authorization: Bearer "}, 400, `Bearer realm="praxis", error="invalid_request"`},
			{"token in the query, none in the header", "GET", company + "?access_token=" + token, "", "", nil, 400, `Bearer realm="praxis", error="invalid_request"`},
			{"token in the query beside a valid header", "GET", company + "?access_token=" + token, "", "", []string{"Authorization: Bearer " + token}, 400, `Bearer realm="praxis", error="invalid_request"`},
			{"token in a form body beside a valid header", "POST", notes, formType, form("access_token", token), []string{"Authorization: Bearer " + token}, 400, `Bearer realm="praxis", error="invalid_request"`},
			{"token in a JSON body beside a valid header", "POST", notes, "application/json", `{"access_token":"` + token + `"}`, []string{"Authorization: Bearer " + token}, 400, `Bearer realm="praxis", error="invalid_request"`},
			{"token without the scope", "GET", company, "", "", []string{"Authorization: Bearer " + narrow}, 403, `Bearer realm="praxis", error="insufficient_scope"`},
			{"unknown path, valid token", "GET", "/api/oauth/v2/resource/nothing", "", "", []string{"Authorization: Bearer " + token}, 404, ""},
			{"unknown path, no token", "GET", "/api/oauth/v2/resource/nothing", "", "", nil, 401, `Bearer realm="praxis"`},
		}
		for _, tc := range cases {
			send := s.request
			if strings.Contains(tc.path, "/nothing") {
				send = s.requestUndocumented // the guard answers paths no document names
			}
			r := send(t, tc.method, tc.path, tc.contentType, tc.body, tc.headers...)
			if r.status != tc.status {
				t.Errorf("%s: %d %s, want %d", tc.name, r.status, r.body, tc.status)
				continue
			}
			challenge := r.header.Get("WWW-Authenticate")
			if tc.challenge == "" && challenge != "" || !strings.HasPrefix(challenge, tc.challenge) {
				t.Errorf("%s: WWW-Authenticate %q, want %q…", tc.name, challenge, tc.challenge)
			}
			if tc.status == 403 && (!strings.Contains(challenge, `scope="company:read"`) || r.decode(t)["scope"] != "company:read") {
				t.Errorf("%s: the refusal does not name the scope: %q %s", tc.name, challenge, r.body)
			}
			if strings.Contains(string(r.body), token) {
				t.Errorf("%s: the response echoes the token", tc.name)
			}
		}
	})
}

// TestCompanyProfile: a token reads its own company and never another's.
func TestCompanyProfile(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		a := s.newCompany(t, 5000)
		other := s.newCompany(t, 7000)
		customer := s.newCustomer(t, a)
		if r := s.upload(t, "/api/gdt/upload", gdtHeaders(a, customer), filePart("befund.pdf", pdfOfSize(1000))); r.status != 200 {
			t.Fatalf("upload: %d %s", r.status, r.Message)
		}
		tokenA := s.tokenFor(t, s.newClient(t, a, ""))
		tokenB := s.tokenFor(t, s.newClient(t, other, "company:read"))
		for token, want := range map[string]company{tokenA: a, tokenB: other} {
			r := s.getCompany(t, token)
			got := r.decode(t)
			if r.status != 200 || got["id"] != want.ID || got["time_zone"] != "Europe/Vienna" || got["plan"] != "basic" {
				t.Errorf("%d %s, want company %s", r.status, r.body, want.ID)
			}
			if r.header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q on practice data", r.header.Get("Cache-Control"))
			}
			if want.ID == a.ID && (got["storage_quota"] != float64(5000) || got["storage_used"] != float64(1000)) {
				t.Errorf("company A's storage: %s, want quota 5000, used 1000", r.body)
			}
			if want.ID == other.ID && (got["storage_quota"] != float64(7000) || got["storage_used"] != float64(0)) {
				t.Errorf("company B's storage: %s", r.body)
			}
		}
	})
}

// TestTokenExpiry: with PRAXIS_TOKEN_TTL=2s a token works, then stops.
func TestTokenExpiry(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, "PRAXIS_TOKEN_TTL=2s")
		cl := s.newClient(t, s.newCompany(t, 1<<20), "company:read")
		r := s.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cl))
		if got := r.decode(t); got["expires_in"] != float64(2) {
			t.Fatalf("expires_in %v, want 2", got["expires_in"])
		}
		token := r.decode(t)["access_token"].(string)
		if r := s.getCompany(t, token); r.status != 200 {
			t.Fatalf("fresh token: %d %s", r.status, r.body)
		}
		time.Sleep(2200 * time.Millisecond)
		r = s.getCompany(t, token)
		if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("expired token: %d %q", r.status, r.header.Get("WWW-Authenticate"))
		}
		if got := s.request(t, http.MethodPost, "/api/oauth/v2/introspect", formType, form("token", token), basic(cl)).decode(t); got["active"] != false {
			t.Errorf("introspection of an expired token: %v", got)
		}
	})
}

// TestClientRevoke: `praxis admin client revoke` ends the client's live
// tokens at once, and only its own; on PostgreSQL + Redis also on a replica.
func TestClientRevoke(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		c := s.newCompany(t, 1<<20)
		doomed, kept := s.newClient(t, c, ""), s.newClient(t, c, "")
		servers := []*server{s}
		if b.name == "postgres" {
			servers = append(servers, s.replica(t))
		}
		first, second, other := s.tokenFor(t, doomed), servers[len(servers)-1].tokenFor(t, doomed), s.tokenFor(t, kept)
		for _, srv := range servers {
			for _, token := range []string{first, second, other} {
				if r := srv.getCompany(t, token); r.status != 200 {
					t.Fatalf("before revocation: %d %s", r.status, r.body)
				}
			}
		}
		var out struct {
			ClientID string `json:"client_id"`
			Revoked  bool   `json:"revoked"`
		}
		s.praxis(t, &out, "admin", "client", "revoke", "--client-id", doomed.ID, "--json")
		if out.ClientID != doomed.ID || !out.Revoked {
			t.Errorf("revoke printed %+v", out)
		}
		for _, srv := range servers {
			for _, token := range []string{first, second} {
				if r := srv.getCompany(t, token); r.status != 401 {
					t.Errorf("token of the revoked client: %d %s", r.status, r.body)
				}
			}
			if r := srv.getCompany(t, other); r.status != 200 {
				t.Errorf("token of the other client after the revocation: %d %s", r.status, r.body)
			}
		}
		// Each server issued the client a token just before, so each has it in
		// its brief client cache (with Redis): the revocation is immediate anyway.
		for _, srv := range servers {
			r := srv.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(doomed))
			if r.status != 401 || r.decode(t)["error"] != "invalid_client" {
				t.Errorf("new token for the revoked client: %d %s", r.status, r.body)
			}
		}
		if _, stderr, code := praxisIn(t, s.env, "admin", "client", "revoke", "--client-id", "pc_nobody"); code == 0 || !strings.Contains(stderr, "not found") {
			t.Errorf("revoking an unknown client: exit %d, %q", code, stderr)
		}
	})
}

// TestClientSecretRotation: a rotated secret keeps working for its overlap
// beside the new one, then only the new one does; the new one works at once
// on every replica, also on one that has the client in its brief cache.
func TestClientSecretRotation(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		c := s.newCompany(t, 1<<20)
		first := s.newClient(t, c, "company:read")
		servers := []*server{s}
		if b.name == "postgres" {
			servers = append(servers, s.replica(t))
		}
		for _, srv := range servers {
			srv.tokenFor(t, first) // cached where the store is shared
		}
		status := func(srv *server, cl oauthClient) int {
			return srv.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cl)).status
		}
		var rotated struct {
			ClientID     string     `json:"client_id"`
			ClientSecret string     `json:"client_secret"`
			Until        *time.Time `json:"previous_secret_valid_until"`
		}
		s.praxis(t, &rotated, "admin", "client", "rotate-secret", "--client-id", first.ID, "--overlap", "1h", "--json")
		second := first
		second.Secret = rotated.ClientSecret
		if rotated.ClientID != first.ID || rotated.ClientSecret == first.Secret || rotated.Until == nil || time.Until(*rotated.Until) < 59*time.Minute {
			t.Fatalf("rotate printed %+v", rotated)
		}
		for _, srv := range servers {
			if old, fresh := status(srv, first), status(srv, second); old != http.StatusOK || fresh != http.StatusOK {
				t.Errorf("during the overlap: old secret %d, new secret %d", old, fresh)
			}
		}
		s.praxis(t, &rotated, "admin", "client", "rotate-secret", "--client-id", first.ID, "--overlap", "0s", "--json")
		third := first
		third.Secret = rotated.ClientSecret
		if rotated.Until != nil {
			t.Errorf("a rotation without overlap keeps the old secret until %s", rotated.Until)
		}
		// A replica that read the client in the last 30 s (its brief client
		// cache, with Redis) may take a replaced secret that long; a replica
		// that reads the client now refuses it at once.
		fresh := s
		if b.name == "postgres" {
			fresh = s.replica(t)
		}
		if a, b, c := status(fresh, first), status(fresh, second), status(fresh, third); a != http.StatusUnauthorized || b != http.StatusUnauthorized || c != http.StatusOK {
			t.Errorf("after a rotation without overlap: first %d, second %d, third %d", a, b, c)
		}
		for _, srv := range servers {
			if c := status(srv, third); c != http.StatusOK {
				t.Errorf("the new secret on a replica that cached the client: %d", c)
			}
		}
		if _, stderr, code := praxisIn(t, s.env, "admin", "client", "rotate-secret", "--client-id", first.ID, "--overlap", "200h"); code == 0 || !strings.Contains(stderr, "--overlap") {
			t.Errorf("an overlap past 7 days: exit %d, %q", code, stderr)
		}
	})
}

// TestRevokeAndIntrospect: RFC 7009 and RFC 7662, each client for its own tokens only.
func TestRevokeAndIntrospect(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b)
		a, other := s.newCompany(t, 1<<20), s.newCompany(t, 1<<20)
		mine, theirs := s.newClient(t, a, "company:read"), s.newClient(t, other, "")
		myToken, theirToken := s.tokenFor(t, mine), s.tokenFor(t, theirs)

		got := s.request(t, http.MethodPost, "/api/oauth/v2/introspect", formType, form("token", myToken), basic(mine)).decode(t)
		if got["active"] != true || got["client_id"] != mine.ID || got["scope"] != "company:read" || got["company_id"] != a.ID || got["token_type"] != "Bearer" {
			t.Errorf("own token: %v", got)
		}
		if exp, iat := got["exp"].(float64), got["iat"].(float64); exp-iat != 3600 || time.Since(time.Unix(int64(iat), 0)) > time.Minute {
			t.Errorf("exp %v, iat %v", exp, iat)
		}
		for name, token := range map[string]string{"another company's token": theirToken, "an unknown token": "nope"} {
			r := s.request(t, http.MethodPost, "/api/oauth/v2/introspect", "application/json", `{"token":"`+token+`"}`, basic(mine))
			if got := r.decode(t); r.status != 200 || len(got) != 1 || got["active"] != false {
				t.Errorf("introspecting %s: %d %s, want only {\"active\":false}", name, r.status, r.body)
			}
		}

		if r := s.request(t, http.MethodPost, "/api/oauth/v2/revoke", formType, form("token", theirToken), basic(mine)); r.status != 200 || len(r.body) != 0 {
			t.Errorf("revoking another client's token: %d %q", r.status, r.body)
		}
		if r := s.getCompany(t, theirToken); r.status != 200 {
			t.Errorf("another client revoked this token: %d", r.status)
		}
		if r := s.request(t, http.MethodPost, "/api/oauth/v2/revoke", formType, form("token", myToken, "token_type_hint", "access_token"), basic(mine)); r.status != 200 {
			t.Errorf("revoking the own token: %d %s", r.status, r.body)
		}
		if r := s.getCompany(t, myToken); r.status != 401 {
			t.Errorf("revoked token: %d", r.status)
		}
		if r := s.request(t, http.MethodPost, "/api/oauth/v2/revoke", formType, form("token", myToken), basic(mine)); r.status != 200 {
			t.Errorf("revoking again: %d %s", r.status, r.body)
		}
		for _, path := range []string{"/api/oauth/v2/revoke", "/api/oauth/v2/introspect"} {
			if r := s.request(t, http.MethodPost, path, formType, form("token", theirToken)); r.status != 401 || r.decode(t)["error"] != "invalid_client" {
				t.Errorf("%s without client authentication: %d %s", path, r.status, r.body)
			}
			if r := s.request(t, http.MethodPost, path, formType, "", basic(mine)); r.status != 400 || r.decode(t)["error"] != "invalid_request" {
				t.Errorf("%s without a token: %d %s", path, r.status, r.body)
			}
		}
	})
}

// TestMetadata: RFC 8414, with the whole scope catalogue.
func TestMetadata(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	r := s.request(t, http.MethodGet, "/.well-known/oauth-authorization-server", "", "")
	got := r.decode(t)
	if r.status != 200 || got["issuer"] != s.url || got["token_endpoint"] != s.url+"/api/oauth/v2/token" ||
		got["revocation_endpoint"] != s.url+"/api/oauth/v2/revoke" || got["introspection_endpoint"] != s.url+"/api/oauth/v2/introspect" {
		t.Errorf("metadata %s", r.body)
	}
	scopes, _ := got["scopes_supported"].([]any)
	if len(scopes) != len(domain.SupportedScopes()) || scopes[0] != "booking:read" {
		t.Errorf("scopes_supported has %d scopes, the catalogue %d", len(scopes), len(domain.SupportedScopes()))
	}
	if grants, _ := got["grant_types_supported"].([]any); len(grants) != 1 || grants[0] != "client_credentials" {
		t.Errorf("grant_types_supported %v", grants)
	}
}

// TestLockout: wrong secrets lock a client id, and a company's upload door,
// for PRAXIS_AUTH_LOCKOUT, even against the right secret. On PostgreSQL +
// Redis the count is shared: failures on two replicas add up.
func TestLockout(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend) {
		s := startServer(t, b, "PRAXIS_AUTH_MAX_FAILURES=3", "PRAXIS_AUTH_LOCKOUT=2s")
		servers := []*server{s, s}
		if b.name == "postgres" {
			servers[1] = s.replica(t)
		}
		c := s.newCompany(t, 1<<20)
		customer := s.newCustomer(t, c)
		cl, bystander := s.newClient(t, c, ""), s.newClient(t, c, "")
		wrong := cl
		wrong.Secret = "wrong"
		for i := range 3 {
			r := servers[i%2].request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(wrong))
			if r.status != 401 {
				t.Fatalf("wrong secret %d: %d %s, want 401 until the threshold", i+1, r.status, r.body)
			}
		}
		for _, srv := range servers {
			r := srv.request(t, http.MethodPost, "/api/oauth/v2/token", formType, form("grant_type", "client_credentials"), basic(cl))
			retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
			if r.status != 429 || r.decode(t)["error"] != "slow_down" || retry < 1 || retry > 2 {
				t.Errorf("right secret during the lockout: %d %s, Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
			}
		}
		s.tokenFor(t, bystander) // another client id is not locked

		upload := func(srv *server, secret string) uploadReply {
			h := gdtHeaders(c, customer)
			h["x-gdt-secret"] = secret
			return srv.upload(t, "/api/gdt/upload", h, filePart("befund.pdf", pdfOfSize(100)))
		}
		for i := range 3 {
			if r := upload(servers[i%2], "wrong"); r.status != 400 || r.Message != "Secret not valid." {
				t.Fatalf("wrong upload secret %d: %d %q, want the contract's 400 until the threshold", i+1, r.status, r.Message)
			}
		}
		uploadLockedAt := time.Now()
		for _, srv := range servers {
			r := upload(srv, c.Secret)
			if r.status != 429 || r.Status != "error" || r.Message != domain.MessageTooManyAttempts || r.header.Get("Retry-After") == "" {
				t.Errorf("right upload secret during the lockout: %d %+v", r.status, r)
			}
		}
		if st := s.storageOf(t, c.ID); st.files != 0 || st.used != 0 {
			t.Errorf("refused uploads left %+v", st)
		}

		time.Sleep(time.Until(uploadLockedAt.Add(2200 * time.Millisecond)))
		s.tokenFor(t, cl)
		if r := upload(s, c.Secret); r.status != 200 {
			t.Errorf("upload after the lockout: %d %q", r.status, r.Message)
		}
	})
}

// TestRefusedBodyKeepsConnection: a request refused before its body was read
// (no token, 200 KB body) still gets its 401, and the next request on the
// same keep-alive connection is served as sent: the unread body is drained,
// never parsed as a request.
func TestRefusedBodyKeepsConnection(t *testing.T) {
	t.Parallel()
	s := startServer(t, backends[0])
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := strings.Repeat("GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n", 6000) // ~200 KB of would-be requests
	fmt.Fprintf(conn, "POST /api/oauth/v2/resource/company HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	fmt.Fprintf(conn, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	for i, want := range []int{401, 200} {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i+1, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("response %d: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if strings.Contains(s.log.String(), `"route":"unmatched"`) {
		t.Error("a line of the body was served as a request")
	}
}
