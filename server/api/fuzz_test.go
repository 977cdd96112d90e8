package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/ledger/v1/ledgerv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/network/v1/networkv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/partner/v1/partnerv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/search/v1/searchv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/seatmap/v1/seatmapv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/tickets/v1/ticketsv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1/waitingroomv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
)

// fuzzServices are every service the API serves.
var fuzzServices = []string{
	catalogv1connect.CatalogServiceName, bookingv1connect.HoldServiceName, bookingv1connect.OrderServiceName,
	seatmapv1connect.SeatMapServiceName, paymentv1connect.PaymentServiceName, ticketsv1connect.TicketServiceName,
	searchv1connect.TripSearchServiceName, waitingroomv1connect.WaitingRoomServiceName, ledgerv1connect.LedgerServiceName,
	partnerv1connect.PartnerServiceName,
	partnerv1connect.AllocationServiceName, networkv1connect.NetworkServiceName,
}

// fuzzMethods are every RPC of every service, in a fixed order.
func fuzzMethods(tb testing.TB) []protoreflect.MethodDescriptor {
	tb.Helper()
	var out []protoreflect.MethodDescriptor
	for _, name := range fuzzServices {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		require.NoError(tb, err)
		sd := d.(protoreflect.ServiceDescriptor)
		for i := range sd.Methods().Len() {
			out = append(out, sd.Methods().Get(i))
		}
	}
	return out
}

var fuzzRoles = []auth.Role{auth.RoleAdmin, auth.RoleUser, auth.RoleOperator}

// fuzzEnv is one platform for every fuzz input of a target: starting one
// per input would be the whole cost.
type fuzzEnv struct {
	env    *apptest.Env
	tokens []string
	show   int64
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	r := redistest.New(f) // waiting rooms and rate limits live in Redis
	env := apptest.New(f, apptest.Options{Shards: 2, RedisURL: r.URL, RedisPrefix: r.Prefix, Tickets: true,
		Log: slog.New(slog.DiscardHandler)}) // the answers tell what failed
	fe := &fuzzEnv{env: env, show: createShow(f, env, seatedShow("fuzz", 2, 5)).GetShowId()}
	for _, role := range fuzzRoles {
		fe.tokens = append(fe.tokens, env.Token(f, "fuzz-"+string(role), role))
	}
	return fe
}

// do sends one request and fails the test on an answer that blames the
// server for the caller's input: HTTP 500, code internal or unknown, a
// dropped connection (a panic) or no answer.
func (fe *fuzzEnv) do(t *testing.T, method, path, contentType string, body []byte, role byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, fe.env.URL+path, bytes.NewReader(body))
	if err != nil {
		return // not a request a client could send
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+fe.tokens[int(role)%len(fe.tokens)])
	req.Header.Set(keyHeader, newKey())
	resp, err := fe.env.HTTP.Do(req)
	require.NoError(t, err, "%s %s: no answer (a panic drops the connection)", method, path)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NotEqual(t, http.StatusInternalServerError, resp.StatusCode, "%s %s %q: %s", method, path, body, out)
	var e struct {
		Code json.RawMessage `json:"code"`
	}
	if json.Unmarshal(out, &e) == nil {
		for _, bad := range []string{`"internal"`, `"unknown"`, `13`, `2`} {
			require.NotEqual(t, bad, string(e.Code), "%s %s %q: %s", method, path, body, out)
		}
	}
}

// To fuzz beyond the seeds (minimising an interesting input takes a minute
// by default, which looks like a stall):
//
//	go test -run XXX -fuzz FuzzConnectRequests -fuzztime 5m -fuzzminimizetime 2s ./server/api/

// FuzzConnectRequests sends arbitrary messages to every RPC over Connect,
// in binary and JSON, as each role: no input is answered internal. The seeds
// are, for every RPC, the empty message and messages whose every field
// holds an extreme value (the largest and smallest numbers, unknown enum
// values, long and non-UTF-8 strings).
func FuzzConnectRequests(f *testing.F) {
	methods := fuzzMethods(f)
	for i, m := range methods {
		for _, seed := range seedMessages(m.Input()) {
			for role := range byte(len(fuzzRoles)) {
				f.Add(uint16(i), seed, false, role)
			}
			f.Add(uint16(i), seed, true, byte(0))
		}
	}
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, method uint16, data []byte, asJSON bool, role byte) {
		m := methods[int(method)%len(methods)]
		path := "/" + string(m.Parent().FullName()) + "/" + string(m.Name())
		if !asJSON {
			fe.do(t, http.MethodPost, path, "application/proto", data, role)
			return
		}
		// JSON of the same message when it decodes (protojson refuses
		// non-UTF-8 text: then the raw bytes go as they are).
		msg := dynamicpb.NewMessage(m.Input())
		body := data
		if proto.Unmarshal(data, msg) == nil {
			if b, err := protojson.Marshal(msg); err == nil {
				body = b
			}
		}
		fe.do(t, http.MethodPost, path, "application/json", body, role)
	})
}

// FuzzRESTRoutes sends arbitrary path and query parameters (and bodies) to
// every REST route: no input is answered 500 or internal.
func FuzzRESTRoutes(f *testing.F) {
	routes := restRoutes(f)
	values := []string{"", "1", "-1", "0", "9223372036854775807", "-9223372036854775808", "99999999999999999999",
		"abc", "\xff\xfe", "tkt_1_0001", "%", "a/b", strings.Repeat("x", 300)}
	for i := range routes {
		for _, v := range values {
			f.Add(uint16(i), v, "page_token="+url.QueryEscape(v)+"&show_id="+url.QueryEscape(v), []byte("{}"))
		}
		f.Add(uint16(i), "1", "%ff=1", []byte(`{"show_id": "9223372036854775807"}`))
		f.Add(uint16(i), "1", "page_token=%ff%fe", []byte("\xff"))
		f.Add(uint16(i), "1", "no_such_field=1&page_size=-5", []byte(`{"seats": [1, 2]}`))
	}
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, route uint16, value, query string, body []byte) {
		r := routes[int(route)%len(routes)]
		path := r.fill(value)
		if query != "" {
			path += "?" + query
		}
		var ct string
		if r.method != http.MethodGet {
			ct = "application/json"
		} else {
			body = nil
		}
		fe.do(t, r.method, path, ct, body, 0)
	})
}

type restRoute struct {
	method, path string
}

// fill puts value, escaped, in every variable of the route's path.
func (r restRoute) fill(value string) string {
	var b strings.Builder
	rest := r.path
	for {
		i := strings.Index(rest, "{")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		j := strings.Index(rest[i:], "}")
		b.WriteString(rest[:i])
		b.WriteString(url.PathEscape(value))
		rest = rest[i+j+1:]
	}
}

// restRoutes are every REST route of every service, from the protos.
func restRoutes(tb testing.TB) []restRoute {
	var out []restRoute
	for _, m := range fuzzMethods(tb) {
		rule, _ := proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule)
		if rule == nil {
			continue
		}
		for method, path := range map[string]string{http.MethodGet: rule.GetGet(), http.MethodPost: rule.GetPost(),
			http.MethodPut: rule.GetPut(), http.MethodPatch: rule.GetPatch(), http.MethodDelete: rule.GetDelete()} {
			if path != "" {
				out = append(out, restRoute{method, path})
			}
		}
	}
	require.NotEmpty(tb, out)
	return out
}

var seedCache sync.Map

// seedMessages are the seeds of one request message, in the binary wire
// format: empty, every field at its largest, every field at its smallest,
// and every string field not UTF-8.
func seedMessages(md protoreflect.MessageDescriptor) [][]byte {
	if v, ok := seedCache.Load(md.FullName()); ok {
		return v.([][]byte)
	}
	out := [][]byte{{}}
	for _, extreme := range []int{1, -1} {
		b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(filled(md, extreme, 0))
		if err == nil {
			out = append(out, b)
		}
	}
	out = append(out, badUTF8(md))
	seedCache.Store(md.FullName(), out)
	return out
}

// filled is a message whose every field holds an extreme value: the
// largest (sign 1) or the smallest (sign -1).
func filled(md protoreflect.MessageDescriptor, sign, depth int) proto.Message {
	msg := dynamicpb.NewMessage(md)
	if depth > 3 {
		return msg
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() && od.Fields().Get(0) != fd {
			continue // one member per oneof
		}
		switch {
		case fd.IsMap():
			m := msg.Mutable(fd).Map()
			m.Set(extreme(fd.MapKey(), sign, depth).MapKey(), extreme(fd.MapValue(), sign, depth))
		case fd.IsList():
			l := msg.Mutable(fd).List()
			for range 3 {
				l.Append(extreme(fd, sign, depth))
			}
		default:
			msg.Set(fd, extreme(fd, sign, depth))
		}
	}
	return msg
}

func extreme(fd protoreflect.FieldDescriptor, sign, depth int) protoreflect.Value {
	big := sign > 0
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(big)
	case protoreflect.EnumKind:
		if big {
			return protoreflect.ValueOfEnum(math.MaxInt32)
		}
		return protoreflect.ValueOfEnum(-1)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(pick(big, int32(math.MaxInt32), math.MinInt32))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(pick(big, int64(math.MaxInt64), math.MinInt64))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(pick(big, uint32(math.MaxUint32), 0))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(pick(big, uint64(math.MaxUint64), 0))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(pick(big, float32(math.MaxFloat32), -math.MaxFloat32))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(pick(big, math.Inf(1), math.Inf(-1)))
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(pick(big, strings.Repeat("ঢ", 1000), "\x00"))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(pick(big, bytes.Repeat([]byte{0xff}, 1000), nil))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return protoreflect.ValueOfMessage(filled(fd.Message(), sign, depth+1).ProtoReflect())
	}
	panic(fmt.Sprintf("no extreme for %v", fd.Kind()))
}

func pick[T any](big bool, a, b T) T {
	if big {
		return a
	}
	return b
}

// badUTF8 is a message whose every top-level string field holds bytes
// that are not UTF-8 (proto.Marshal refuses to write it, so it is built
// by hand).
func badUTF8(md protoreflect.MessageDescriptor) []byte {
	var b []byte
	fields := md.Fields()
	for i := range fields.Len() {
		if fd := fields.Get(i); fd.Kind() == protoreflect.StringKind && !fd.IsMap() {
			b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
			b = protowire.AppendBytes(b, []byte("\xff\xfe"))
		}
	}
	return b
}
