//go:build !linux

package sqlstore

import (
	"syscall"
	"time"
)

// userTimeout is Linux's TCP_USER_TIMEOUT; elsewhere keepalive alone.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error { return nil }
