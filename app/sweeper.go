package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/ports"
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

// patientIndexBatch is how many customers one backfill transaction indexes.
const patientIndexBatch = 500

// patientIndexRecheck is how long a backfill that found none left waits
// before it looks again.
const patientIndexRecheck = time.Minute

// startPatientIndexer indexes, in the background after start-up, the
// customers written before the patient search's index existed (or under
// older rules): a batch a transaction, so a stopped server resumes where it
// was, and several replicas share the work (SKIP LOCKED). Until a company's
// customers are all indexed, a search of it answers 503
// search-index-building (docs/contract.md §15); the feed is served as ever.
func startPatientIndexer(lc fx.Lifecycle, store ports.RecordStore, logger *slog.Logger) {
	indexer, ok := store.(customerIndexer)
	if !ok {
		return
	}
	p := &patientIndexer{store: indexer, logger: logger}
	every(lc, time.Second, func(ctx context.Context) { p.pass(ctx, time.Now()) })
}

// customerIndexer is the store's backfill of the patient search's index.
type customerIndexer interface {
	IndexCustomers(ctx context.Context, batch int64) (int, error)
}

// patientIndexer runs the backfill's passes, one at a time.
type patientIndexer struct {
	store  customerIndexer
	logger *slog.Logger
	doneAt time.Time // when a pass last found none left; zero before
}

// pass indexes batches until none is left, unless a pass found none left
// within patientIndexRecheck of now: once done it looks again every minute,
// since while a rolling upgrade runs a server of the previous build still
// writes customers by older rules. A failed batch is tried again at the
// next pass.
func (p *patientIndexer) pass(ctx context.Context, now time.Time) {
	if !p.doneAt.IsZero() && now.Sub(p.doneAt) < patientIndexRecheck {
		return
	}
	total := 0
	for ctx.Err() == nil {
		n, err := p.store.IndexCustomers(ctx, patientIndexBatch)
		if err != nil {
			p.logger.Warn("the patient search index's backfill failed; it is tried again", "error", err.Error(), "indexed", total)
			return
		}
		total += n
		if n == 0 {
			break
		}
		if total%(20*patientIndexBatch) == 0 {
			p.logger.Info("the patient search index's backfill goes on", "indexed", total)
		}
	}
	if ctx.Err() == nil {
		p.doneAt = now
		if total > 0 {
			p.logger.Info("the patient search index's backfill is complete", "indexed", total)
		}
	}
}
