package cli

import (
	"runtime/debug"
	"testing"
)

// TestServerGCPercent: the server collects at serverGCPercent unless the
// operator's GOGC says otherwise.
func TestServerGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	for _, c := range []struct {
		gogc string
		want int
	}{{"", serverGCPercent}, {"150", 100}, {"off", 100}} {
		debug.SetGCPercent(100) // what the runtime read from GOGC
		tuneGC(func(name string) string {
			if name == "GOGC" {
				return c.gogc
			}
			return ""
		})
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC=%q: the collector's percent is %d, want %d", c.gogc, got, c.want)
		}
	}
}
