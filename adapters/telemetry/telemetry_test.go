package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

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

// TestAccessSpelledAsJSONHandler: the access line NewLogger's handler writes
// by hand is the line its JSON handler writes for the same record, with and
// without a span, for durations from nothing to years and sizes of every
// width; a route that needs escaping takes the record's way; below the
// logger's level nothing is written.
func TestAccessSpelledAsJSONHandler(t *testing.T) {
	t.Parallel()
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xab, 1, 0xff}, SpanID: trace.SpanID{2, 0xc0},
		TraceFlags: trace.FlagsSampled})
	inSpan := trace.ContextWithSpanContext(context.Background(), sc)
	at := time.Date(2026, 11, 27, 15, 4, 5, 123456789, time.FixedZone("CET", 3600))
	routes := []string{"/api/oauth/v2/resource/customers/:id", "/", "unmatched", "/x<y>&z'", `/a"b\c` + "\x01\u00e9<&>"}
	durations := []time.Duration{0, time.Nanosecond, time.Microsecond, 1234567 * time.Nanosecond, 999 * time.Millisecond,
		90 * time.Second, 3 * 365 * 24 * time.Hour}
	for _, ctx := range []context.Context{context.Background(), inSpan} {
		for _, route := range routes {
			for i, d := range durations {
				status, reqBytes, respBytes := []int{200, 404, 503}[i%3], i*i*1000, 1<<(4*i)-1
				var want bytes.Buffer
				var got []byte
				ref := slog.NewRecord(at, slog.LevelInfo, "request", 0)
				ref.AddAttrs(slog.String("method", "GET"), slog.String("route", route), slog.Int("status", status),
					slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.Int("request_bytes", reqBytes),
					slog.Int("response_bytes", respBytes))
				if err := (traceHandler{slog.NewJSONHandler(&want, nil)}).Handle(ctx, ref); err != nil {
					t.Fatal(err)
				}
				wanted := want.Bytes()
				if plain(route) {
					got = appendAccess(nil, at, trace.SpanContextFromContext(ctx), "GET", route, status, d, reqBytes, respBytes)
				} else { // the record's way, its time now: compare all but the time
					var line bytes.Buffer
					Access(ctx, NewLogger(&line, slog.LevelInfo), "GET", route, status, d, reqBytes, respBytes)
					got, wanted = withoutTime(t, line.Bytes()), withoutTime(t, wanted)
				}
				if string(got) != string(wanted) {
					t.Errorf("route %q, %v:\n got  %s want %s", route, d, got, wanted)
				}
			}
		}
	}

	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelInfo)
	Access(inSpan, log, "GET", routes[0], 200, time.Millisecond, 0, 10)
	Access(inSpan, log.With("k", "v"), "GET", routes[0], 200, time.Millisecond, 0, 10) // not the root handler: the record's way
	var line map[string]any
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %s", len(lines), buf.Bytes())
	}
	for i, l := range lines {
		if err := json.Unmarshal(l, &line); err != nil || line["route"] != routes[0] || line["trace_id"] != sc.TraceID().String() ||
			(i == 1) != (line["k"] == "v") {
			t.Errorf("line %d: %s (%v)", i, l, err)
		}
	}
	buf.Reset()
	Access(inSpan, NewLogger(&buf, slog.LevelWarn), "GET", routes[0], 200, time.Millisecond, 0, 10)
	if buf.Len() != 0 {
		t.Errorf("an access line below the level: %s", buf.Bytes())
	}
}

// withoutTime is a JSON line with its time field removed.
func withoutTime(t *testing.T, line []byte) []byte {
	t.Helper()
	i := bytes.Index(line, []byte(`"level":`))
	if !bytes.HasPrefix(line, []byte(`{"time":"`)) || i < 0 {
		t.Fatalf("not a line with a time first: %s", line)
	}
	return append([]byte("{"), line[i:]...)
}
