//go:build auditbench

package app

import (
	"net/http"
	_ "net/http/pprof" // the benchmark build's profiles, on PRAXIS_BENCH_PPROF_ADDR only
	"os"
)

// auditOff, in the benchmark build only, turns the audit trail off when
// PRAXIS_AUDIT_BENCH_OFF=1, for the on ÷ off figure of make bench.
func auditOff() bool { return os.Getenv("PRAXIS_AUDIT_BENCH_OFF") == "1" }

// The benchmark build serves Go's profiles on PRAXIS_BENCH_PPROF_ADDR
// (e.g. 127.0.0.1:6060), to find where a benchmark's time goes.
func init() {
	if addr := os.Getenv("PRAXIS_BENCH_PPROF_ADDR"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }() //nolint:gosec // a loopback address of a benchmark build
	}
}
