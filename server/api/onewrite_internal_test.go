package api

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// WriteCounter counts the writes to its listener's connections in N (the
// one-write tests here and in package api_test).
type WriteCounter struct {
	net.Listener
	N *atomic.Int64
}

func (l WriteCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countedConn{c, l.N}, nil
}

type countedConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countedConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

// TestHeldWritesLeaveInOneWrite (decision 0256): on the public server's
// listener, an HTTP/1.1 answer with a Content-Length written while held
// leaves in one write whatever its size, byte for byte, on a kept-alive connection; one not
// held is written as net/http writes it; over HTTP/2 (h2c) a hold does
// nothing and the answer is whole.
func TestHeldWritesLeaveInOneWrite(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("hold") {
			defer holdWrites(w, r)()
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	var writes atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config = NewServer("", h)
	srv.Listener = Listener(WriteCounter{srv.Listener, &writes})
	srv.Start()
	t.Cleanup(srv.Close)

	get := func(c *http.Client, path string) (*http.Response, []byte) {
		t.Helper()
		resp, err := c.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, b
	}
	h1 := &http.Client{Transport: &http.Transport{}}
	get(h1, "/?hold") // the connection made
	for _, tc := range []struct {
		path string
		one  bool
	}{{"/?hold", true}, {"/", false}, {"/?hold", true}} {
		before := writes.Load()
		resp, b := get(h1, tc.path)
		require.Equal(t, body, b, tc.path)
		require.Equal(t, 1, resp.ProtoMajor)
		if tc.one {
			require.Equal(t, int64(1), writes.Load()-before, tc.path)
		} else {
			require.Greater(t, writes.Load()-before, int64(1), tc.path)
		}
	}

	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	h2 := &http.Client{Transport: &http.Transport{Protocols: &p}}
	resp, b := get(h2, "/?hold")
	require.Equal(t, 2, resp.ProtoMajor)
	require.Equal(t, body, b)
}
