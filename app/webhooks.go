package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/fx"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/adapters/telemetry"
	webhookout "github.com/praxis-health/praxis/adapters/webhook"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// Webhooks are the endpoints' store and use case, the change feed, the
// way out of this network and the dispatcher, which runs while the server
// runs (docs/contract.md §12).
var Webhooks = fx.Module("webhooks",
	fx.Provide(
		openKeyring,
		fx.Annotate(sqlstore.NewWebhookEndpoints, fx.As(new(ports.WebhookEndpoints))),
		fx.Annotate(sqlstore.NewChangeFeed, fx.As(new(ports.ChangeFeed))),
		func(cfg Config) *webhookout.Deliverer {
			return webhookout.New(net.DefaultResolver, cfg.WebhookAllowPrivate, Version)
		},
		func(d *webhookout.Deliverer, tel *telemetry.Telemetry) ports.Deliverer {
			return observedDeliveries(d, tel)
		},
		// A client's key set is fetched under the events' egress rules.
		func(d *webhookout.Deliverer) ports.KeySets { return d },
		func(store ports.WebhookEndpoints, feed ports.ChangeFeed, keys *webhook.Keyring, out ports.Deliverer, cfg Config,
			ids ports.IdempotencyStore, tx ports.Transactor, audits *usecase.Auditor) ports.Webhooks {
			return usecase.NewWebhooks(store, feed, keys, out, cfg.WebhookAllowPrivate, ids, tx, audits)
		},
		startDispatcher,
	),
	fx.Invoke(startDeliveryLogSweeper),
)

// startDeliveryLogSweeper drops delivery-log entries past 30 days, hourly.
// Every replica may: a sweep is idempotent.
func startDeliveryLogSweeper(lc fx.Lifecycle, d *usecase.Dispatcher, logger *slog.Logger) {
	every(lc, time.Hour, func(ctx context.Context) {
		if n, err := d.SweepDeliveries(ctx); err != nil {
			logger.Warn("webhook delivery log sweep failed", "error", err.Error())
		} else if n > 0 {
			logger.Info("webhook delivery log entries past 30 days deleted", "attempts", n)
		}
	})
}

// startDispatcher runs the dispatcher while the server runs; it stops
// after the HTTP server has drained. Without a key there is nothing to sign with.
func startDispatcher(lc fx.Lifecycle, cfg Config, store ports.WebhookEndpoints, feed ports.ChangeFeed, keys *webhook.Keyring,
	out ports.Deliverer, auditor ports.Auditor, logger *slog.Logger) *usecase.Dispatcher {
	s := usecase.DispatcherSettings{Lease: cfg.WebhookLease, Poll: cfg.WebhookPoll, Workers: cfg.WebhookWorkers,
		Batch: usecase.DefaultDispatcherSettings.Batch, TimeScale: cfg.WebhookTimeScale}
	d := usecase.NewDispatcher(store, feed, keys, out, auditor, logger, s)
	if keys != nil {
		lc.Append(fx.StartStopHook(d.Start, d.Stop))
	}
	return d
}

// observedDeliverer counts every attempt by its outcome and times it:
// praxis_webhook_deliveries_total{outcome} and
// praxis_webhook_delivery_duration_seconds, without an endpoint, a company
// or an address among the attributes.
type observedDeliverer struct {
	inner    ports.Deliverer
	count    metric.Int64Counter
	duration metric.Float64Histogram
}

func observedDeliveries(inner ports.Deliverer, tel *telemetry.Telemetry) ports.Deliverer {
	m := tel.Meter.Meter("github.com/praxis-health/praxis")
	count, err := m.Int64Counter("praxis.webhook.deliveries", metric.WithDescription("Webhook delivery attempts by outcome"))
	if err != nil {
		return inner
	}
	duration, err := m.Float64Histogram("praxis.webhook.delivery.duration", metric.WithUnit("s"),
		metric.WithDescription("How long a webhook delivery attempt took, to the receiver's answer or the time limit"))
	if err != nil {
		return inner
	}
	return observedDeliverer{inner: inner, count: count, duration: duration}
}

func (o observedDeliverer) Deliver(ctx context.Context, d ports.Delivery) ports.DeliveryResult {
	start := time.Now()
	res := o.inner.Deliver(ctx, d)
	outcome := attribute.String("outcome", webhook.OutcomeOf(res.Status).String())
	ctx = context.WithoutCancel(ctx)
	o.count.Add(ctx, 1, metric.WithAttributes(outcome))
	o.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(outcome))
	return res
}

// keyFile is where the embedded mode keeps its webhook key: beside its database.
const keyFile = "webhook.key"

// openKeyring reads PRAXIS_WEBHOOK_KEY, or in the embedded mode the key
// file beside the database (made on first start, readable by this user
// alone). A shared database without a key gets none: every replica must
// have the same key, so none is made up.
func openKeyring(cfg Config, logger *slog.Logger) (*webhook.Keyring, error) {
	if cfg.WebhookKey != "" {
		k, err := webhook.NewKeyring(cfg.WebhookKey)
		if err != nil {
			return nil, fmt.Errorf("PRAXIS_WEBHOOK_KEY: %w", err)
		}
		return k, nil
	}
	path, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite:")
	if !ok {
		logger.Warn("webhooks are off: set PRAXIS_WEBHOOK_KEY (32 bytes in base64, the same on every replica)")
		return nil, nil //nolint:nilnil // no key is a state the use case answers with 503
	}
	path, _, _ = strings.Cut(strings.TrimPrefix(path, "file:"), "?")
	name := filepath.Join(filepath.Dir(path), keyFile)
	b, err := os.ReadFile(name) //nolint:gosec // the operator's own data directory
	if errors.Is(err, fs.ErrNotExist) {
		key, err := webhook.NewKey()
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o750); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // see above
		if err == nil {
			_, err = f.WriteString(key + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("webhook key file: %w", err)
		}
		if b, err = os.ReadFile(name); err != nil { //nolint:gosec // see above
			return nil, fmt.Errorf("webhook key file: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("webhook key file: %w", err)
	}
	k, err := webhook.NewKeyring(string(b))
	if err != nil {
		return nil, fmt.Errorf("webhook key file %s: %w", name, err)
	}
	return k, nil
}
