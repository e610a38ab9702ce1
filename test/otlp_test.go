package test

import (
	"context"
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
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP trace receiver: it keeps the span names it is sent.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.names = append(c.names, s.GetName())
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (c *collector) received() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.names...)
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
				endpoint = srv.URL
			}
			s := startServer(t, backends[0], "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL="+protocol)
			if r := s.request(t, http.MethodGet, "/.well-known/oauth-authorization-server", "", ""); r.status != 200 {
				t.Fatalf("metadata: %d", r.status)
			}
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
			names := strings.Join(c.received(), "\n")
			if !strings.Contains(names, "GET /.well-known/oauth-authorization-server") || !strings.Contains(names, "GET /readyz") {
				t.Errorf("the collector received %q, want the server spans of the requests", names)
			}
		})
	}
}
