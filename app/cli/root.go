// Package cli is the praxis command line: serve, migrate, admin and demo.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/fx"

	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/app"
)

// Root is the praxis command.
func Root() *cobra.Command {
	root := &cobra.Command{
		Use:           "praxis",
		Short:         "praxis — practice management back end",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCmd(), migrateCmd(), adminCmd(), demoCmd())
	return root
}

// Main runs the command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	root := Root()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		if !errors.Is(err, errReported) {
			_, _ = fmt.Fprintln(stderr, "praxis:", err)
		}
		return 1
	}
	return 0
}

func serveCmd() *cobra.Command {
	var demo bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Migrate (unless PRAXIS_AUTO_MIGRATE=false), then serve HTTP",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := app.LoadConfig()
			if err != nil {
				return err
			}
			if demo {
				if err := runDemo(cmd, cfg); err != nil {
					return err
				}
			}
			return serve(cfg)
		},
	}
	cmd.Flags().BoolVar(&demo, "demo", false, "seed a demo company first and print its credentials")
	return cmd
}

// serverGCPercent is the server's garbage collection target: the heap may
// grow to five times what is live before the collector runs, instead of
// Go's twice. The server's live heap is small (tens of MB) and nearly all
// it allocates dies with its request, so collecting a fifth as often is a
// few per cent of its CPU for tens of MB of memory; GOMEMLIMIT (the chart
// sets it to the container's memory limit) makes the collector work harder
// before that limit instead.
const serverGCPercent = 400

// tuneGC sets serverGCPercent unless the operator set GOGC.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
}

func serve(cfg app.Config) error {
	tuneGC(os.Getenv)
	fxApp := fx.New(app.Options(cfg), fx.NopLogger)
	if err := fxApp.Err(); err != nil {
		return err
	}
	startCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := fxApp.Start(startCtx); err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	got := <-sig
	slog.Info("shutting down", "signal", got.String(), "grace", cfg.ShutdownGrace.String())
	stopCtx, cancelStop := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancelStop()
	return fxApp.Stop(stopCtx)
}

func migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply database migrations and exit",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := app.LoadConfig()
			if err != nil {
				return err
			}
			db, err := sqlstore.OpenPool(cfg.DatabaseURL, cfg.DatabaseMaxConns)
			if err != nil {
				return err
			}
			defer func() { _ = db.Close() }()
			if err := sqlstore.Migrate(cmd.Context(), db); err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), "migrations applied")
			return err
		},
	}
}

// withUseCase runs fn with one use case of the admin graph on the configured
// stores; logs go to stderr so that stdout carries only the command's output.
func withUseCase[T any](cmd *cobra.Command, fn func(ctx context.Context, uc T) error) error {
	slog.SetDefault(slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	cfg, err := app.LoadConfig()
	if err != nil {
		return err
	}
	return runUseCase(cmd.Context(), cfg, fn)
}

// runUseCase starts the admin graph, takes the use case T from it and runs fn.
func runUseCase[T any](ctx context.Context, cfg app.Config, fn func(ctx context.Context, uc T) error) error {
	var uc T
	fxApp := fx.New(app.AdminOptions(cfg), fx.NopLogger, fx.Populate(&uc))
	if err := fxApp.Err(); err != nil {
		return err
	}
	if err := fxApp.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = fxApp.Stop(context.WithoutCancel(ctx)) }()
	return fn(ctx, uc)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	return enc.Encode(v)
}
