//go:build auditbench

package app

import "os"

// auditOff, in the benchmark build only, turns the audit trail off when
// PRAXIS_AUDIT_BENCH_OFF=1, for the on ÷ off figure of make bench.
func auditOff() bool { return os.Getenv("PRAXIS_AUDIT_BENCH_OFF") == "1" }
