package site_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"
)

// The browser tests drive the real binary (`seatghor dev` on a fresh data
// directory and a free port, signing in through a real OpenID Connect
// provider in this process as well as the dev sign-in) with Debian's
// headless Chromium. One server and one browser serve every test of the
// package; each test has its own browser contexts (separate storage, as
// two people on two phones).

// chromiumPath is Debian's package (scripts/ensure-deps.sh installs it).
const chromiumPath = "/usr/bin/chromium"

// waitLong bounds one wait for the page: projections and payments settle
// within seconds in dev.
const waitLong = 40 * time.Second

type devServer struct {
	base string
	cmd  *exec.Cmd
	dir  string
	out  *bytes.Buffer
	mu   sync.Mutex
	err  error
	// oidc is the identity provider (mockoidc: it signs in the user
	// queued with QueueUser, else its default one, without a page).
	oidc *mockoidc.MockOIDC
	// exited answers once the running binary has exited (launch).
	exited <-chan error
}

var (
	serverOnce sync.Once
	server     *devServer
	browserCtx context.Context
	stopAlloc  context.CancelFunc
)

func TestMain(m *testing.M) {
	code := m.Run()
	if stopAlloc != nil {
		stopAlloc()
	}
	if server != nil {
		server.stop()
	}
	os.Exit(code)
}

// openSite starts the server and the browser on first use.
func openSite(t testing.TB) (*devServer, context.Context) {
	t.Helper()
	serverOnce.Do(func() {
		server = startDev()
		if server.err != nil {
			return
		}
		if _, err := os.Stat(chromiumPath); err != nil {
			server.err = fmt.Errorf("%s is missing (make deps installs Debian's chromium): %w", chromiumPath, err)
			return
		}
		alloc, cancel := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.WindowSize(412, 915))
		stopAlloc = cancel
		ctx, _ := chromedp.NewContext(alloc)
		if err := chromedp.Do(ctx); err != nil { // starts the browser
			server.err = fmt.Errorf("start chromium: %w", err)
			return
		}
		browserCtx = ctx
	})
	if server.err != nil {
		t.Fatalf("browser test setup: %v\n%s", server.err, server.log())
	}
	return server, browserCtx
}

func (s *devServer) log() string {
	if s.out == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// startDev builds (or takes $SEATGHOR_BIN) and starts `seatghor dev`.
func startDev() *devServer {
	s := &devServer{out: &bytes.Buffer{}}
	dir, err := os.MkdirTemp("", "seatghor-web-test-")
	if err != nil {
		s.err = err
		return s
	}
	s.dir = dir
	bin := os.Getenv("SEATGHOR_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "seatghor")
		build := exec.Command("go", "build", "-o", bin, "github.com/seatghor/seatghor/cmd/seatghor")
		if out, err := build.CombinedOutput(); err != nil {
			s.err = fmt.Errorf("go build: %v\n%s", err, out)
			return s
		}
	}
	if s.oidc, err = mockoidc.Run(); err != nil {
		s.err = fmt.Errorf("start the identity provider: %w", err)
		return s
	}
	if _, err = s.oidc.Keypair.KeyID(); err != nil { // computed now, not lazily by concurrent handlers
		s.err = err
		return s
	}
	// The port is picked free and released for the binary, so something
	// else (the dev PostgreSQL's own free port, say) may take it meanwhile:
	// such a start fails at once, and a new port is tried.
	for try := 1; ; try++ {
		err := s.launch(bin, filepath.Join(dir, fmt.Sprintf("data-%d", try)))
		if err == nil || try == 3 || !strings.Contains(s.log(), "address already in use") {
			s.err = err
			return s
		}
		s.mu.Lock()
		s.out.Reset()
		s.mu.Unlock()
	}
}

// launch starts `seatghor dev` on a free port with its data in dataDir and
// waits until it serves, or fails.
func (s *devServer) launch(bin, dataDir string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s.cmd = exec.Command(bin, "dev", "--data-dir", dataDir, "--addr", addr)
	// The sandbox gateway on a free port: parallel runs never collide.
	// Manual refunds from 500 taka wait for a second admin (the console's
	// refund desk test), not from the default 5,000.
	s.cmd.Env = append(os.Environ(), "SEATGHOR_SANDBOX_ADDR=127.0.0.1:0", "SEATGHOR_REFUND_APPROVAL_MINOR=50000",
		"SEATGHOR_OIDC_ISSUER="+s.oidc.Issuer(), "SEATGHOR_OIDC_CLIENT_ID="+s.oidc.ClientID,
		"SEATGHOR_OIDC_CLIENT_SECRET="+s.oidc.ClientSecret, "SEATGHOR_OIDC_NAME=mock")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	s.cmd.Stdout, s.cmd.Stderr = pw, pw
	if err := s.cmd.Start(); err != nil {
		return err
	}
	ready := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		re := regexp.MustCompile(`Seatghor is running at (http://\S+)`)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.out.WriteString(line + "\n")
			s.mu.Unlock()
			if m := re.FindStringSubmatch(line); m != nil {
				ready <- m[1]
			}
		}
	}()
	exited := make(chan error, 1)
	go func() {
		err := s.cmd.Wait()
		_ = pw.Close()
		<-scanned
		exited <- err
	}()
	s.exited = exited
	select {
	case s.base = <-ready:
		return nil
	case err := <-exited:
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) // whatever it started
		s.cmd = nil
		return fmt.Errorf("seatghor dev exited before it served: %v", err)
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("seatghor dev did not start within 2 minutes")
	}
}

func (s *devServer) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.exited
		}
	}
	if s.oidc != nil {
		_ = s.oidc.Shutdown()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// devToken signs in through the dev sign-in endpoint.
func (s *devServer) devToken(t testing.TB, name, role string) string {
	t.Helper()
	var out struct{ Token string }
	body, _ := json.Marshal(map[string]string{"name": name, "role": role})
	resp, err := http.Post(s.base+"/auth/dev-token", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out.Token
}

// call is one Connect JSON call (for the steps a test does not take in
// the browser: an admin's show, a purchase whose ticket the gate scans).
func (s *devServer) call(t testing.TB, token, procedure string, req, resp any) {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	r, err := http.NewRequest(http.MethodPost, s.base+"/"+procedure, bytes.NewReader(body))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+token)
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	r.Header.Set("Idempotency-Key", hex.EncodeToString(key))
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", procedure, raw)
	if resp != nil {
		require.NoError(t, json.Unmarshal(raw, resp))
	}
}

// tab opens a new browser context (its own storage) with one tab.
func tab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(412, 915)))
	return ctx
}

// do runs steps with a deadline, and on failure says where the page was.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 2*waitLong)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main")?.innerText ?? ""`))
		t.Fatalf("%v\nat %s\n%s", err, loc, text)
	}
}

// until waits for a JavaScript condition on the page, across page loads
// (a poll ends when its page goes; the next one starts on the new page).
func until(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		deadline := time.Now().Add(waitLong)
		for {
			left := time.Until(deadline)
			_, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(left), chromedp.WithPollingInterval(100*time.Millisecond))(ctx, tg)
			if err == nil {
				return chromedp.Void{}, nil
			}
			if ctx.Err() != nil || left <= 0 || !pageWent(err) {
				return chromedp.Void{}, fmt.Errorf("waiting for %s: %w", expr, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// pageWent tells an error of a page that navigated away mid-call.
func pageWent(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "navigated or closed") || strings.Contains(msg, "context was destroyed") ||
		strings.Contains(msg, "Cannot find context")
}

// hasText waits for text in the element of a CSS selector.
func hasText(sel, text string) chromedp.Action[chromedp.Void] {
	return until(fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? "").includes(%q)`, sel, text))
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// signIn uses the dev sign-in page, as a person would.
func signIn(s *devServer, name, role string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(s.base+"/signin"),
		chromedp.WaitVisible(chromedp.CSS("#dev-name")),
		chromedp.SendKeys(chromedp.CSS("#dev-name"), name),
		choose("#dev-role", role),
		chromedp.Click(chromedp.CSS("#dev-submit")),
		hasText("#who", name),
	)
}

// choose picks an option of a select, as a change by the person.
func choose(sel, value string) chromedp.Action[chromedp.Void] { return setValue(sel, value, "change") }

// typeIn sets an input's value as typing would, for the console's
// controlled inputs (number and date fields that already hold a value).
func typeIn(sel, value string) chromedp.Action[chromedp.Void] { return setValue(sel, value, "input") }

// setValue sets a field's value and sends the event a person's edit would.
func setValue(sel, value, event string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const f = document.querySelector(%q); f.value = %q;
			f.dispatchEvent(new Event(%q, { bubbles: true })); return true })()`, sel, value, event))(ctx, tg)
		return err
	})
}

// script runs a statement on the page (history.back(), which is no page
// load for chromedp's NavigateBack to wait for).
func script(stmt string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool]("(() => { "+stmt+"; return true })()")(ctx, tg)
		return err
	})
}

// tabTo presses Tab until the focused element matches sel: the element is
// reachable by keyboard, and now has the focus.
func tabTo(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		check := fmt.Sprintf(`document.activeElement?.matches(%q) ?? false`, sel)
		for range 80 {
			ok, err := chromedp.Evaluate[bool](check)(ctx, tg)
			if err != nil {
				return chromedp.Void{}, err
			}
			if ok {
				return chromedp.Void{}, nil
			}
			if _, err := chromedp.KeyEvent(kb.Tab)(ctx, tg); err != nil {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, fmt.Errorf("%s is not reachable with Tab", sel)
	}
}

// key presses keys on the focused element.
func key(keys string) chromedp.Action[chromedp.Void] { return chromedp.KeyEvent(keys) }

// shot saves a screenshot into $SEATGHOR_SCREENSHOTS (docs/img) when set.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("SEATGHOR_SCREENSHOTS")
	if dir == "" {
		return
	}
	// Let fonts and the last frame settle.
	time.Sleep(300 * time.Millisecond)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// fetchPDF downloads a ticket's PDF through the page's link.
func fetchPDF(t *testing.T, href string) []byte {
	t.Helper()
	require.True(t, strings.HasPrefix(href, "http"), "PDF link %q", href)
	resp, err := http.Get(href)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return body
}

// demoDay is the day the demo shows run (30 days after the dev server's
// first start, in Dhaka): one after the demo network's 30 days of
// timetabled trips, so a search on it lists the demo shows alone.
func demoDay() string {
	dhaka, err := time.LoadLocation("Asia/Dhaka")
	if err != nil {
		panic(err)
	}
	return time.Now().In(dhaka).AddDate(0, 0, 30).Format(time.DateOnly)
}

// onDemoDay sets the search form's date to demoDay, as a person picking it
// in the date field would (an input event).
func onDemoDay() chromedp.Action[chromedp.Void] {
	return script(fmt.Sprintf(`(() => { const d = document.querySelector("#date");
		Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(d, %q);
		d.dispatchEvent(new Event("input", { bubbles: true })); })()`, demoDay()))
}
