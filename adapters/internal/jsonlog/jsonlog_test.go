package jsonlog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// TestAccessSpelledAsJSONHandler: the access line New's handler writes
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
					Access(ctx, New(&line, slog.LevelInfo), "GET", route, status, d, reqBytes, respBytes)
					got, wanted = withoutTime(t, line.Bytes()), withoutTime(t, wanted)
				}
				if string(got) != string(wanted) {
					t.Errorf("route %q, %v:\n got  %s want %s", route, d, got, wanted)
				}
			}
		}
	}

	var buf bytes.Buffer
	log := New(&buf, slog.LevelInfo)
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
	Access(inSpan, New(&buf, slog.LevelWarn), "GET", routes[0], 200, time.Millisecond, 0, 10)
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
