package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/praxis-health/praxis/adapters/httpapi"
	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
)

// TestOpenAPIDocumentsEveryRoute keeps the document and the router in step,
// and the document's messages in step with the domain's.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	served, err := httpapi.NewOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	app := httpapi.Hosted(httpkit.Telemetry{}, nil, httpapi.NewUploads(nil, nil, nil, httpapi.UploadOptions{}, httpkit.Telemetry{}), httpapi.NewHealth(nil), served, httpapi.NewMetrics(http.NotFoundHandler()),
		httpapi.NewOAuth(nil, httpapi.OAuthOptions{}, httpkit.Telemetry{}), httpapi.NewDocs(),
		httpapi.NewResources(nil, nil, httpapi.OAuthOptions{}, httpkit.Telemetry{}, nil, []httpkit.Route{httpapi.NewCompanySection(nil), httpapi.NewRecords(nil), httpapi.NewFilesSection(nil, httpapi.UploadOptions{}), httpapi.NewAuditEvents(nil)}))
	resp, err := app.Test(httptest.NewRequest("GET", "/api/oauth/v2/openapi.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	var doc struct {
		OpenAPI    string                    `json:"openapi"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			SecuritySchemes struct {
				OAuth2 struct {
					Flows struct {
						ClientCredentials struct {
							Scopes map[string]string `json:"scopes"`
						} `json:"clientCredentials"`
					} `json:"flows"`
				} `json:"oauth2"`
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("document: %v, openapi %q", err, doc.OpenAPI)
	}
	for _, r := range app.GetRoutes(true) {
		if r.Method == "HEAD" {
			continue // fiber adds HEAD for every GET
		}
		if r.Method == "USE" || strings.HasSuffix(r.Path, "/resource") || strings.HasPrefix(r.Path, "/docs") {
			continue // the bearer guard in front of the resource API; the docs page
		}
		path := strings.ReplaceAll(r.Path, ":id", "{id}") // fiber's :id is the document's {id}
		if _, ok := doc.Paths[path][strings.ToLower(r.Method)]; !ok {
			t.Errorf("%s %s is served but not documented", r.Method, r.Path)
		}
	}
	documented := doc.Components.SecuritySchemes.OAuth2.Flows.ClientCredentials.Scopes
	for _, scope := range domain.SupportedScopes() {
		if _, ok := documented[string(scope)]; !ok {
			t.Errorf("scope %s is not documented", scope)
		}
	}
	if len(documented) != len(domain.SupportedScopes()) {
		t.Errorf("the document lists %d scopes, the catalogue %d", len(documented), len(domain.SupportedScopes()))
	}
	if !strings.Contains(string(raw), domain.MessageTooManyAttempts) {
		t.Error("the lockout message is not in the document")
	}
	for _, reason := range []error{domain.ErrCompanyForbidden, domain.ErrSecretInvalid, domain.ErrCustomerNotFound, domain.ErrCustomerOfOther,
		domain.ErrNoFile, domain.ErrFileTooLarge, domain.ErrInsufficientStorage, domain.ErrTooManyFiles, domain.ErrMalformedUpload, domain.ErrPatientMismatch} {
		msg := (&domain.UploadRefusal{Reason: reason}).Error()
		msg = strings.ReplaceAll(strings.ReplaceAll(msg, "UUID forbidden: []", "UUID forbidden: [<company as sent>]"), "Customer not found: []", "Customer not found: [<customer as sent>]")
		msg = strings.ReplaceAll(msg, "zum Kunden: []", "zum Kunden: [<3000 as sent>]")
		if !strings.Contains(string(raw), msg) {
			t.Errorf("message %q is not in the document", msg)
		}
	}
}
