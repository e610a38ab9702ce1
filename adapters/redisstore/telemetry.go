package redisstore

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/dbconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/praxis-health/praxis/adapters/internal/otelattr"
)

const instrumentation = "github.com/praxis-health/praxis/adapters/redisstore"

// Instrument gives rdb a client span per command (and per pipeline) and the
// operation duration histogram in the stable OpenTelemetry database
// conventions: db.system.name, db.operation.name, db.namespace, the server.
// A command's arguments are never recorded: the keys hold token hashes and
// client ids. The connection pool is reported by poolMetrics.
func Instrument(rdb *redis.Client, tp trace.TracerProvider, mp metric.MeterProvider) error {
	opts := rdb.Options()
	h := &commandHook{tracer: tp.Tracer(instrumentation),
		common: []attribute.KeyValue{semconv.DBSystemNameRedis, semconv.DBNamespace(strconv.Itoa(opts.DB))}}
	if host, port, err := net.SplitHostPort(opts.Addr); err == nil {
		h.common = append(h.common, semconv.ServerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			h.common = append(h.common, semconv.ServerPort(p))
		}
	}
	var err error
	if h.duration, err = dbconv.NewClientOperationDuration(mp.Meter(instrumentation)); err != nil {
		return err
	}
	h.series = otelattr.NewSets(maxSeries, func(k commandSeries) []attribute.KeyValue {
		return append(k.attrs(), semconv.DBSystemNameRedis)
	})
	rdb.AddHook(h)
	return poolMetrics(rdb, mp.Meter(instrumentation))
}

type commandHook struct {
	tracer   trace.Tracer
	duration dbconv.ClientOperationDuration
	common   []attribute.KeyValue
	series   *otelattr.Sets[commandSeries] // of the commands that succeeded
}

// commandSeries names the duration series of a command or a batch.
type commandSeries struct {
	operation string
	batch     int // commands in a batch of more than one, else 0
}

func (k commandSeries) attrs() []attribute.KeyValue {
	attrs := []attribute.KeyValue{semconv.DBOperationName(k.operation)}
	if k.batch > 1 {
		attrs = append(attrs, semconv.DBOperationBatchSize(k.batch))
	}
	return attrs
}

// maxSeries bounds the command series whose attributes are kept built.
const maxSeries = 1024

func (h *commandHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *commandHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		return h.observe(ctx, commandSeries{operation: strings.ToUpper(cmd.Name())}, func(ctx context.Context) error { return next(ctx, cmd) })
	}
}

// ProcessPipelineHook names a pipeline (and a MULTI/EXEC transaction) after
// its commands as the conventions name a batch: "BATCH GET" when they share
// one name, "BATCH" otherwise.
func (h *commandHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		operation := "BATCH"
		var names []string
		for _, cmd := range cmds {
			if name := strings.ToUpper(cmd.Name()); name != "MULTI" && name != "EXEC" {
				names = append(names, name)
			}
		}
		if allSame(names) {
			operation += " " + names[0]
		}
		series := commandSeries{operation: operation}
		if len(names) > 1 {
			series.batch = len(names)
		}
		return h.observe(ctx, series, func(ctx context.Context) error { return next(ctx, cmds) })
	}
}

func allSame(names []string) bool {
	for _, n := range names {
		if n != names[0] {
			return false
		}
	}
	return len(names) > 0
}

// observe runs one command or batch inside its span. A miss (redis.Nil) is
// no error; a failure is recorded by kind only: a server's message may
// quote a key.
func (h *commandHook) observe(ctx context.Context, series commandSeries, run func(context.Context) error) error {
	start := time.Now()
	ctx, span := h.tracer.Start(ctx, series.operation, trace.WithSpanKind(trace.SpanKindClient))
	err := run(ctx)
	var failure []attribute.KeyValue
	if err != nil && !errors.Is(err, redis.Nil) {
		failure = append(failure, semconv.ErrorTypeKey.String(errorKind(err)))
		span.SetStatus(codes.Error, "")
		h.duration.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), dbconv.SystemNameRedis, append(series.attrs(), failure...)...)
	} else {
		h.duration.RecordSet(context.WithoutCancel(ctx), time.Since(start).Seconds(), h.series.Of(series))
	}
	if span.IsRecording() {
		span.SetAttributes(h.common...)
		span.SetAttributes(series.attrs()...)
		span.SetAttributes(failure...)
	}
	span.End()
	return err
}

// errorKind is the Redis error prefix (ERR, NOSCRIPT, READONLY, …), or the
// kind of a failure to reach the server.
func errorKind(err error) string {
	var netErr net.Error
	var redisErr redis.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &netErr):
		return "network"
	case errors.As(err, &redisErr):
		// Redis's error replies start with an upper-case code.
		prefix, _, _ := strings.Cut(redisErr.Error(), " ")
		if prefix != "" && strings.Trim(prefix, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
			return prefix
		}
	}
	return "other"
}
