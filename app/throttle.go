package app

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/praxis-health/praxis/adapters/telemetry"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// failOpenCounter counts the moments the attempt counter cannot be reached:
// the use cases then let the request through unthrottled (and log it), so an
// SRE sees the throttling gap in praxis_throttle_unavailable_total.
type failOpenCounter struct {
	ports.AttemptCounter
	unavailable metric.Int64Counter
}

func observedAttempts(inner ports.AttemptCounter, tel *telemetry.Telemetry) ports.AttemptCounter {
	c, err := tel.Meter.Meter("github.com/praxis-health/praxis").Int64Counter("praxis.throttle.unavailable",
		metric.WithDescription("Throttling checks that failed open because the attempt counter could not be reached"))
	if err != nil {
		return inner
	}
	return failOpenCounter{AttemptCounter: inner, unavailable: c}
}

func (f failOpenCounter) Lockout(ctx context.Context, subjects ...string) (time.Duration, error) {
	d, err := f.AttemptCounter.Lockout(ctx, subjects...)
	if err != nil {
		f.unavailable.Add(context.WithoutCancel(ctx), 1)
	}
	return d, err
}

func (f failOpenCounter) Fail(ctx context.Context, subject string, policy domain.LockoutPolicy) (time.Duration, error) {
	d, err := f.AttemptCounter.Fail(ctx, subject, policy)
	if err != nil {
		f.unavailable.Add(context.WithoutCancel(ctx), 1)
	}
	return d, err
}
