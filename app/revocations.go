package app

import (
	"context"
	"log/slog"

	"go.uber.org/fx"

	"github.com/praxis-health/praxis/adapters/redisstore"
)

// startRevocations reads the tombstones once before the server takes
// requests, then every second (adapters/redisstore/revocations.go).
func startRevocations(lc fx.Lifecycle, r *redisstore.Revocations, log *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(start context.Context) error {
			if err := r.Refresh(start); err != nil {
				// The bearer check answers 503 until a read succeeds.
				log.Warn("read revocations at start", "error", err.Error())
			}
			go func() { defer close(done); r.Run(ctx) }()
			return nil
		},
		OnStop: func(context.Context) error { cancel(); <-done; return nil },
	})
}
