package api

import (
	"context"
	"log/slog"
	"net"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	signinv1 "github.com/seatghor/seatghor/gen/seatghor/signin/v1"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/phonesignin"
)

// PhoneSignIn sends and checks the one-time codes of a phone sign-in
// (phonesignin.Service, decision 0436).
type PhoneSignIn interface {
	SendCode(ctx context.Context, number, lang, client string) (phonesignin.Sent, error)
	VerifyCode(ctx context.Context, number, code string) (phonesignin.Token, error)
	StartGuest(ctx context.Context, client string) (phonesignin.Token, error)
	PhoneOf(ctx context.Context, userID string) (string, error)
}

// errNoSMS answers the phone RPCs of a server that sends no SMS.
var errNoSMS = fault.New(fault.NotServed, "this server sends no SMS: phone sign-in and guest checkout are off")

type phoneSignInHandler struct {
	svc PhoneSignIn
	log *slog.Logger
}

// SendCode sends a number its code; the caller's address is the
// per-address limit's.
func (h *phoneSignInHandler) SendCode(ctx context.Context, req *connect.Request[signinv1.SendCodeRequest]) (*connect.Response[signinv1.SendCodeResponse], error) {
	if h.svc == nil {
		return nil, toConnect(ctx, h.log, errNoSMS)
	}
	sent, err := h.svc.SendCode(ctx, req.Msg.GetPhone(), req.Msg.GetLanguage(), clientAddr(req.Peer()))
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&signinv1.SendCodeResponse{Phone: sent.Phone, ExpiresIn: durationpb.New(sent.ExpiresIn),
		ResendAfter: durationpb.New(sent.ResendAfter)}), nil
}

// VerifyCode answers the number's buyer's token for its code.
func (h *phoneSignInHandler) VerifyCode(ctx context.Context, req *connect.Request[signinv1.VerifyCodeRequest]) (*connect.Response[signinv1.VerifyCodeResponse], error) {
	if h.svc == nil {
		return nil, toConnect(ctx, h.log, errNoSMS)
	}
	tok, err := h.svc.VerifyCode(ctx, req.Msg.GetPhone(), req.Msg.GetCode())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	res := connect.NewResponse(&signinv1.VerifyCodeResponse{Token: tok.Token, ExpiresAt: timestamppb.New(tok.ExpiresAt), UserId: tok.UserID})
	res.Header().Set("Cache-Control", "no-store") // a credential
	return res, nil
}

// StartGuest answers a guest's token (decision 0437); the caller's address
// is the per-address limit's.
func (h *phoneSignInHandler) StartGuest(ctx context.Context, req *connect.Request[signinv1.StartGuestRequest]) (*connect.Response[signinv1.StartGuestResponse], error) {
	if h.svc == nil {
		return nil, toConnect(ctx, h.log, errNoSMS)
	}
	tok, err := h.svc.StartGuest(ctx, clientAddr(req.Peer()))
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	res := connect.NewResponse(&signinv1.StartGuestResponse{Token: tok.Token, ExpiresAt: timestamppb.New(tok.ExpiresAt), UserId: tok.UserID})
	res.Header().Set("Cache-Control", "no-store") // a credential
	return res, nil
}

// clientAddr is the address a call came from, without its port: the key
// of the per-address limits of public RPCs (a proxy in front must pass the
// client's; not done yet, decision 0436).
func clientAddr(p connect.Peer) string {
	host, _, err := net.SplitHostPort(p.Addr)
	if err != nil {
		return p.Addr
	}
	return host
}
