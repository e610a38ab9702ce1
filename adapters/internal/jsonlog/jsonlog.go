// Package jsonlog is the JSON-lines logger the adapters share: slog's JSON
// handler with a request's trace ids on each line, and the access line
// written by hand (Access). It is no adapter: adapters/internal holds only
// such helpers, which import nothing of ours.
package jsonlog

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// New writes JSON lines to w at level and up; a line logged with a
// request's context carries its trace_id and span_id. The logger's handler
// also writes the access line itself (Access), the same bytes its JSON
// handler would write for that record, without building one.
func New(w io.Writer, level slog.Level) *slog.Logger {
	out := &lockedWriter{w: w}
	return slog.New(&rootHandler{traceHandler{slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level})}, out})
}

type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}

// rootHandler is New's handler before any WithAttrs or WithGroup
// (those answer a plain traceHandler, whose lines carry what they add).
type rootHandler struct {
	traceHandler
	out *lockedWriter
}

// Access logs a request's access line to log: msg "request" at INFO with
// the method, route template, status, duration in milliseconds and the two
// sizes (and, by New's handler, the trace ids). On a logger New
// made, the line is spelled byte for byte as its JSON handler spells that
// record (TestAccessSpelledAsJSONHandler) but appended into a pooled buffer:
// no record, no attribute values, no caller lookup — a twentieth of the
// server's CPU on a small authenticated GET went to the record's way.
// Strings that would need escaping (never the route templates or methods),
// and any other logger, go the record's way.
func Access(ctx context.Context, log *slog.Logger, method, route string, status int, elapsed time.Duration,
	requestBytes, responseBytes int) {
	now := time.Now()
	if h, ok := log.Handler().(*rootHandler); ok && plain(method) && plain(route) && now.Year() <= 9999 {
		if h.Enabled(ctx, slog.LevelInfo) {
			h.access(ctx, now, method, route, status, elapsed, requestBytes, responseBytes)
		}
		return
	}
	log.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("method", method), slog.String("route", route),
		slog.Int("status", status), slog.Float64("duration_ms", durationMS(elapsed)), slog.Int("request_bytes", requestBytes),
		slog.Int("response_bytes", responseBytes))
}

func (h *rootHandler) access(ctx context.Context, now time.Time, method, route string, status int, elapsed time.Duration,
	requestBytes, responseBytes int) {
	bp := lines.Get().(*[]byte)
	b := appendAccess((*bp)[:0], now, trace.SpanContextFromContext(ctx), method, route, status, elapsed, requestBytes, responseBytes)
	_, _ = h.out.Write(b)
	*bp = b
	lines.Put(bp)
}

// durationMS is a duration in milliseconds to the microsecond.
func durationMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

var lines = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func appendAccess(b []byte, now time.Time, sc trace.SpanContext, method, route string, status int, elapsed time.Duration,
	requestBytes, responseBytes int) []byte {
	b = append(b, `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","method":"`...)
	b = append(b, method...)
	b = append(b, `","route":"`...)
	b = append(b, route...)
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"duration_ms":`...)
	// encoding/json spells a float in 'f' form between 1e-6 and 1e21: a
	// whole number of microseconds in milliseconds is 0 or at least 0.001,
	// and never near 1e21.
	b = strconv.AppendFloat(b, durationMS(elapsed), 'f', -1, 64)
	b = append(b, `,"request_bytes":`...)
	b = strconv.AppendInt(b, int64(requestBytes), 10)
	b = append(b, `,"response_bytes":`...)
	b = strconv.AppendInt(b, int64(responseBytes), 10)
	if sc.IsValid() {
		tid, sid := sc.TraceID(), sc.SpanID()
		b = append(b, `,"trace_id":"`...)
		b = hex.AppendEncode(b, tid[:])
		b = append(b, `","span_id":"`...)
		b = hex.AppendEncode(b, sid[:])
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

// plain: every byte printable ASCII that JSON carries as it is.
func plain(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// lockedWriter serializes the access lines' writes with the JSON handler's.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
