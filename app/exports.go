package app

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/praxis-health/praxis/adapters/fhir"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/ports"
)

// Exports are the FHIR Bulk Data exports: their jobs in the database,
// their files in the blob store, and the runner, which takes waiting jobs
// while the server runs (docs/contract.md §15).
var Exports = fx.Module("exports",
	fx.Provide(
		fx.Annotate(sqlstore.NewExportJobs, fx.As(new(ports.ExportJobs))),
		fx.Annotate(fhir.NewExportSource, fx.As(new(ports.ExportSource))),
		startExports,
		func(e *usecase.Exports) ports.Exports { return e },
	),
)

// startExports runs the exports while the server runs; a run cut off by
// a stop is taken up again once its lease runs out.
func startExports(lc fx.Lifecycle, cfg Config, jobs ports.ExportJobs, blobs ports.BlobStore, source ports.ExportSource,
	auditor ports.Auditor, logger *slog.Logger) *usecase.Exports {
	s := usecase.DefaultExportSettings
	s.Lease = cfg.ExportLease
	e := usecase.NewExports(jobs, blobs, source, auditor, logger, s)
	lc.Append(fx.StartStopHook(e.Start, e.Stop))
	return e
}
