package httphost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/adapters/internal/jsonlog"
	"github.com/praxis-health/praxis/adapters/internal/otelattr"
)

const instrumentation = "github.com/praxis-health/praxis/adapters/httphost"

// observe is the first middleware: one server span per request named by its
// route template, the request duration histogram, and one access log line,
// in the stable OpenTelemetry HTTP conventions. Only method, route, status,
// sizes and duration are recorded: never the raw path or query, headers or
// bodies, which carry secrets and patient data (see scrubbedPath).
func observe(t httpkit.Telemetry) fiber.Handler {
	t = t.WithDefaults()
	tracer := t.Tracer.Tracer(instrumentation)
	duration := httpkit.Must(t.Meter.Meter(instrumentation).Float64Histogram("http.server.request.duration",
		metric.WithUnit("s"), metric.WithDescription("Duration of HTTP requests, by route and status"),
		metric.WithExplicitBucketBoundaries(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)))
	series := otelattr.NewSets(maxSeries, func(k seriesKey) []attribute.KeyValue {
		return []attribute.KeyValue{attribute.String("http.request.method", k.method), attribute.String("http.route", k.route),
			attribute.Int("http.response.status_code", k.status)}
	})
	return func(c *fiber.Ctx) error {
		start := time.Now()
		// fiber's strings point into buffers fasthttp reuses: copy what outlives the request.
		method := knownMethod(c.Method())
		ctx := t.Propagator.Extract(c.UserContext(), headerCarrier[*fasthttp.RequestHeader]{&c.Request().Header})
		ctx, span := tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(semconv.HTTPRequestMethodKey.String(method), semconv.URLScheme(scheme(c))))
		c.SetUserContext(ctx)

		if err := serve(c, t.Logger); err != nil {
			if err := c.App().Config().ErrorHandler(c, err); err != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		// A body the handler did not read (a refused request) is read and
		// dropped, up to a bound, so that the client still sending it gets
		// the answer instead of a reset; past the bound the connection closes.
		httpkit.DrainOrClose(c, httpkit.Body(c))
		status, route := c.Response().StatusCode(), httpkit.RouteOf(c)
		if span.IsRecording() { // unsampled, what it would be given is built for nothing
			span.SetName(method + " " + route)
			span.SetAttributes(semconv.HTTPRoute(route), semconv.URLPath(scrubbedPath(route)), semconv.HTTPResponseStatusCode(status),
				semconv.NetworkProtocolVersion(protocolVersion(c)))
			if status >= 500 {
				span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(status)))
				span.SetStatus(codes.Error, "")
			}
		}
		span.End()

		elapsed := time.Since(start)
		duration.Record(context.WithoutCancel(ctx), elapsed.Seconds(), metric.WithAttributeSet(series.Of(seriesKey{method, route, status})))
		jsonlog.Access(ctx, t.Logger, method, route, status, elapsed, max(c.Request().Header.ContentLength(), 0), responseSize(c))
		// The client can find its request's trace.
		t.Propagator.Inject(ctx, headerCarrier[*fasthttp.ResponseHeader]{&c.Response().Header})
		return nil
	}
}

// seriesKey is what names a request duration's series.
type seriesKey struct {
	method, route string
	status        int
}

// maxSeries bounds the request duration series whose attributes are kept
// built: methods × route templates × statuses, a few hundred in practice.
const maxSeries = 4096

// scrubbedPath is url.path as the conventions ask it of a path that holds
// sensitive values: the route with each parameter's value replaced by
// REDACTED. Paths carry patient ids and invitation tokens
// (/settings/join/:company/:token); the audit trail, not the trace, says
// which patient a request touched. An unmatched path is not recorded at all.
func scrubbedPath(route string) string {
	if route == httpkit.Unmatched {
		return "/" + redacted
	}
	segments := strings.Split(route, "/")
	for i, s := range segments {
		if strings.ContainsAny(s, ":*+") {
			segments[i] = redacted
		}
	}
	return strings.Join(segments, "/")
}

const redacted = "REDACTED"

// scheme is url.scheme: http or https as constants, anything else a
// forwarding proxy said copied (fiber's string points into a buffer).
func scheme(c *fiber.Ctx) string {
	switch p := c.Protocol(); p {
	case "http":
		return "http"
	case "https":
		return "https"
	default:
		return utils.CopyString(p)
	}
}

// knownMethod is http.request.method: one of the methods HTTP defines, or
// _OTHER, so that a made-up method neither names a span nor adds a series.
func knownMethod(m string) string {
	for _, known := range [...]string{fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch,
		fiber.MethodDelete, fiber.MethodConnect, fiber.MethodOptions, fiber.MethodTrace} {
		if m == known {
			return known // the constant: fiber's string points into a buffer fasthttp reuses
		}
	}
	return "_OTHER"
}

// protocolVersion is network.protocol.version: "1.1" of "HTTP/1.1".
func protocolVersion(c *fiber.Ctx) string {
	return strings.TrimPrefix(string(c.Request().Header.Protocol()), "HTTP/")
}

// errPanic answers a request whose handler panicked: a 500 like any other
// internal error, with the trace id to find the logged stack by.
var errPanic = errors.New("the handler panicked")

// serve runs the rest of the chain. A panic in it is logged with its stack
// and becomes errPanic; the server goes on serving. Only a runtime error's
// own text is logged with it: another panic value may hold request data.
func serve(c *fiber.Ctx, log *slog.Logger) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		what := fmt.Sprintf("%T", r)
		if re, ok := r.(runtime.Error); ok {
			what = re.Error()
		}
		log.LogAttrs(c.UserContext(), slog.LevelError, "panic", slog.String("route", httpkit.RouteOf(c)),
			slog.String("panic", what), slog.String("stack", string(debug.Stack())))
		err = errPanic
	}()
	return c.Next()
}

// responseSize never calls Body() on a streamed response: that would read the
// whole stream into memory.
func responseSize(c *fiber.Ctx) int {
	if c.Response().IsBodyStream() {
		return max(c.Response().Header.ContentLength(), 0)
	}
	return len(c.Response().Body())
}

// fasthttpHeader is what request and response headers of fasthttp share.
type fasthttpHeader interface {
	Peek(key string) []byte
	Set(key, value string)
	VisitAll(f func(key, value []byte))
}

// headerCarrier lets propagators read and write fasthttp headers directly.
type headerCarrier[H fasthttpHeader] struct{ h H }

func (c headerCarrier[H]) Get(key string) string { return string(c.h.Peek(key)) }
func (c headerCarrier[H]) Set(key, value string) { c.h.Set(key, value) }
func (c headerCarrier[H]) Keys() []string {
	var keys []string
	c.h.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}
