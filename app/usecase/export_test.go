package usecase

import "time"

// SetAuditLinger sets how long a's batches may wait for more events; call
// it before Start.
func SetAuditLinger(a *Auditor, d time.Duration) { a.linger = d }

// AuditQueued is how many events wait for a's next batch.
func AuditQueued(a *Auditor) int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.queue)
}

// AuditAwaited is how many requests a's lingering batch would wait for.
func AuditAwaited(a *Auditor) int64 { return a.expected.Load() }
