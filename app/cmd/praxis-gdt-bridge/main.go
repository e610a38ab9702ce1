// Command praxis-gdt-bridge runs at the practice: it watches the GDT
// exchange folder and delivers each examination result with the files it
// references to praxis, exactly once (docs/contract.md §8). Settings by flag or by
// PRAXIS_BRIDGE_* variable; logs are JSON lines on stdout.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/praxis-health/praxis/app/bridge"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

func main() {
	var cfg bridge.Config
	flag.StringVar(&cfg.Dir, "dir", env("PRAXIS_BRIDGE_DIR", ""), "the GDT exchange folder")
	flag.StringVar(&cfg.URL, "url", env("PRAXIS_BRIDGE_URL", ""), "the praxis base URL, e.g. https://praxis.example")
	flag.StringVar(&cfg.Company, "company", env("PRAXIS_BRIDGE_COMPANY", ""), "the company id")
	flag.StringVar(&cfg.Secret, "secret", env("PRAXIS_BRIDGE_SECRET", ""), "the company's upload secret")
	flag.StringVar(&cfg.Prefix, "prefix", env("PRAXIS_BRIDGE_PREFIX", "gdt"), "gdt or sonogdt")
	flag.StringVar(&cfg.StateDir, "state-dir", env("PRAXIS_BRIDGE_STATE_DIR", ""), "where delivery state is kept (default <dir>/.praxis-bridge)")
	flag.DurationVar(&cfg.Rescan, "rescan", 10*time.Second, "rescan the folder this often (events are lost on network shares)")
	flag.DurationVar(&cfg.MissingFileTimeout, "missing-file-timeout", envDuration("PRAXIS_BRIDGE_MISSING_FILE_TIMEOUT", 10*time.Minute),
		"move a result to failed/ when a file its 6305 lines name has not appeared after this long")
	logFile := flag.String("log", env("PRAXIS_BRIDGE_LOG", ""), "append the log to this file (default stdout; a Windows service has none)")
	config := flag.String("config", env("PRAXIS_BRIDGE_CONFIG", ""),
		"a configuration file of devices with their credentials and folders (the settings page's Devices tab writes one)")
	service := flag.Bool("service", false, "run under the Windows service manager (the service's command line passes it)")
	flag.Parse()
	cfg.CrashAfterUpload = os.Getenv("PRAXIS_BRIDGE_TEST_CRASH_AFTER_UPLOAD") == "1"
	out := os.Stdout
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			exit(2, err)
		}
		defer func() { _ = f.Close() }()
		out = f
	}
	log := slog.New(slog.NewJSONHandler(out, nil))
	run, err := runner(cfg, *config, log)
	if err != nil {
		exit(2, err)
	}
	if served, err := asService(run, *service); served || err != nil {
		if err != nil {
			exit(1, err)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		stop()
		exit(1, err)
	}
}

// runner is what the bridge runs: the devices of a configuration file, or
// the one results folder the flags name.
func runner(cfg bridge.Config, config string, log *slog.Logger) (func(context.Context) error, error) {
	if config == "" {
		b, err := bridge.New(cfg, log)
		if err != nil {
			return nil, err
		}
		return b.Run, nil
	}
	s, err := bridge.ReadSettings(config)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return bridge.Run(ctx, s, cfg, log) }, nil
}

func exit(code int, err error) {
	fmt.Fprintln(os.Stderr, "praxis-gdt-bridge:", err)
	os.Exit(code)
}
