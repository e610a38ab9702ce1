package app_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/praxis-health/praxis/app"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/test/testenv"
)

// TestTracesAndLogs runs the server graph in process with an in-memory span
// exporter (SQLite, Redis, local files): an upload and an authenticated API
// call each give one trace whose spans hang below the HTTP server span —
// SQL, Redis and blob spans — and no span attribute, event or log line holds
// a secret, a token or a patient's name. /metrics then has the named series.
func TestTracesAndLogs(t *testing.T) {
	t.Parallel()
	cfg, err := app.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg.DatabaseURL = "sqlite:" + filepath.Join(dir, "praxis.db")
	cfg.BlobURL = "file://" + filepath.Join(dir, "files") + "?create_dir=true&no_tmp_dir=true&metadata=skip"
	cfg.RedisURL = testenv.RedisURL(t)
	cfg.HTTPAddr = testenv.FreeAddr(t)
	ctx := context.Background()

	// The practice, its patient and an integrator's client.
	const firstName, lastName = "Wilhelmine", "Quastenflosser"
	var admin *usecase.Admin
	adminApp := fx.New(app.AdminOptions(cfg), fx.NopLogger, fx.Populate(&admin))
	if err := adminApp.Start(ctx); err != nil {
		t.Fatal(err)
	}
	company, uploadSecret, err := admin.CreateCompany(ctx, usecase.NewCompanyInput{Name: "Praxis Telemetrie", StorageQuota: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	customer, err := admin.CreateCustomer(ctx, usecase.NewCustomerInput{Company: company.ID, FirstName: firstName, LastName: lastName})
	if err != nil {
		t.Fatal(err)
	}
	client, clientSecret, err := admin.CreateClient(ctx, usecase.NewClientInput{Company: company.ID, Scopes: "company:read customers:write notes:write notes:read"})
	if err != nil {
		t.Fatal(err)
	}
	_ = adminApp.Stop(ctx)

	exporter := tracetest.NewInMemoryExporter()
	logs := &testenv.SyncBuffer{}
	server := fx.New(app.Options(cfg), fx.NopLogger,
		fx.Supply(fx.Annotate(exporter, fx.As(new(sdktrace.SpanExporter)))),
		fx.Supply(&app.LogOutput{Writer: logs}))
	if err := server.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Stop(ctx) })
	base := "http://" + cfg.HTTPAddr

	// One upload, named after the patient, with the upload secret.
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	fw, _ := w.CreateFormFile("file", firstName+"_"+lastName+".pdf")
	_, _ = fw.Write([]byte("%PDF-1.7\nBefund für " + firstName + " " + lastName + "\n"))
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/gdt/upload", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("x-gdt-company", company.ID.String())
	req.Header.Set("x-gdt-customer", fmt.Sprint(customer.ID))
	req.Header.Set("x-gdt-secret", string(uploadSecret))
	mustStatus(t, req, http.StatusOK)
	uploadTrace := lastServerSpan(t, exporter, "POST /api/gdt/upload")

	// A token, then one authenticated call.
	req, _ = http.NewRequest(http.MethodPost, base+"/api/oauth/v2/token",
		strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(string(client.ID), string(clientSecret))
	var token struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.Unmarshal(mustStatus(t, req, http.StatusOK), &token)
	req, _ = http.NewRequest(http.MethodGet, base+"/api/oauth/v2/resource/company", nil)
	req.Header.Set("Authorization", "Bearer "+token.AccessToken)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	mustStatus(t, req, http.StatusOK)
	apiTrace := lastServerSpan(t, exporter, "GET /api/oauth/v2/resource/company")
	if apiTrace.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || apiTrace.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("the incoming traceparent was not continued: trace %s, parent %s", apiTrace.SpanContext.TraceID(), apiTrace.Parent.SpanID())
	}

	// The resource API: a patient, a note with health data, a refused body, a list.
	const healthText, otherName, badSVNR = "Verdacht auf Zwerchfellhernie", "Ottokarline", "1234567890"
	resource := func(method, path, body string, status int) []byte {
		req, _ := http.NewRequest(method, base+"/api/oauth/v2/resource/"+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		return mustStatus(t, req, status)
	}
	resource("POST", "customers", `{"first_name":"`+otherName+`","last_name":"`+lastName+`","birth_date":"1950-05-05"}`, http.StatusCreated)
	resource("POST", "notes", fmt.Sprintf(`{"customer_id":%d,"text":"%s"}`, customer.ID, healthText), http.StatusCreated)
	resource("POST", "customers", `{"first_name":"`+otherName+`","last_name":"X","birth_date":"1950-05-05","svnr":"`+badSVNR+`"}`, http.StatusUnprocessableEntity)
	resource("GET", fmt.Sprintf("notes?customer_id=%d", customer.ID), "", http.StatusOK)
	recordsTrace := lastServerSpan(t, exporter, "GET /api/oauth/v2/resource/notes")

	// A wrong upload secret, for the refusal counter.
	req, _ = http.NewRequest(http.MethodPost, base+"/api/gdt/upload", strings.NewReader("x"))
	req.Header.Set("x-gdt-company", company.ID.String())
	req.Header.Set("x-gdt-secret", "wrong")
	mustStatus(t, req, http.StatusBadRequest)

	spans := exporter.GetSpans()
	for _, tc := range []struct {
		server tracetest.SpanStub
		want   []string // kinds of child spans the trace must hold
	}{
		{uploadTrace, []string{"sql", "redis", "blob.write"}},
		{apiTrace, []string{"sql", "redis"}},
		{recordsTrace, []string{"sql", "redis"}},
	} {
		kinds := map[string]int{}
		parents := map[trace.SpanID]trace.SpanID{}
		for _, s := range spans {
			parents[s.SpanContext.SpanID()] = s.Parent.SpanID()
		}
		for _, s := range spans {
			if s.SpanContext.TraceID() != tc.server.SpanContext.TraceID() || s.SpanContext.SpanID() == tc.server.SpanContext.SpanID() {
				continue
			}
			if !descendsFrom(parents, s.SpanContext.SpanID(), tc.server.SpanContext.SpanID()) {
				t.Errorf("%s: span %q does not descend from the server span", tc.server.Name, s.Name)
			}
			kinds[spanKind(s)]++
		}
		for _, k := range tc.want {
			if kinds[k] == 0 {
				t.Errorf("%s: no %s span below the server span (got %v)", tc.server.Name, k, kinds)
			}
		}
	}
	if uploadTrace.SpanContext.TraceID() == apiTrace.SpanContext.TraceID() {
		t.Error("the upload and the API call share a trace")
	}

	secrets := map[string]string{
		"upload secret": string(uploadSecret), "client secret": string(clientSecret), "access token": token.AccessToken,
		"token hash": hex.EncodeToString(domain.Secret(token.AccessToken).Hash()), "first name": firstName, "last name": lastName,
		"note text": healthText, "another patient's name": otherName, "a refused svnr": badSVNR,
	}
	for _, s := range spans {
		var texts []string
		texts = append(texts, s.Name, s.Status.Description)
		texts = append(texts, attrValues(s.Attributes)...)
		for _, e := range s.Events {
			texts = append(texts, e.Name)
			texts = append(texts, attrValues(e.Attributes)...)
		}
		for _, text := range texts {
			for what, secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("span %q carries the %s: %q", s.Name, what, text)
				}
			}
		}
	}
	log := logs.String()
	for what, secret := range secrets {
		if strings.Contains(log, secret) {
			t.Errorf("the log carries the %s", what)
		}
	}
	for _, server := range []tracetest.SpanStub{uploadTrace, apiTrace} {
		if !strings.Contains(log, `"trace_id":"`+server.SpanContext.TraceID().String()+`"`) {
			t.Errorf("no log line carries the trace id of %s", server.Name)
		}
	}
	for line := range strings.SplitSeq(strings.TrimSpace(log), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Errorf("log line is not JSON: %q", line)
			continue
		}
		if entry["msg"] == "request" && (entry["trace_id"] == nil || entry["span_id"] == nil || entry["route"] == nil) {
			t.Errorf("access line without trace_id, span_id or route: %q", line)
		}
	}

	metrics := string(mustStatus(t, mustRequest(t, base+"/metrics"), http.StatusOK))
	for _, series := range []string{
		`http_server_request_duration_seconds_bucket{http_request_method="POST",http_response_status_code="200",http_route="/api/gdt/upload"`,
		`http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",http_route="/api/oauth/v2/resource/company"}`,
		`praxis_upload_bytes_total{source="gdt"}`,
		`praxis_upload_files_total{source="gdt"} 1`,
		`praxis_upload_refused_total{reason="secret_invalid"} 1`,
		`praxis_oauth_tokens_issued_total 1`,
		`go_sql_connections_open{db_system="sqlite"}`,
		`db_client_connections_usage{db_system="redis"`,
		`db_client_connections_create_time_milliseconds_count{db_system="redis"`,
		`praxis_webhook_endpoints{state="delivering"} 0`,
		`praxis_webhook_due_for_seconds 0`,
		`praxis_blob_free_bytes `,
		`praxis_blob_size_bytes `,
		`db_client_operation_duration_seconds_count{db_collection_name="customers",db_operation_name="SELECT",db_system_name="sqlite"}`,
		`db_client_operation_duration_seconds_count{db_operation_name="EVALSHA",db_system_name="redis"}`,
	} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// descendsFrom follows parent links from span up to root.
func descendsFrom(parents map[trace.SpanID]trace.SpanID, span, root trace.SpanID) bool {
	for seen := 0; seen < len(parents); seen++ {
		parent, ok := parents[span]
		if !ok {
			return false
		}
		if parent == root {
			return true
		}
		span = parent
	}
	return false
}

// spanKind sorts a child span: a SQL query, a Redis command, or a blob operation.
func spanKind(s tracetest.SpanStub) string {
	for _, a := range s.Attributes {
		if a.Key == "db.system.name" {
			if a.Value.AsString() == "redis" {
				return "redis"
			}
			return "sql"
		}
	}
	return s.Name
}

func attrValues(attrs []attribute.KeyValue) []string {
	out := make([]string, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a.Value.String())
	}
	return out
}

// lastServerSpan is the newest finished server span of that name.
func lastServerSpan(t *testing.T, exporter *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	spans := exporter.GetSpans()
	for i := len(spans) - 1; i >= 0; i-- {
		if spans[i].Name == name && !spans[i].Parent.IsValid() || spans[i].Name == name && spans[i].Parent.IsRemote() {
			return spans[i]
		}
	}
	t.Fatalf("no server span %q among %d spans", name, len(spans))
	return tracetest.SpanStub{}
}

func mustRequest(t *testing.T, target string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func mustStatus(t *testing.T, req *http.Request, want int) []byte {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", req.Method, req.URL.Path, resp.StatusCode, raw, want)
	}
	return raw
}
