package api

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// Listener wraps the public port's listener so that a handler can send a
// whole HTTP/1.1 answer, headers and body, in one write (decision 0256).
// net/http writes an answer through a 4 KiB buffer: a 16.8 kB seat map
// leaves in two writes, each a system call and, on the caller's side, a
// wakeup. A handler that holds its connection's writes (holdWrites) has
// them kept until it lets them go, then sent at once, as TCP_CORK would
// without a system call to set and clear it. Nothing else changes: a
// connection nobody holds passes every write straight through.
func Listener(ln net.Listener) net.Listener { return oneWriteListener{ln} }

type oneWriteListener struct{ net.Listener }

func (l oneWriteListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &oneWriteConn{Conn: c}, nil
}

// oneWriteConn is a connection whose writes can be held. Only the
// goroutine serving its HTTP/1.1 requests holds and writes (net/http
// serves one request of a connection at a time, and the handler runs on
// that goroutine), so the held bytes need no lock.
type oneWriteConn struct {
	net.Conn
	held *[]byte // the writes kept since holdWrites; nil when not holding
	err  error   // the failed write of held bytes, answered to later writes
}

// maxHeld bounds what one hold keeps: a larger answer is sent as net/http
// would, in pieces.
const maxHeld = 1 << 20

var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

func (c *oneWriteConn) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.held == nil {
		return c.Conn.Write(p)
	}
	if len(*c.held)+len(p) > maxHeld {
		if err := c.release(); err != nil {
			return 0, err
		}
		return c.Conn.Write(p)
	}
	*c.held = append(*c.held, p...)
	return len(p), nil
}

// ReadFrom keeps the sendfile and splice of the connection (net/http
// sends files with it) when nothing is held.
func (c *oneWriteConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok && c.held == nil && c.err == nil {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c}, r)
}

// CloseWrite half-closes a TCP connection, as net/http does when it
// closes one gracefully.
func (c *oneWriteConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// release sends the held writes in one write and stops holding.
func (c *oneWriteConn) release() error {
	b := c.held
	if b == nil {
		return c.err
	}
	c.held = nil
	if len(*b) > 0 {
		_, c.err = c.Conn.Write(*b)
	}
	*b = (*b)[:0]
	heldBuffers.Put(b)
	return c.err
}

type oneWriteConnKey struct{}

// withOneWriteConn is the public server's ConnContext: it puts a
// connection accepted by Listener in its requests' context.
func withOneWriteConn(ctx context.Context, c net.Conn) context.Context {
	if oc, ok := c.(*oneWriteConn); ok {
		return context.WithValue(ctx, oneWriteConnKey{}, oc)
	}
	return ctx
}

// holdWrites starts holding the writes of the HTTP/1.1 connection r came
// on; the func it returns flushes w (so net/http's buffers hand over what
// they still have), sends what was held in one write and stops holding.
// The handler must call it before it returns. An answer with a
// Content-Length is then sent whole; a chunked one's last chunk follows
// when the handler returns. Without a connection to
// hold (another listener; HTTP/2, whose frames another goroutine writes)
// both do nothing.
func holdWrites(w http.ResponseWriter, r *http.Request) (send func()) {
	c, _ := r.Context().Value(oneWriteConnKey{}).(*oneWriteConn)
	if c == nil || r.ProtoMajor != 1 || c.held != nil || c.err != nil {
		return func() {}
	}
	c.held = heldBuffers.Get().(*[]byte)
	return func() {
		_ = http.NewResponseController(w).Flush() // as http.Flusher: a failure shows in the write
		_ = c.release()                           // a failed write fails the connection's next write too: net/http closes it then
	}
}
