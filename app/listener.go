package app

import (
	"io"
	"net"
	"sync"
)

// quietListener remembers the accepted connections that have not sent a
// byte yet: a browser's preconnected socket, or a spare connection a client
// pool dialled and never used. fasthttp counts such a connection as busy (it
// waits in the read of its first request), so a graceful shutdown would
// wait out the whole grace period for it; closeQuiet lets them go, since no
// request is on them.
type quietListener struct {
	net.Listener
	mu    sync.Mutex
	quiet map[*quietConn]struct{}
}

func newQuietListener(ln net.Listener) *quietListener {
	return &quietListener{Listener: ln, quiet: map[*quietConn]struct{}{}}
}

func (l *quietListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	qc := &quietConn{Conn: c, l: l}
	l.mu.Lock()
	l.quiet[qc] = struct{}{}
	l.mu.Unlock()
	return qc, nil
}

// closeQuiet closes every connection that has not sent a byte.
func (l *quietListener) closeQuiet() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.quiet {
		_ = c.Conn.Close()
		delete(l.quiet, c)
	}
}

func (l *quietListener) forget(c *quietConn) {
	l.mu.Lock()
	delete(l.quiet, c)
	l.mu.Unlock()
}

type quietConn struct {
	net.Conn
	l     *quietListener
	spoke sync.Once
}

func (c *quietConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.spoke.Do(func() { c.l.forget(c) })
	}
	return n, err
}

func (c *quietConn) Close() error {
	c.l.forget(c)
	return c.Conn.Close()
}

// ReadFrom keeps the connection's own ReadFrom (sendfile for downloads).
func (c *quietConn) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(c.Conn, r)
}
