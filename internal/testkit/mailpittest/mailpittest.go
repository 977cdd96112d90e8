// Package mailpittest gives tests a real mailpit process (decision 0433):
// an SMTP server on a free port whose messages the test reads through
// mailpit's HTTP API (/api/v1/messages). Start returns a server of the
// test's own, stopped at its end.
package mailpittest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/seatghor/seatghor/internal/devenv/mailpitbin"
)

// Server is a running mailpit.
type Server struct {
	// SMTPHost and SMTPPort take mail; API is the base URL of the inbox.
	SMTPHost string
	SMTPPort int
	API      string
}

// Start runs mailpit for the test.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := mailpitbin.Path()
	if err != nil {
		tb.Fatalf("mailpittest: %v", err)
	}
	smtpPort, httpPort := freePort(tb), freePort(tb)
	httpAddr := "127.0.0.1:" + strconv.Itoa(httpPort)
	cmd := exec.Command(bin, mailpitbin.Args("127.0.0.1:"+strconv.Itoa(smtpPort), httpAddr, tb.TempDir())...)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("mailpittest: start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	s := &Server{SMTPHost: "127.0.0.1", SMTPPort: smtpPort, API: "http://" + httpAddr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.API + "/api/v1/info")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-exited:
			tb.Fatalf("mailpittest: mailpit exited before it answered")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("mailpittest: mailpit did not answer on %s: %v", s.API, err)
		}
	}
}

func freePort(tb testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("mailpittest: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Message is one received e-mail, as the list of mailpit's API gives it.
type Message struct {
	ID        string    `json:"ID"`
	MessageID string    `json:"MessageID"`
	Subject   string    `json:"Subject"`
	To        []Address `json:"To"`
}

// Address is a recipient.
type Address struct {
	Name    string `json:"Name"`
	Address string `json:"Address"`
}

// Messages lists the received messages, newest first.
func (s *Server) Messages(ctx context.Context) ([]Message, error) {
	var out struct {
		Messages []Message `json:"messages"`
	}
	return out.Messages, s.get(ctx, "/api/v1/messages?limit=1000", &out)
}

// Text returns the plain-text body of a message.
func (s *Server) Text(ctx context.Context, id string) (string, error) {
	var out struct {
		Text string `json:"Text"`
	}
	return out.Text, s.get(ctx, "/api/v1/message/"+id, &out)
}

func (s *Server) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.API+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("mailpit %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
