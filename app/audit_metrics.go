package app

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/praxis-health/praxis/adapters/telemetry"
)

// auditBatchMetrics records every audit group commit:
// praxis_audit_batch_events (how many events it wrote) and
// praxis_audit_batch_wait_seconds (how long its oldest event waited for
// the commit: what the trail adds to a read's answer under load). Nil when
// the meter refuses an instrument (only a misspelt name makes it do so).
func auditBatchMetrics(tel *telemetry.Telemetry) func(events int, oldest time.Duration) {
	m := tel.Meter.Meter("github.com/praxis-health/praxis")
	events, err := m.Int64Histogram("praxis.audit.batch.events", metric.WithDescription("Audit events written by one group commit"),
		metric.WithExplicitBucketBoundaries(1, 2, 4, 8, 16, 32, 64, 128, 256, 512))
	if err != nil {
		return nil
	}
	wait, err := m.Float64Histogram("praxis.audit.batch.wait", metric.WithUnit("s"),
		metric.WithDescription("How long the oldest event of an audit group commit waited, from its request to the commit"),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10))
	if err != nil {
		return nil
	}
	return func(n int, oldest time.Duration) {
		ctx := context.Background()
		events.Record(ctx, int64(n))
		wait.Record(ctx, oldest.Seconds())
	}
}
