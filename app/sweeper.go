package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/praxis-health/praxis/app/usecase"
)

// sweepAge is how old an orphan must be before the in-process sweep deletes it.
const sweepAge = time.Hour

// startSweeper runs the orphan sweep in process every PRAXIS_SWEEP_INTERVAL
// in the embedded mode (SQLite: this process alone owns the data). With a
// shared database the chart's CronJob runs `praxis admin blobs sweep` instead,
// so that replicas do not sweep side by side.
func startSweeper(lc fx.Lifecycle, cfg Config, m *usecase.Maintenance, logger *slog.Logger) {
	if cfg.SweepInterval <= 0 || !strings.HasPrefix(cfg.DatabaseURL, "sqlite:") {
		return
	}
	every(lc, cfg.SweepInterval, func(ctx context.Context) {
		report, err := m.SweepOrphans(ctx, sweepAge)
		switch {
		case err != nil:
			logger.Warn("orphan sweep failed", "error", err.Error())
		case report.Deleted > 0:
			logger.Info("orphans swept", "deleted", report.Deleted, "bytes", report.DeletedBytes)
		}
	})
}

// auditSweepInterval is how often a server deletes audit events past
// their retention. Every replica may: a sweep is idempotent.
const auditSweepInterval = time.Hour

// startAuditSweeper deletes audit events older than PRAXIS_AUDIT_RETENTION,
// leaving each company's chain verifiable from its checkpoint, and logs
// every company's head: checkpoints outside the database.
func startAuditSweeper(lc fx.Lifecycle, cfg Config, a *usecase.Auditor, logger *slog.Logger) {
	if cfg.AuditRetention <= 0 || a == nil {
		return
	}
	every(lc, auditSweepInterval, func(ctx context.Context) {
		n, err := a.Sweep(ctx, cfg.AuditRetention, time.Now())
		switch {
		case err != nil:
			logger.Warn("audit sweep failed", "error", err.Error())
		case n > 0:
			logger.Info("audit events past their retention deleted", "events", n)
		}
		if err := a.LogCheckpoints(ctx); err != nil {
			logger.Warn("audit checkpoints could not be read", "error", err.Error())
		}
	})
}

// every runs fn each interval while the server runs; stopping the server
// cancels a run in progress and waits for it (bounded by the stop deadline).
func every(lc fx.Lifecycle, interval time.Duration, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			go func() {
				defer close(done)
				ticker := time.NewTicker(interval)
				defer ticker.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-ticker.C:
						fn(ctx)
					}
				}
			}()
			return nil
		},
		OnStop: func(stop context.Context) error {
			cancel()
			select {
			case <-done:
			case <-stop.Done():
			}
			return nil
		},
	})
}
