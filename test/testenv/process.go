package testenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
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

// WaitReady waits until a praxis process at base answers /readyz with 200:
// at most d, and not past its end (exited, when given, receives its exit).
func WaitReady(base string, d time.Duration, exited <-chan error) error {
	var last error
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz") //nolint:gosec // a test's own server
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/readyz: %d", resp.StatusCode)
		}
		last = err
		select {
		case err := <-exited:
			if err == nil {
				err = errors.New("exit status 0")
			}
			return fmt.Errorf("the server exited: %w", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server is not ready: %w", last)
		}
	}
}

// ClientToken gets an access token for an OAuth client (client
// credentials, the secret in the form) from the server at base.
func ClientToken(c *http.Client, base, id, secret string) (string, error) {
	resp, err := c.PostForm(base+"/api/oauth/v2/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}})
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("token for %s: %d", id, resp.StatusCode)
	}
	var t struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&t)
	return t.AccessToken, err
}
