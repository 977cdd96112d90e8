package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/gen/seatghor/seatmap/v1/seatmapv1connect"
	"github.com/seatghor/seatghor/server/auth"
)

// connectGet is the path of a Connect GET of GetSeatMap with message (JSON)
// and the other query parameters, as connect-web's useHttpGet sends it.
func connectGet(message string, params ...string) string {
	q := url.Values{"message": {message}}
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	return seatmapv1connect.SeatMapServiceGetSeatMapProcedure + "?" + q.Encode()
}

// TestSeatMapFastPathAnswersConnectGetAsTheRPC (decision 0274): the
// Connect GET of GetSeatMap (the site's read) is answered by the fast path
// exactly as by the RPC handler when the caller has the layout, with
// Connect's JSON names, and 304 on a matching If-None-Match; everything
// else goes to the RPC handler.
func TestSeatMapFastPathAnswersConnectGetAsTheRPC(t *testing.T) {
	s := newSeatmapServers(t)
	ctx := context.Background()
	show := createShow(t, s.env, seatedShow("connect-get", 4, 10)).GetShowId()
	user := as(t, s.env, "rumana", auth.RoleUser)
	_, err := user.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2", "C7"}}))
	require.NoError(t, err)
	layout, err := user.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	etag := layout.Msg.GetEtag()
	waitForMapVersion(t, s, show, user)

	signedIn := http.Header{"Authorization": {"Bearer " + s.env.Token(t, "reader", auth.RoleUser)}}
	msg := func(extra string) string {
		return fmt.Sprintf(`{"showId":"%d","layoutEtag":"%s"%s}`, show, etag, extra)
	}
	for _, tc := range []fastCase{
		{"availability only", connectGet(msg(""), "connect", "v1", "encoding", "json"), signedIn, true, 200},
		{"a section", connectGet(msg(`,"section":"Main"`), "connect", "v1", "encoding", "json"), signedIn, true, 200},
		{"proto field names", connectGet(fmt.Sprintf(`{"show_id":%d,"layout_etag":%q}`, show, etag), "connect", "v1", "encoding", "json"), signedIn, true, 200},
		{"no protocol version", connectGet(msg(""), "encoding", "json"), signedIn, true, 200},
		{"stale layout etag: the layout too", connectGet(fmt.Sprintf(`{"showId":"%d","layoutEtag":"0123456789abcdef01234567"}`, show), "connect", "v1", "encoding", "json"), signedIn, true, 200},
		{"no layout etag", connectGet(fmt.Sprintf(`{"showId":"%d"}`, show), "connect", "v1", "encoding", "json"), signedIn, true, 200},
		{"no such section", connectGet(msg(`,"section":"S9"`), "connect", "v1", "encoding", "json"), signedIn, false, 400},
		{"base64 message", connectGet("eyJzaG93SWQiOiIxIn0", "connect", "v1", "encoding", "json", "base64", "1"), signedIn, false, 0},
		{"unknown field (the RPC's codec discards it)", connectGet(msg(`,"seats":1`), "connect", "v1", "encoding", "json"), signedIn, false, 200},
		{"unknown show", connectGet(fmt.Sprintf(`{"showId":"999999","layoutEtag":"%s"}`, etag), "connect", "v1", "encoding", "json"), signedIn, false, 404},
		{"not signed in", connectGet(msg(""), "connect", "v1", "encoding", "json"), http.Header{}, false, 401},
		{"a bad token", connectGet(msg(""), "connect", "v1", "encoding", "json"), http.Header{"Authorization": {"Bearer nonsense"}}, false, 401},
	} {
		t.Run(tc.name, func(t *testing.T) { s.answersAsTheRPC(t, tc) })
	}

	// The Connect client the Go SDK would use, over GET, reads it.
	c := seatmapv1connect.NewSeatMapServiceClient(s.fast.Client(), s.fast.URL, connect.WithHTTPGet(), connect.WithProtoJSON(),
		connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
				req.Header().Set("Authorization", signedIn.Get("Authorization"))
				return next(ctx, req)
			}
		})))
	before := s.fastRPC.calls.Load()
	got, err := c.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag}))
	require.NoError(t, err)
	require.Equal(t, before, s.fastRPC.calls.Load(), "answered by the fast path")
	require.True(t, proto.Equal(&seatmapv1.GetSeatMapResponse{ShowId: show, Currency: "BDT", Availability: got.Msg.GetAvailability(),
		SeatCount: 40, Version: got.Msg.GetVersion(), LayoutEtag: etag, AvailabilityCount: 40, AvailabilityOnly: true}, got.Msg), "%v", got.Msg)
	require.Equal(t, []byte{0b0000_0100, 0, 0, 0, 0, 0, 0b0001_0000, 0, 0, 0}, got.Msg.GetAvailability(), "A2 and C7 held")
}

// TestSeatMapFastAnswerGzipped (decision 0274): an answer of a kilobyte or
// more goes gzip-compressed to a caller that accepts gzip, and as it is to
// one that does not; both are the RPC path's answer.
func TestSeatMapFastAnswerGzipped(t *testing.T) {
	s := newSeatmapServers(t)
	show := createShow(t, s.env, seatedShow("gzip", 10, 500)).GetShowId()
	user := as(t, s.env, "rumana", auth.RoleUser)
	layout, err := user.seatmap.GetSeatLayout(context.Background(), connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	waitForMapVersion(t, s, show, user)
	token := "Bearer " + s.env.Token(t, "reader", auth.RoleUser)
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	read := func(srv string, path, accept string) (*http.Response, []byte) {
		req, err := http.NewRequest(http.MethodGet, srv+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", token)
		if accept != "" {
			req.Header.Set("Accept-Encoding", accept)
		}
		resp, err := raw.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			require.NoError(t, err)
			b, err = io.ReadAll(zr)
			require.NoError(t, err)
		}
		return resp, b
	}
	for _, path := range []string{
		fmt.Sprintf("/v1/shows/%d/seatmap?layout_etag=%s", show, layout.Msg.GetEtag()),
		connectGet(fmt.Sprintf(`{"showId":"%d","layoutEtag":"%s"}`, show, layout.Msg.GetEtag()), "connect", "v1", "encoding", "json"),
	} {
		before := s.fastRPC.calls.Load()
		zipped, body := read(s.fast.URL, path, "br;q=1.0, gzip;q=0.8")
		require.Equal(t, "gzip", zipped.Header.Get("Content-Encoding"), path)
		require.Contains(t, zipped.Header.Values("Vary"), "Accept-Encoding")
		require.Less(t, zipped.ContentLength, int64(len(body)), "compressed")
		_, again := read(s.fast.URL, path, "gzip")
		require.Equal(t, body, again)
		plain, identity := read(s.fast.URL, path, "gzip;q=0, identity")
		require.Empty(t, plain.Header.Get("Content-Encoding"))
		require.Equal(t, body, identity)
		require.Equal(t, before, s.fastRPC.calls.Load(), "answered by the fast path")
		_, slow := read(s.slow.URL, path, "gzip")
		var fromFast, fromSlow seatmapv1.GetSeatMapResponse
		require.NoError(t, protojson.Unmarshal(body, &fromFast))
		require.NoError(t, protojson.Unmarshal(slow, &fromSlow))
		require.True(t, proto.Equal(&fromSlow, &fromFast), "the RPC path's answer")
	}
}

// connectProtoGet is the path of a Connect GET of GetSeatMap in the
// binary encoding, as connect-web and connect-go send it (base64url).
func connectProtoGet(t *testing.T, m *seatmapv1.GetSeatMapRequest) string {
	t.Helper()
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	return connectGet(base64.RawURLEncoding.EncodeToString(b), "connect", "v1", "encoding", "proto", "base64", "1")
}

// postProto asks srv GetSeatMap as a Connect POST of body with the
// headers given, and returns what answers tell apart.
func postProto(t *testing.T, srv *httptest.Server, contentType string, body []byte, header http.Header) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+seatmapv1connect.SeatMapServiceGetSeatMapProcedure, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = header.Clone()
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Connect-Protocol-Version", "1")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := httpAnswer{status: resp.StatusCode, headers: map[string]string{}, body: string(b)}
	for _, h := range []string{"Content-Type", "Cache-Control", "ETag"} {
		a.headers[h] = resp.Header.Get(h)
	}
	return a
}

// TestSeatMapFastPathAnswersBinaryAsTheRPC (decision 0400): GetSeatMap in
// Connect's binary encoding, as a GET (encoding=proto, the message in
// base64url or as its bytes) and as a POST of application/proto, is
// answered by the fast path with the RPC handler's bytes, headers and
// status, without the RPC; a POST is never answered 304; what the fast
// path does not read (JSON POSTs, a compressed body, errors) is the RPC's.
func TestSeatMapFastPathAnswersBinaryAsTheRPC(t *testing.T) {
	s := newSeatmapServers(t)
	ctx := context.Background()
	req := seatedShow("binary", 4, 10)
	req.GaAreas = []*catalogv1.GaArea{{Name: "Standing ঢাকা", Capacity: 30, PriceMinor: 20000}}
	show := createShow(t, s.env, req).GetShowId()
	user := as(t, s.env, "rumana", auth.RoleUser)
	_, err := user.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2", "C7"}}))
	require.NoError(t, err)
	layout, err := user.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	etag := layout.Msg.GetEtag()
	waitForMapVersion(t, s, show, user)
	signedIn := http.Header{"Authorization": {"Bearer " + s.env.Token(t, "reader", auth.RoleUser)}}

	raw, err := proto.Marshal(&seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag})
	require.NoError(t, err)
	for _, tc := range []fastCase{
		{"availability only", connectProtoGet(t, &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag}), signedIn, true, 200},
		{"a section", connectProtoGet(t, &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag, Section: "Main"}), signedIn, true, 200},
		{"the bytes, not base64", connectGet(string(raw), "connect", "v1", "encoding", "proto"), signedIn, true, 200},
		{"stale layout etag: the layout too", connectProtoGet(t, &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: "0123456789abcdef01234567"}), signedIn, true, 200},
		{"no layout etag", connectProtoGet(t, &seatmapv1.GetSeatMapRequest{ShowId: show}), signedIn, true, 200},
		{"no such section", connectProtoGet(t, &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag, Section: "S9"}), signedIn, false, 400},
		{"unknown show", connectProtoGet(t, &seatmapv1.GetSeatMapRequest{ShowId: 999999, LayoutEtag: etag}), signedIn, false, 404},
		{"not a message", connectGet("bm90IGEgbWVzc2FnZQ", "connect", "v1", "encoding", "proto", "base64", "1"), signedIn, false, 0},
		{"compressed message", connectGet("AAAA", "connect", "v1", "encoding", "proto", "base64", "1", "compression", "gzip"), signedIn, false, 0},
		{"not signed in", connectProtoGet(t, &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag}), http.Header{}, false, 401},
	} {
		t.Run("GET "+tc.name, func(t *testing.T) { s.answersAsTheRPC(t, tc) })
	}

	type postCase struct {
		name        string
		contentType string
		msg         *seatmapv1.GetSeatMapRequest
		header      http.Header
		fast        bool
		status      int
	}
	withINM := func(h http.Header, inm string) http.Header {
		h = h.Clone()
		h.Set("If-None-Match", inm)
		return h
	}
	answer := postProto(t, s.fast, "application/proto", raw, signedIn)
	require.NotEmpty(t, answer.headers["ETag"])
	for _, tc := range []postCase{
		{"availability only", "application/proto", &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag}, signedIn, true, 200},
		{"a section", "application/proto", &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag, Section: "Main"}, signedIn, true, 200},
		{"no layout etag", "application/proto", &seatmapv1.GetSeatMapRequest{ShowId: show}, signedIn, true, 200},
		{"a POST is never 304", "application/proto", &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag}, withINM(signedIn, answer.headers["ETag"]), true, 200},
		{"no such section", "application/proto", &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag, Section: "S9"}, signedIn, false, 400},
		{"not signed in", "application/proto", &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag}, http.Header{}, false, 401},
		{"JSON is the RPC's", "application/json", nil, signedIn, false, 200},
	} {
		t.Run("POST "+tc.name, func(t *testing.T) {
			body := []byte(fmt.Sprintf(`{"showId":"%d","layoutEtag":"%s"}`, show, etag))
			if tc.msg != nil {
				var err error
				body, err = proto.Marshal(tc.msg)
				require.NoError(t, err)
			}
			before := s.fastRPC.calls.Load()
			fast := postProto(t, s.fast, tc.contentType, body, tc.header)
			if tc.fast {
				require.Equal(t, before, s.fastRPC.calls.Load(), "answered by the fast path")
			}
			slow := postProto(t, s.slow, tc.contentType, body, tc.header)
			require.Equal(t, tc.status, fast.status, "%s", fast.body)
			if tc.contentType == "application/json" {
				require.JSONEq(t, slow.body, fast.body)
				fast.body, slow.body = "", ""
			}
			require.Equal(t, slow, fast, "the fast path answers as the RPC path")
		})
	}

	// The Go SDK's client (binary POST by default) reads it on the fast path.
	c := seatmapv1connect.NewSeatMapServiceClient(s.fast.Client(), s.fast.URL,
		connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
				req.Header().Set("Authorization", signedIn.Get("Authorization"))
				return next(ctx, req)
			}
		})))
	for _, opt := range []connect.ClientOption{nil, connect.WithHTTPGet()} {
		cc := c
		if opt != nil {
			cc = seatmapv1connect.NewSeatMapServiceClient(s.fast.Client(), s.fast.URL, opt,
				connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
					return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
						req.Header().Set("Authorization", signedIn.Get("Authorization"))
						return next(ctx, req)
					}
				})))
		}
		before := s.fastRPC.calls.Load()
		got, err := cc.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag}))
		require.NoError(t, err)
		require.Equal(t, before, s.fastRPC.calls.Load(), "answered by the fast path")
		require.Equal(t, []byte{0b0000_0100, 0, 0, 0, 0, 0, 0b0001_0000, 0, 0, 0}, got.Msg.GetAvailability(), "A2 and C7 held")
		require.Equal(t, []*seatmapv1.GaArea{{Name: "Standing ঢাকা", Remaining: 30}}, got.Msg.GetGaAreas())
	}
}

// TestSeatMapFastBinaryGzipped (decision 0400): a large binary answer goes
// gzip-compressed to a caller that takes it, the RPC path's content.
func TestSeatMapFastBinaryGzipped(t *testing.T) {
	s := newSeatmapServers(t)
	show := createShow(t, s.env, seatedShow("binary-gzip", 10, 500)).GetShowId()
	user := as(t, s.env, "rumana", auth.RoleUser)
	layout, err := user.seatmap.GetSeatLayout(context.Background(), connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	waitForMapVersion(t, s, show, user)
	path := connectProtoGet(t, &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: layout.Msg.GetEtag()})
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	read := func(srv string) (*http.Response, []byte) {
		req, err := http.NewRequest(http.MethodGet, srv+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.env.Token(t, "reader", auth.RoleUser))
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := raw.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
		require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
		zr, err := gzip.NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		b, err = io.ReadAll(zr)
		require.NoError(t, err)
		return resp, b
	}
	before := s.fastRPC.calls.Load()
	fast, fastBody := read(s.fast.URL)
	require.Equal(t, before, s.fastRPC.calls.Load(), "answered by the fast path")
	require.Equal(t, "application/proto", fast.Header.Get("Content-Type"))
	_, slowBody := read(s.slow.URL)
	require.Equal(t, slowBody, fastBody, "the RPC path's bytes")
	var m seatmapv1.GetSeatMapResponse
	require.NoError(t, proto.Unmarshal(fastBody, &m))
	require.Equal(t, int32(5000), m.GetAvailabilityCount())
}
