package testenv

import (
	"bytes"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// SyncBuffer collects a server's output: written by its goroutines, read by the test.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FreeAddr is a loopback address with a port nobody listens on right now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	addr, err := FreeLoopback()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// FreeLoopback is FreeAddr for programs without a testing.TB (the load
// programs of test/bench).
func FreeLoopback() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String(), nil
}

// WaitTCP waits until something accepts connections on addr, at most d.
func WaitTCP(addr string, d time.Duration) error {
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s", addr)
		}
	}
}
