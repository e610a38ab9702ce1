package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/fx"

	"github.com/praxis-health/praxis/adapters/blobstore"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/adapters/telemetry"
	"github.com/praxis-health/praxis/ports"
)

// Gauges are the states an SRE alerts on that no request counts: the
// webhook backlog, a sync feed held back by an open transaction, the blob
// store's free space. They are read when /metrics is scraped, each within
// a time limit; what cannot be read then is left out of that scrape.
var Gauges = fx.Module("gauges", fx.Invoke(registerGauges))

// gaugeTimeout bounds what one scrape waits for a gauge's source.
const gaugeTimeout = 2 * time.Second

type gaugeSources struct {
	fx.In
	Telemetry *telemetry.Telemetry
	Logger    *slog.Logger
	DB        *bun.DB
	Blobs     *blobstore.Store
	Endpoints ports.WebhookEndpoints
}

func registerGauges(in gaugeSources) error {
	m := in.Telemetry.Meter.Meter("github.com/praxis-health/praxis")
	endpoints, err := m.Int64ObservableGauge("praxis.webhook.endpoints", metric.WithUnit("{endpoint}"),
		metric.WithDescription("Webhook endpoints of every company by state: delivering, failing (retrying), disabled"))
	if err != nil {
		return err
	}
	dueFor, err := m.Float64ObservableGauge("praxis.webhook.due_for", metric.WithUnit("s"),
		metric.WithDescription("How long the enabled webhook endpoint due longest has waited for a dispatcher (0: none due)"))
	if err != nil {
		return err
	}
	heldBack, err := m.Float64ObservableGauge("praxis.sync.feed.held_back", metric.WithUnit("s"),
		metric.WithDescription("How long committed changes have waited in the sync and webhook feeds for an older transaction still open (PostgreSQL)"))
	if err != nil {
		return err
	}
	free, err := m.Int64ObservableGauge("praxis.blob.free", metric.WithUnit("By"),
		metric.WithDescription("Free bytes of a file:// blob store's file system"))
	if err != nil {
		return err
	}
	size, err := m.Int64ObservableGauge("praxis.blob.size", metric.WithUnit("By"),
		metric.WithDescription("Bytes of a file:// blob store's file system"))
	if err != nil {
		return err
	}
	horizon := sqlstore.NewFeedHorizon(in.DB)
	warn := func(what string, err error) {
		in.Logger.Warn("a gauge could not be read", "gauge", what, "error", err.Error())
	}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, gaugeTimeout)
		defer cancel()
		now := time.Now()
		if b, err := in.Endpoints.Backlog(ctx, now); err != nil {
			warn("webhook backlog", err)
		} else {
			for state, n := range map[string]int{"delivering": b.Delivering, "failing": b.Failing, "disabled": b.Disabled} {
				o.ObserveInt64(endpoints, int64(n), metric.WithAttributes(attribute.String("state", state)))
			}
			waited := 0.0
			if !b.OldestDue.IsZero() {
				waited = max(now.Sub(b.OldestDue).Seconds(), 0)
			}
			o.ObserveFloat64(dueFor, waited)
		}
		if held, ok, err := horizon.HeldBack(ctx, now); err != nil {
			warn("sync feed horizon", err)
		} else if ok {
			o.ObserveFloat64(heldBack, held.Seconds())
		}
		if f, s, ok, err := in.Blobs.Space(); err != nil {
			warn("blob store space", err)
		} else if ok {
			o.ObserveInt64(free, f)
			o.ObserveInt64(size, s)
		}
		return nil
	}, endpoints, dueFor, heldBack, free, size)
	return err
}
