package notify

import (
	"context"
	"fmt"
	"time"

	mail "github.com/wneessen/go-mail"
)

// SMTPConfig locates the mail server (mailpit in dev and tests).
type SMTPConfig struct {
	Host string
	Port int
	// From is the sender's address, e.g. "Seatghor <tickets@seatghor.com.bd>".
	From string
	// Username and Password, when set, authenticate (PLAIN, over TLS).
	Username, Password string
	// TLS requires STARTTLS; off, the connection is plain (a local relay,
	// mailpit).
	TLS bool
}

// SMTP is the Mail port over SMTP (github.com/wneessen/go-mail).
type SMTP struct {
	cfg SMTPConfig
}

// NewSMTP returns the SMTP adapter.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	if cfg.Host == "" || cfg.Port <= 0 || cfg.From == "" {
		return nil, fmt.Errorf("SMTP: host, port and from are required")
	}
	return &SMTP{cfg: cfg}, nil
}

// SendMail implements Mail: one connection per message (a few messages a
// minute at most; no pool to keep alive).
func (s *SMTP) SendMail(ctx context.Context, e Email) error {
	m := mail.NewMsg()
	if err := m.From(s.cfg.From); err != nil {
		return fmt.Errorf("SMTP from: %w", err)
	}
	if err := m.To(e.To); err != nil {
		return fmt.Errorf("%w: recipient %q: %v", ErrRejected, e.To, err)
	}
	m.Subject(e.Subject)
	m.SetBodyString(mail.TypeTextPlain, e.Text)
	if e.HTML != "" {
		m.AddAlternativeString(mail.TypeTextHTML, e.HTML)
	}
	if e.MessageID != "" {
		m.SetMessageIDWithValue(e.MessageID)
	}
	m.SetDate()
	opts := []mail.Option{mail.WithPort(s.cfg.Port), mail.WithTimeout(10 * time.Second)}
	if s.cfg.TLS {
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	} else {
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	if s.cfg.Username != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlain), mail.WithUsername(s.cfg.Username), mail.WithPassword(s.cfg.Password))
	}
	c, err := mail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("SMTP client: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, m); err != nil {
		return fmt.Errorf("SMTP send to %s: %w", e.To, err)
	}
	return nil
}
