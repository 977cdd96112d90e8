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
}

type phoneSignInHandler struct {
	svc PhoneSignIn
	log *slog.Logger
}

// SendCode sends a number its code; the caller's address is the
// per-address limit's.
func (h *phoneSignInHandler) SendCode(ctx context.Context, req *connect.Request[signinv1.SendCodeRequest]) (*connect.Response[signinv1.SendCodeResponse], error) {
	if h.svc == nil {
		return nil, toConnect(ctx, h.log, fault.New(fault.NotServed, "this server sends no SMS: phone sign-in is off"))
	}
	client, _, err := net.SplitHostPort(req.Peer().Addr)
	if err != nil {
		client = req.Peer().Addr
	}
	sent, err := h.svc.SendCode(ctx, req.Msg.GetPhone(), req.Msg.GetLanguage(), client)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&signinv1.SendCodeResponse{Phone: sent.Phone, ExpiresIn: durationpb.New(sent.ExpiresIn),
		ResendAfter: durationpb.New(sent.ResendAfter)}), nil
}

// VerifyCode answers the number's buyer's token for its code.
func (h *phoneSignInHandler) VerifyCode(ctx context.Context, req *connect.Request[signinv1.VerifyCodeRequest]) (*connect.Response[signinv1.VerifyCodeResponse], error) {
	if h.svc == nil {
		return nil, toConnect(ctx, h.log, fault.New(fault.NotServed, "this server sends no SMS: phone sign-in is off"))
	}
	tok, err := h.svc.VerifyCode(ctx, req.Msg.GetPhone(), req.Msg.GetCode())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	res := connect.NewResponse(&signinv1.VerifyCodeResponse{Token: tok.Token, ExpiresAt: timestamppb.New(tok.ExpiresAt), UserId: tok.UserID})
	res.Header().Set("Cache-Control", "no-store") // a credential
	return res, nil
}
