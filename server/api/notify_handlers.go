package api

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	notifyv1 "github.com/seatghor/seatghor/gen/seatghor/notify/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/notify/smssandbox"
	"github.com/seatghor/seatghor/server/phone"
)

// SandboxSMS reads the SMS sandbox's messages (smssandbox.Client).
type SandboxSMS interface {
	List(ctx context.Context, to string, limit int) ([]smssandbox.Message, error)
}

type notifyHandler struct {
	sms SandboxSMS
	log *slog.Logger
}

var smsEncodings = map[notify.Encoding]notifyv1.SmsEncoding{
	notify.GSM7: notifyv1.SmsEncoding_SMS_ENCODING_GSM7,
	notify.UCS2: notifyv1.SmsEncoding_SMS_ENCODING_UCS2,
}

func (h *notifyHandler) ListSandboxSms(ctx context.Context, req *connect.Request[notifyv1.ListSandboxSmsRequest]) (*connect.Response[notifyv1.ListSandboxSmsResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	if !p.Is(auth.RoleAdmin) {
		return nil, fault.New(fault.PermissionDenied, "only admins read the SMS sandbox")
	}
	if h.sms == nil {
		return nil, fault.New(fault.NotServed, "SMS go to a real gateway here, not the sandbox")
	}
	to := req.Msg.GetPhone()
	if tel, err := phone.Bangladesh(to); err == nil {
		to = tel // any Bangladeshi spelling finds the E.164 the sandbox keeps
	}
	limit := int(req.Msg.GetPageSize())
	if limit == 0 {
		limit = 100
	}
	msgs, err := h.sms.List(ctx, to, limit)
	if err != nil {
		h.log.ErrorContext(ctx, "read the SMS sandbox", "err", err)
		return nil, fault.New(fault.NotServed, "the SMS sandbox did not answer")
	}
	resp := &notifyv1.ListSandboxSmsResponse{}
	for _, m := range msgs {
		resp.Messages = append(resp.Messages, &notifyv1.SandboxSms{MessageId: m.ID, To: m.To, Text: m.Text,
			Encoding: smsEncodings[m.Encoding], Segments: int32(m.Segments), ReceivedAt: timestamppb.New(m.ReceivedAt)})
	}
	return connect.NewResponse(resp), nil
}
