package api

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"

	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/network"
)

// networkHandler serves NetworkService: operators' routes and timetables
// (issue 24). Operators and admins only; whether an operator manages the
// organisation is the network's call, as for CreateShow (decision 0075).
type networkHandler struct {
	svc *network.Service
	log *slog.Logger
}

// caller is the network's caller of ctx: an operator or an admin, else
// PERMISSION_DENIED.
func (h *networkHandler) caller(ctx context.Context) (network.Caller, error) {
	if h.svc == nil {
		return network.Caller{}, fault.New(fault.NotServed, "the bus network is not served here")
	}
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleOperator, auth.RoleAdmin) {
		return network.Caller{}, fault.New(fault.NetworkForbidden, "only operators and admins keep routes and timetables")
	}
	return network.Caller{UserID: p.UserID, Admin: p.Is(auth.RoleAdmin)}, nil
}

func (h *networkHandler) CreateRoute(ctx context.Context, req *connect.Request[networkv1.CreateRouteRequest]) (*connect.Response[networkv1.CreateRouteResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	m := req.Msg
	r, err := h.svc.CreateRoute(ctx, c, &networkv1.Route{RouteId: m.GetRouteId(), OrganizationId: m.GetOrganizationId(),
		Name: m.GetName(), NameBn: m.GetNameBn(), Stops: m.GetStops()})
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&networkv1.CreateRouteResponse{Route: r}), nil
}

func (h *networkHandler) GetRoute(ctx context.Context, req *connect.Request[networkv1.GetRouteRequest]) (*connect.Response[networkv1.GetRouteResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	r, err := h.svc.GetRoute(ctx, c, req.Msg.GetRouteId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&networkv1.GetRouteResponse{Route: r}), nil
}

func (h *networkHandler) ListRoutes(ctx context.Context, req *connect.Request[networkv1.ListRoutesRequest]) (*connect.Response[networkv1.ListRoutesResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	m := req.Msg
	routes, next, err := h.svc.ListRoutes(ctx, c, m.GetOrganizationId(), int(m.GetPageSize()), m.GetPageToken())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&networkv1.ListRoutesResponse{Routes: routes, NextPageToken: next}), nil
}

func (h *networkHandler) UpdateRoute(ctx context.Context, req *connect.Request[networkv1.UpdateRouteRequest]) (*connect.Response[networkv1.UpdateRouteResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	m := req.Msg
	r, err := h.svc.UpdateRoute(ctx, c, &networkv1.Route{RouteId: m.GetRouteId(), Name: m.GetName(), NameBn: m.GetNameBn(),
		Stops: m.GetStops()}, m.GetExpectedVersion())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&networkv1.UpdateRouteResponse{Route: r}), nil
}

func (h *networkHandler) CreateTimetable(ctx context.Context, req *connect.Request[networkv1.CreateTimetableRequest]) (*connect.Response[networkv1.CreateTimetableResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	t, run, err := h.svc.CreateTimetable(ctx, c, req.Msg.GetTimetable())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&networkv1.CreateTimetableResponse{Timetable: t, Run: run}), nil
}

func (h *networkHandler) GetTimetable(ctx context.Context, req *connect.Request[networkv1.GetTimetableRequest]) (*connect.Response[networkv1.GetTimetableResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	t, err := h.svc.GetTimetable(ctx, c, req.Msg.GetTimetableId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&networkv1.GetTimetableResponse{Timetable: t}), nil
}

func (h *networkHandler) ListTimetables(ctx context.Context, req *connect.Request[networkv1.ListTimetablesRequest]) (*connect.Response[networkv1.ListTimetablesResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	m := req.Msg
	tts, next, err := h.svc.ListTimetables(ctx, c, m.GetOrganizationId(), m.GetRouteId(), int(m.GetPageSize()), m.GetPageToken())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&networkv1.ListTimetablesResponse{Timetables: tts, NextPageToken: next}), nil
}

func (h *networkHandler) UpdateTimetable(ctx context.Context, req *connect.Request[networkv1.UpdateTimetableRequest]) (*connect.Response[networkv1.UpdateTimetableResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	t, run, err := h.svc.UpdateTimetable(ctx, c, req.Msg.GetTimetable(), req.Msg.GetExpectedVersion())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&networkv1.UpdateTimetableResponse{Timetable: t, Run: run}), nil
}

func (h *networkHandler) RunTimetables(ctx context.Context, req *connect.Request[networkv1.RunTimetablesRequest]) (*connect.Response[networkv1.RunTimetablesResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	m := req.Msg
	runs, err := h.svc.Run(ctx, c, network.RunRequest{OrganizationID: m.GetOrganizationId(), TimetableIDs: m.GetTimetableIds(),
		Days: int(m.GetDays())})
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&networkv1.RunTimetablesResponse{Runs: runs}), nil
}
