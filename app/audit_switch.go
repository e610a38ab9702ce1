//go:build !auditbench

package app

// auditOff is never true in the shipped binary: there is no switch that
// stops the audit trail (docs/contract.md §11). The audit benchmark builds
// with -tags auditbench to measure what the trail costs.
func auditOff() bool { return false }
