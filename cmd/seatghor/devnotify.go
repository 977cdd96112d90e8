package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/seatghor/seatghor/internal/devenv/mailpitbin"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/notify/smssandbox"
)

// devNotify is where dev mode's messages go (issue 25): the SMS sandbox,
// in-process over HTTP like the payment sandbox, and mailpit, a process of
// its own (decision 0433), whose inbox the banner prints.
type devNotify struct {
	cfg      app.NotifyConfig
	smsURL   string
	inboxURL string // empty: no mailpit, no e-mail
}

// startDevNotify starts the SMS sandbox on a free port and mailpit under
// dir; the site's links use siteURL. Without a mailpit binary (and no way
// to build one) dev runs without e-mail and says so.
func startDevNotify(ctx context.Context, dir, siteURL string, log *slog.Logger) (devNotify, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return devNotify{}, nil, fmt.Errorf("SMS sandbox: %w", err)
	}
	d := devNotify{smsURL: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: smssandbox.New(nil), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("SMS sandbox stopped", "err", err)
		}
	}()
	stops := []func(){func() { _ = srv.Shutdown(context.WithoutCancel(ctx)) }}
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	sms := smssandbox.NewClient(d.smsURL, nil)
	d.cfg = app.NotifyConfig{SMS: sms, SandboxSMS: sms, SiteURL: siteURL}

	bin, err := mailpitbin.Path()
	if err != nil {
		log.Warn("no mailpit: dev sends no e-mail (scripts/ensure-deps.sh run installs it)", "err", err)
		return d, stop, nil
	}
	smtpPort, webPort, err := freePorts()
	if err != nil {
		stop()
		return devNotify{}, nil, err
	}
	smtpAddr, webAddr := "127.0.0.1:"+strconv.Itoa(smtpPort), "127.0.0.1:"+strconv.Itoa(webPort)
	cmd := exec.Command(bin, mailpitbin.Args(smtpAddr, webAddr, filepath.Clean(dir))...)
	if err := cmd.Start(); err != nil {
		log.Warn("mailpit did not start: dev sends no e-mail", "err", err)
		return d, stop, nil
	}
	stops = append(stops, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	mail, err := notify.NewSMTP(notify.SMTPConfig{Host: "127.0.0.1", Port: smtpPort, From: "Seatghor <tickets@seatghor.localhost>"})
	if err != nil {
		stop()
		return devNotify{}, nil, err
	}
	d.cfg.Mail, d.inboxURL = mail, "http://"+webAddr
	return d, stop, nil
}

func freePorts() (int, int, error) {
	var ports [2]int
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		defer ln.Close()
	}
	return ports[0], ports[1], nil
}
