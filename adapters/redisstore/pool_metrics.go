package redisstore

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// poolMetrics reports rdb's connection pool under the names redisotel's
// InstrumentMetrics gave it (db.client.connections.*, by db.system and
// pool.name), which the operators' dashboards read: gauges read from the
// pool's own counts when scraped, and the time a new connection takes to
// dial. It leaves out redisotel's per-command hook: that hook built an
// attribute set on every command to record the time a connection is
// borrowed (db.client.connections.use_time), which the command hook's
// operation duration already tells, and cost the bearer check a few
// percent of the server's CPU.
func poolMetrics(rdb *redis.Client, meter metric.Meter) error {
	opts := rdb.Options()
	pool := []attribute.KeyValue{attribute.String("db.system", "redis"), attribute.String("pool.name", opts.Addr)}
	poolAttrs := attribute.NewSet(pool...)
	idle := attribute.NewSet(append(poolAttrs.ToSlice(), attribute.String("state", "idle"))...)
	used := attribute.NewSet(append(poolAttrs.ToSlice(), attribute.String("state", "used"))...)

	var errs []error
	gauge := func(name, description, unit string) metric.Int64ObservableUpDownCounter {
		options := []metric.Int64ObservableUpDownCounterOption{metric.WithDescription(description)}
		if unit != "" {
			options = append(options, metric.WithUnit(unit))
		}
		g, err := meter.Int64ObservableUpDownCounter(name, options...)
		errs = append(errs, err)
		return g
	}
	idleMax := gauge("db.client.connections.idle.max", "The maximum number of idle open connections allowed", "")
	idleMin := gauge("db.client.connections.idle.min", "The minimum number of idle open connections allowed", "")
	connsMax := gauge("db.client.connections.max", "The maximum number of open connections allowed", "")
	usage := gauge("db.client.connections.usage", "The number of connections that are currently in state described by the state attribute", "")
	waits := gauge("db.client.connections.waits", "The number of times a connection was waited for", "")
	waited := gauge("db.client.connections.waits_duration", "The total time spent for waiting a connection in nanoseconds", "ns")
	timeouts := gauge("db.client.connections.timeouts", "The number of connection timeouts that have occurred trying to obtain a connection from the pool", "")
	hits := gauge("db.client.connections.hits", "The number of times free connection was found in the pool", "")
	misses := gauge("db.client.connections.misses", "The number of times free connection was not found in the pool", "")
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if _, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s, at := rdb.PoolStats(), metric.WithAttributeSet(poolAttrs)
		o.ObserveInt64(idleMax, int64(opts.MaxIdleConns), at)
		o.ObserveInt64(idleMin, int64(opts.MinIdleConns), at)
		o.ObserveInt64(connsMax, int64(opts.PoolSize), at)
		o.ObserveInt64(usage, int64(s.IdleConns), metric.WithAttributeSet(idle))
		o.ObserveInt64(usage, int64(s.TotalConns)-int64(s.IdleConns), metric.WithAttributeSet(used))
		o.ObserveInt64(waits, int64(s.WaitCount), at)
		o.ObserveInt64(waited, s.WaitDurationNs, at)
		o.ObserveInt64(timeouts, int64(s.Timeouts), at)
		o.ObserveInt64(hits, int64(s.Hits), at)
		o.ObserveInt64(misses, int64(s.Misses), at)
		return nil
	}, idleMax, idleMin, connsMax, usage, waits, waited, timeouts, hits, misses); err != nil {
		return err
	}

	created, err := meter.Float64Histogram("db.client.connections.create_time",
		metric.WithDescription("The time it took to create a new connection."), metric.WithUnit("ms"))
	if err != nil {
		return err
	}
	dialed := map[bool]attribute.Set{
		true:  attribute.NewSet(append(poolAttrs.ToSlice(), attribute.String("status", "ok"))...),
		false: attribute.NewSet(append(poolAttrs.ToSlice(), attribute.String("status", "error"), semconv.ErrorTypeOther)...),
	}
	rdb.AddHook(dialHook{created: created, dialed: dialed})
	return nil
}

// dialHook records how long each new connection took to dial.
type dialHook struct {
	created metric.Float64Histogram
	dialed  map[bool]attribute.Set // by success
}

func (h dialHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		start := time.Now()
		conn, err := next(ctx, network, addr)
		h.created.Record(context.WithoutCancel(ctx), float64(time.Since(start))/float64(time.Millisecond), metric.WithAttributeSet(h.dialed[err == nil]))
		return conn, err
	}
}

func (h dialHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h dialHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
