// Holds docs/contract.md §5 Operations: traces exported over OTLP.

package test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP trace receiver: it keeps the spans it is sent.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (c *collector) received() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

func (c *collector) names() []string {
	var names []string
	for _, s := range c.received() {
		names = append(names, s.GetName())
	}
	return names
}

// startHTTPCollector serves c as OTLP over HTTP; it answers the endpoint.
func startHTTPCollector(t *testing.T, c *collector) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(raw, &req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		_, _ = c.Export(r.Context(), &req)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(nil)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// stop ends the server with SIGTERM, which flushes its spans.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	s.exited <- nil
}

// TestOTLPExport: with an OTLP endpoint in the standard variables the
// binary exports its spans, over HTTP or gRPC, and flushes them on SIGTERM.
func TestOTLPExport(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			c := &collector{}
			var endpoint string
			if protocol == "grpc" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				srv := grpc.NewServer()
				collectortrace.RegisterTraceServiceServer(srv, c)
				go func() { _ = srv.Serve(ln) }()
				t.Cleanup(srv.Stop)
				endpoint = "http://" + ln.Addr().String()
			} else {
				endpoint = startHTTPCollector(t, c)
			}
			s := startServer(t, backends[0], "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL="+protocol)
			if r := s.request(t, http.MethodGet, "/.well-known/oauth-authorization-server", "", ""); r.status != 200 {
				t.Fatalf("metadata: %d", r.status)
			}
			s.stop(t)
			names := strings.Join(c.names(), "\n")
			if !strings.Contains(names, "GET /.well-known/oauth-authorization-server") || !strings.Contains(names, "GET /readyz") {
				t.Errorf("the collector received %q, want the server spans of the requests", names)
			}
		})
	}
}

// TestTracesFollowConventions: the spans an OTLP receiver gets carry the
// stable OpenTelemetry attributes of HTTP server and database client spans
// (http.request.method, http.route, url.path, db.system.name,
// db.operation.name, …), none of the older names, and no patient detail,
// secret or id from a path: url.path has REDACTED where the route has a
// parameter.
func TestTracesFollowConventions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be backend) {
		c := &collector{}
		addr, site := settingsAddr(t)
		s := startServerAt(t, be, addr, "OTEL_EXPORTER_OTLP_ENDPOINT="+startHTTPCollector(t, c),
			"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "PRAXIS_PUBLIC_URL="+site)
		co := s.newCompany(t, 1<<20)
		cl := s.newClient(t, co, "customers:write customers:read notes:write notes:read")
		token := s.tokenFor(t, cl)
		const firstName, lastName, birth, noteText = "Walburga", "Zwiebelturm", "1937-03-14", "Verdacht auf Hiatushernie"
		auth := "Authorization: Bearer " + token
		created := s.request(t, http.MethodPost, "/api/oauth/v2/resource/customers", "application/json",
			`{"first_name":"`+firstName+`","last_name":"`+lastName+`","birth_date":"`+birth+`"}`, auth)
		if created.status != http.StatusCreated {
			t.Fatalf("create: %d %s", created.status, created.body)
		}
		id := fmt.Sprint(created.decode(t)["id"])
		for _, r := range []struct{ method, path, body string }{
			{http.MethodGet, "/api/oauth/v2/resource/customers/" + id, ""},
			{http.MethodPost, "/api/oauth/v2/resource/notes", `{"customer_id":` + id + `,"text":"` + noteText + `"}`},
			{http.MethodGet, "/api/oauth/v2/resource/notes?customer_id=" + id, ""},
		} {
			if got := s.request(t, r.method, r.path, "application/json", r.body, auth); got.status >= 300 {
				t.Fatalf("%s %s: %d %s", r.method, r.path, got.status, got.body)
			}
		}
		if up := s.upload(t, "/api/gdt/upload", gdtHeaders(co, id), filePart(lastName+".pdf", pdfOfSize(2000))); up.status != http.StatusOK {
			t.Fatalf("upload: %d", up.status)
		}
		const inviteToken = "c2VjcmV0LWludml0YXRpb24tdG9rZW4"
		resp, err := http.Get(site + "/settings/join/" + co.ID + "/" + inviteToken)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		s.stop(t)

		spans := c.received()
		forbidden := map[string]string{"first name": firstName, "last name": lastName, "birth date": birth, "note": noteText,
			"client secret": cl.Secret, "token": token, "upload secret": co.Secret, "invitation token": inviteToken}
		old := []string{"db.system", "db.statement", "db.operation", "db.sql.table", "db.name", "db.user", "http.target", "http.method",
			"http.status_code", "code.filepath"}
		kinds := map[string]int{}
		for _, span := range spans {
			attrs := map[string]string{}
			for _, kv := range span.GetAttributes() {
				attrs[kv.GetKey()] = anyValue(kv.GetValue())
			}
			for _, key := range old {
				if _, ok := attrs[key]; ok {
					t.Errorf("span %q has the old attribute %s", span.GetName(), key)
				}
			}
			for key, value := range attrs {
				for what, secret := range forbidden {
					if strings.Contains(value, secret) || strings.Contains(span.GetName(), secret) {
						t.Errorf("span %q: %s carries the %s", span.GetName(), key, what)
					}
				}
			}
			switch {
			case span.GetKind() == tracepb.Span_SPAN_KIND_SERVER:
				kinds["server"]++
				checkServerSpan(t, span.GetName(), attrs, id, co.ID)
			case attrs["db.system.name"] == "redis":
				kinds["redis"]++
				requireAttrs(t, span.GetName(), attrs, "db.operation.name", "db.namespace", "server.address", "server.port")
			case attrs["db.system.name"] != "":
				kinds["sql"]++
				requireAttrs(t, span.GetName(), attrs, "db.operation.name", "db.query.text")
				if want := map[string]string{"embedded": "sqlite", "postgres": "postgresql"}[be.name]; attrs["db.system.name"] != want {
					t.Errorf("span %q: db.system.name %q, want %q", span.GetName(), attrs["db.system.name"], want)
				}
				if be.name == "postgres" {
					requireAttrs(t, span.GetName(), attrs, "server.address", "server.port", "db.namespace")
				}
				if table := attrs["db.collection.name"]; table != "" && span.GetName() != attrs["db.operation.name"]+" "+table {
					t.Errorf("SQL span %q, want it named %q", span.GetName(), attrs["db.operation.name"]+" "+table)
				}
				kinds["sql with a table"] += min(len(attrs["db.collection.name"]), 1)
			}
		}
		want := []string{"server", "sql", "sql with a table"}
		if be.name == "postgres" {
			want = append(want, "redis")
		}
		for _, k := range want {
			if kinds[k] == 0 {
				t.Errorf("no %s span among %d (%v)", k, len(spans), kinds)
			}
		}
	})
}

// checkServerSpan: the HTTP server span's attributes, and url.path scrubbed
// of the customer id, the company id and the invitation token.
func checkServerSpan(t *testing.T, name string, attrs map[string]string, customerID, companyID string) {
	t.Helper()
	requireAttrs(t, name, attrs, "http.request.method", "http.route", "url.path", "url.scheme", "http.response.status_code", "network.protocol.version")
	if name != attrs["http.request.method"]+" "+attrs["http.route"] {
		t.Errorf("server span %q, want it named by method and route (%q)", name, attrs["http.route"])
	}
	path := attrs["url.path"]
	for _, segment := range strings.Split(path, "/") {
		if segment == customerID || segment == companyID {
			t.Errorf("server span %q: url.path %q carries an id", name, path)
		}
	}
	if strings.Contains(attrs["http.route"], ":") && !strings.Contains(path, "REDACTED") {
		t.Errorf("server span %q: url.path %q, want REDACTED for the route's parameters", name, path)
	}
}

func requireAttrs(t *testing.T, span string, attrs map[string]string, keys ...string) {
	t.Helper()
	for _, key := range keys {
		if attrs[key] == "" {
			t.Errorf("span %q lacks %s (has %v)", span, key, attrs)
		}
	}
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return fmt.Sprint(v)
}
