// Package notify is how the platform tells buyers about their orders
// (issue 25): the ports SMS and Mail, their adapters (an HTTP SMS gateway
// of the kind Bangladeshi providers offer, e-mail over SMTP), how an SMS is
// counted on the air (GSM-7 or UCS-2, segments), and the texts of the
// messages in English and Bengali. The sandbox SMS provider, a real HTTP
// service, is in notify/smssandbox; the projector that decides what to
// send, once, is projections/notifications.
package notify

import (
	"context"
	"errors"
)

// SMS sends a text message. Implementations: Gateway (an HTTP SMS
// gateway) and smssandbox.Client.
type SMS interface {
	// SendSMS sends text to a number in E.164 and returns the provider's
	// id of the message. An error may still have sent it (a timeout after
	// the provider accepted): the caller's record says what to do then.
	SendSMS(ctx context.Context, to, text string) (messageID string, err error)
}

// Mail sends an e-mail. Implementation: SMTP.
type Mail interface {
	SendMail(ctx context.Context, m Email) error
}

// Email is one e-mail to one recipient.
type Email struct {
	To      string
	Subject string
	// Text is the plain-text body; HTML, when set, an alternative to it.
	Text, HTML string
	// MessageID is the Message-ID header without brackets; the same
	// notification sent again carries the same one, so a mailbox that
	// keeps both can tell them for one (decision 0433).
	MessageID string
}

// ErrRejected means the provider refused the message for good (a bad
// number, a blocked sender): sending it again will not help.
var ErrRejected = errors.New("notify: the provider rejected the message")
