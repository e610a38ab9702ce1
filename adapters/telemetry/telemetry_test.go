package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestExportOnlyWhenConfigured: no exporter and no endpoint means spans are
// never sampled (nothing recorded on the hot path) yet still carry ids.
func TestExportOnlyWhenConfigured(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
	} {
		for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
			t.Setenv(k, tc.env[k])
		}
		if got := exportConfigured(); got != tc.want {
			t.Errorf("%v: export %v, want %v", tc.env, got, tc.want)
		}
	}

	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		t.Setenv(k, "")
	}
	tel, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	_, span := tel.Tracer.Tracer("t").Start(context.Background(), "request")
	if tel.Exporting || span.IsRecording() || !span.SpanContext().IsValid() {
		t.Errorf("exporting %v, recording %v, valid ids %v: want no export, no recording, valid ids",
			tel.Exporting, span.IsRecording(), span.SpanContext().IsValid())
	}
}

func TestLoggerAddsTraceIDs(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelWarn)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	log.InfoContext(ctx, "below the level")
	log.With("k", "v").WarnContext(ctx, "inside a request")
	log.Warn("outside")
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (info is below warn): %s", len(lines), buf.String())
	}
	var in, out map[string]any
	_ = json.Unmarshal(lines[0], &in)
	_ = json.Unmarshal(lines[1], &out)
	if in["trace_id"] != sc.TraceID().String() || in["span_id"] != sc.SpanID().String() || in["k"] != "v" {
		t.Errorf("line inside a request: %s", lines[0])
	}
	if _, ok := out["trace_id"]; ok {
		t.Errorf("line outside a request has a trace id: %s", lines[1])
	}
}
