package api

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatghor/seatghor/gen/seatghor/seatmap/v1/seatmapv1connect"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
)

// CachedAvailabilityReader answers a show's availability from the cache
// alone (projections/seatmap's reader does); ok is false when the cache
// cannot answer, and the ordinary path then loads and fills it.
type CachedAvailabilityReader interface {
	CachedAvailability(ctx context.Context, showID int64) (a booking.MapAvailability, ok bool)
}

// seatmapFastPath answers the one read of the on-sale morning that is
// asked most, GET /v1/shows/{show_id}/seatmap?layout_etag=… (optionally
// &section=…) from a caller that has the layout, without the RPC stack:
// one Redis round trip, the JSON written directly (decision 0230). It
// answers only what it is sure of — a signed-in caller, the layout the
// caller names is the show's, the Redis map current, the section known —
// and hands everything else to next, the ordinary REST path (vanguard and
// Connect), which answers errors, stale etags and misses exactly as
// before. What the RPC path does around the answer it does too: the
// bearer check (auth), the RPC's latency metric and the access log's
// procedure and code, a span named after the RPC, the Cache-Control and
// ETag headers, and 304 on a matching If-None-Match. CORS, the request's
// span and the access log wrap the mux, so they cover both paths. The
// read has no rate limit, waiting room or idempotency record on either
// path (ratelimit's rules name holds, payments and joins only).
type seatmapFastPath struct {
	cache   CachedAvailabilityReader
	creds   auth.Verifier
	latency prometheus.Observer
	tracer  trace.Tracer
	next    http.Handler
	bufs    sync.Pool
}

const getSeatMapProcedure = seatmapv1connect.SeatMapServiceGetSeatMapProcedure

// newSeatmapFastPath returns the fast path in front of next, or next when
// there is no cache to answer from.
func newSeatmapFastPath(cfg Config, metrics *rpcMetrics, next http.Handler) http.Handler {
	cache, ok := cfg.SeatMaps.(CachedAvailabilityReader)
	if !ok || cfg.SeatMaps == nil {
		return next
	}
	return &seatmapFastPath{cache: cache, creds: cfg.Credentials,
		latency: metrics.latency.WithLabelValues(getSeatMapProcedure, "ok"),
		tracer:  cfg.Tracing.Tracer("github.com/seatghor/seatghor/server/api"), next: next}
}

// fastQuery is what a fast answer needs from the request.
type fastQuery struct {
	showID     int64
	layoutETag string
	section    string
}

// parse reads the request the fast path may answer: a GET whose show id
// is a plain positive number and whose query names a layout etag and at
// most a section, each once. Anything else is the ordinary path's.
func parseFastQuery(r *http.Request) (fastQuery, bool) {
	var q fastQuery
	if r.Method != http.MethodGet {
		return q, false
	}
	raw := r.PathValue("show_id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != raw {
		return q, false
	}
	q.showID = id
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return q, false
	}
	for k, vs := range values {
		if len(vs) != 1 {
			return q, false
		}
		switch k {
		case "layout_etag", "layoutEtag":
			if q.layoutETag != "" {
				return q, false
			}
			q.layoutETag = vs[0]
		case "section":
			q.section = vs[0]
		default:
			return q, false
		}
	}
	// The RPC's validation bounds a section name at 200 characters: a
	// longer one is its to refuse.
	if q.layoutETag == "" || len(q.section) > 200 && utf8.RuneCountInString(q.section) > 200 {
		return q, false
	}
	return q, true
}

func (f *seatmapFastPath) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q, ok := parseFastQuery(r)
	if !ok {
		f.next.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	ctx := r.Context()
	// Who: as auth's interceptor (GetSeatMap is not public; any role may
	// read, read-only keys included). A refusal is the ordinary path's to
	// answer, in its words.
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		f.next.ServeHTTP(w, r)
		return
	}
	p, err := f.creds.Authenticate(ctx, strings.TrimSpace(token))
	if err != nil {
		f.next.ServeHTTP(w, r)
		return
	}
	ctx, span := f.tracer.Start(auth.WithPrincipal(ctx, p), getSeatMapProcedure[1:], trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("rpc.system", "connect_rpc"), attribute.String("rpc.service", "seatghor.seatmap.v1.SeatMapService"),
			attribute.String("rpc.method", "GetSeatMap"), attribute.Bool("seatghor.fast_path", true)))
	a, ok := f.cache.CachedAvailability(ctx, q.showID)
	ok = ok && a.LayoutETag == q.layoutETag
	offset, count, states := 0, a.SeatCount, a.States
	if ok && q.section != "" {
		// a huge show is read a section at a time.
		i := slices.IndexFunc(a.Sections, func(s booking.SectionSpan) bool { return s.Name == q.section })
		if ok = i >= 0; ok {
			sec := a.Sections[i]
			offset, count, states = sec.First, sec.Count, sliceStates(a.States, sec.First, sec.Count)
		}
	}
	if !ok {
		// A miss, a stale layout etag or an unknown section: the ordinary
		// path loads, answers the layout, or refuses.
		span.SetAttributes(attribute.Bool("seatghor.fast_path", false))
		span.End()
		f.next.ServeHTTP(w, r)
		return
	}
	ga := make([]int32, len(a.GAAreas))
	for i, g := range a.GAAreas {
		ga[i] = int32(g.Remaining)
	}
	etag := answerETag(a.Version, a.LayoutETag, offset, count, true, 0, states, ga)
	h := w.Header()
	// The RPC's headers (GetSeatMap, a second-old answer is fine).
	h.Set("Cache-Control", "public, max-age=1")
	h.Set("ETag", etag)
	code := http.StatusOK
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		code = http.StatusNotModified
	}
	var body *[]byte
	if code == http.StatusOK {
		body = f.buffer()
		*body = appendAvailabilityJSON((*body)[:0], a, states, offset, count)
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(*body)))
	}
	f.latency.Observe(time.Since(start).Seconds())
	noteRPC(ctx, getSeatMapProcedure, "ok")
	span.SetStatus(codes.Ok, "")
	span.End()
	w.WriteHeader(code)
	if body != nil {
		_, _ = w.Write(*body)
		f.bufs.Put(body)
	}
}

func (f *seatmapFastPath) buffer() *[]byte {
	if b, ok := f.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4096)
	return &b
}

// appendAvailabilityJSON appends the availability-only answer as the REST
// route's codec writes GetSeatMapResponse (protojson, proto field names,
// in field-number order, zero values left out, 64-bit integers as
// strings, bytes as standard base64).
func appendAvailabilityJSON(b []byte, a booking.MapAvailability, states []byte, offset, count int) []byte {
	b = append(b, `{"show_id":"`...)
	b = strconv.AppendInt(b, a.ShowID, 10)
	b = append(b, '"')
	if a.Currency != "" {
		b = appendJSONString(append(b, `,"currency":`...), a.Currency)
	}
	if len(states) > 0 {
		b = append(b, `,"availability":"`...)
		b = base64.StdEncoding.AppendEncode(b, states)
		b = append(b, '"')
	}
	if a.SeatCount != 0 {
		b = strconv.AppendInt(append(b, `,"seat_count":`...), int64(int32(a.SeatCount)), 10)
	}
	if a.Version != 0 {
		b = append(strconv.AppendInt(append(b, `,"version":"`...), a.Version, 10), '"')
	}
	if len(a.GAAreas) > 0 {
		b = append(b, `,"ga_areas":[`...)
		for i, g := range a.GAAreas {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			sep := ""
			if g.Name != "" {
				b = appendJSONString(append(b, `"name":`...), g.Name)
				sep = ","
			}
			if g.Remaining != 0 {
				b = strconv.AppendInt(append(append(b, sep...), `"remaining":`...), int64(int32(g.Remaining)), 10)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendJSONString(append(b, `,"layout_etag":`...), a.LayoutETag)
	if offset != 0 {
		b = strconv.AppendInt(append(b, `,"availability_offset":`...), int64(int32(offset)), 10)
	}
	if count != 0 {
		b = strconv.AppendInt(append(b, `,"availability_count":`...), int64(int32(count)), 10)
	}
	return append(b, `,"availability_only":true}`...)
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, the rest as is (text from the shard is
// UTF-8; anything else becomes U+FFFD, as a JSON encoder would).
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', byte(c))
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20 || c == '\u2028' || c == '\u2029':
			b = append(b, '\\', 'u', hexDigits[c>>12&0xf], hexDigits[c>>8&0xf], hexDigits[c>>4&0xf], hexDigits[c&0xf])
		default:
			b = utf8.AppendRune(b, c)
		}
	}
	return append(b, '"')
}
