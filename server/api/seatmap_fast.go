package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
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
// &section=…) from a caller that has the layout, and the same read as
// Connect's GET of GetSeatMap with a JSON message (the site's, decision
// 0274), without the RPC stack: one Redis round trip, the JSON written
// directly (decision 0230); and the whole map to a caller that names no
// layout etag or a stale one, its layout remembered by etag (decision
// 0275). It answers only what it is sure of — a signed-in caller, the
// Redis map current, the section known — and hands everything else to next,
// the ordinary REST path (vanguard and Connect) or the RPC handler, which
// answers errors, stale etags and misses exactly as before. What the RPC
// path does around the answer it does too: the bearer check (auth), the
// RPC's latency metric and the access log's procedure and code, a span
// named after the RPC, the Cache-Control and ETag headers, 304 on a
// matching If-None-Match, and gzip for a caller that takes it (made once
// per answer, not per request). CORS, the request's
// span and the access log wrap the mux, so they cover both paths. The
// read has no rate limit, waiting room or idempotency record on either
// path (ratelimit's rules name holds, payments and joins only). A
// partner's answer is the public availability as its channel sees it
// (decision 0324), remembered apart from the public's.
type seatmapFastPath struct {
	cache    CachedAvailabilityReader
	maps     SeatMapReader
	channels ChannelViews
	tokens   *verifiedTokens
	latency  prometheus.Observer
	answered prometheus.Counter
	tracer   trace.Tracer
	answers  [answerSlots]atomic.Pointer[fastAnswer]
	// share is how long a Redis read serves the show's readers; reads
	// holds the last read of each slot's show (decision 0232), and views
	// the last read of each slot's partner's view of a show.
	share time.Duration
	// now is the clock holds run out by (a shared read showing a hold
	// that has run out since is not shared).
	now   func() time.Time
	reads [answerSlots]atomic.Pointer[sharedRead[booking.MapAvailability]]
	views [answerSlots]atomic.Pointer[sharedRead[booking.ChannelView]]
	// layouts remembers layouts by etag (an etag names one layout, and
	// shows of one layout share it: a bus company's buses), for whole
	// maps; nLayouts bounds it (decision 0275).
	layouts  sync.Map // layout etag → *seatmapv1.GetSeatLayoutResponse
	nLayouts atomic.Int64
}

// maxLayouts bounds the layouts the fast path remembers: when full, all
// are forgotten.
const maxLayouts = 1024

// readKey names what a shared read reads: a show's availability
// (partner 0) or a partner's view of it.
type readKey struct{ showID, partnerID int64 }

// sharedRead is one read of key, started at at; v and ok are set before
// done is closed.
type sharedRead[T any] struct {
	key  readKey
	at   time.Time
	done chan struct{}
	v    T
	ok   bool
}

const getSeatMapProcedure = seatmapv1connect.SeatMapServiceGetSeatMapProcedure

// newSeatmapFastPath returns the fast path, or nil when there is no cache
// to answer from.
func newSeatmapFastPath(cfg Config, metrics *rpcMetrics) *seatmapFastPath {
	cache, ok := cfg.SeatMaps.(CachedAvailabilityReader)
	if !ok || cfg.SeatMaps == nil {
		return nil
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &seatmapFastPath{now: now, cache: cache, maps: cfg.SeatMaps, channels: cfg.Booking, tokens: newVerifiedTokens(cfg.Credentials, cfg.Now),
		latency: metrics.latency.WithLabelValues(getSeatMapProcedure, "ok"), answered: metrics.fastSeatMaps,
		tracer: cfg.Tracing.Tracer("github.com/seatghor/seatghor/server/api"), share: cfg.SeatMapShare}
}

// route is the fast path of the requests parse reads, in front of next,
// which answers every other (next alone without a fast path). The REST
// read and the Connect GET share one fast path: its remembered answers
// and shared reads.
func (f *seatmapFastPath) route(parse func(*http.Request) (fastQuery, bool), next http.Handler) http.Handler {
	if f == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, ok := parse(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		f.serve(w, r, q, next)
	})
}

// availability is the show's availability from the cache: the read
// another reader of the show started less than share ago (waiting for it
// when it is still in flight), else a new one that later readers share.
// An answer is never older than share (a read's time is taken before it
// starts), nor shows a hold that has run out.
func (f *seatmapFastPath) availability(ctx context.Context, showID int64) (booking.MapAvailability, bool) {
	if f.share <= 0 {
		return f.cache.CachedAvailability(ctx, showID)
	}
	a, ok := shareRead(ctx, &f.reads[answerSlot(showID, "", false, false, false, 0)], readKey{showID: showID}, f.share,
		func(ctx context.Context) (booking.MapAvailability, bool) {
			return f.cache.CachedAvailability(ctx, showID)
		})
	if ok && !a.ValidUntil.IsZero() && f.now().After(a.ValidUntil) {
		// A hold the shared read shows ran out since it was made: a read
		// of its own lets it go, however young the shared one is.
		return f.cache.CachedAvailability(ctx, showID)
	}
	return a, ok
}

// channelView is how partnerID's channel sees the show (decision 0324),
// read from the shard and shared as availability's reads are.
func (f *seatmapFastPath) channelView(ctx context.Context, showID, partnerID int64) (booking.ChannelView, bool) {
	read := func(ctx context.Context) (booking.ChannelView, bool) {
		v, err := f.channels.ChannelView(ctx, showID, partnerID)
		return v, err == nil
	}
	if f.share <= 0 {
		return read(ctx)
	}
	return shareRead(ctx, &f.views[answerSlot(showID, "", false, false, false, partnerID)], readKey{showID, partnerID}, f.share, read)
}

// shareRead answers key from slot's read when another reader started one
// of key less than share ago (waiting for it when it is still in flight),
// else from a new read that later readers share.
func shareRead[T any](ctx context.Context, slot *atomic.Pointer[sharedRead[T]], key readKey, share time.Duration,
	read func(context.Context) (T, bool)) (T, bool) {
	for {
		now := time.Now()
		cur := slot.Load()
		if cur != nil && cur.key == key && now.Sub(cur.at) < share {
			select {
			case <-cur.done:
				return cur.v, cur.ok
			case <-ctx.Done():
				var none T
				return none, false
			}
		}
		mine := &sharedRead[T]{key: key, at: now, done: make(chan struct{})}
		if !slot.CompareAndSwap(cur, mine) {
			continue // another reader started one meanwhile: share it
		}
		// The read is the leader's, but waiters share it: their
		// cancellation must not cut it short.
		mine.v, mine.ok = read(context.WithoutCancel(ctx))
		close(mine.done)
		if !mine.ok {
			slot.CompareAndSwap(mine, nil) // a miss is not shared: the next reader tries again
		}
		return mine.v, mine.ok
	}
}

// fastQuery is what a fast answer needs from the request.
type fastQuery struct {
	showID     int64
	layoutETag string
	section    string
	// connect: a Connect GET, whose JSON names fields as protojson does by
	// default (lowerCamelCase); the REST route's uses the proto names.
	connect bool
	// binary: the Connect protocol's binary encoding (application/proto,
	// decision 0400), answered in it.
	binary bool
	// post: a Connect POST, which is never answered 304.
	post bool
	// partner is the caller's channel (channelOf), known once the caller
	// is: a partner's answers are its view (decision 0324).
	partner int64
	// from and to are the journey's stop ids on a trip with stops
	// (decision 0354); empty: the first and the last stop.
	from, to string
}

// parseFastQuery reads the REST request the fast path may answer: a GET
// whose show id is a plain positive number and whose query names at most
// a layout etag and a section, each once. Anything else is the ordinary
// path's.
func parseFastQuery(r *http.Request) (fastQuery, bool) {
	var q fastQuery
	values, ok := singleQuery(r)
	if !ok {
		return q, false
	}
	raw := r.PathValue("show_id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != raw {
		return q, false
	}
	q.showID = id
	for k, vs := range values {
		switch k {
		case "layout_etag", "layoutEtag":
			if q.layoutETag != "" {
				return q, false
			}
			q.layoutETag = vs[0]
		case "section":
			q.section = vs[0]
		case "from_stop_id", "fromStopId":
			q.from = vs[0]
		case "to_stop_id", "toStopId":
			q.to = vs[0]
		default:
			return q, false
		}
	}
	return q, q.answerable()
}

// singleQuery is the query of r when r is a GET whose every parameter
// comes once; the fast path answers no other.
func singleQuery(r *http.Request) (url.Values, bool) {
	if r.Method != http.MethodGet {
		return nil, false
	}
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, false
	}
	for _, vs := range values {
		if len(vs) != 1 {
			return nil, false
		}
	}
	return values, true
}

// answerable says whether the fast path may answer q: the RPC's validation
// bounds a section name at 200 characters, a layout etag at 64 and a stop
// id at 64, and an etag other than plain ones is its to judge.
func (q fastQuery) answerable() bool {
	return plainETag(q.layoutETag) && !(len(q.section) > 200 && utf8.RuneCountInString(q.section) > 200) &&
		len(q.from) <= 64 && len(q.to) <= 64
}

// plainETag says whether a layout etag is one the fast path may answer
// (none, or up to 64 letters and digits, as ours are): any other is
// the RPC's to judge.
func plainETag(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// parseConnectGet reads the Connect protocol's GET of GetSeatMap, as
// connect-web sends it with useHttpGet (the site): ?connect=v1&encoding=json
// &message=<the request in JSON>, or in the binary encoding (decision
// 0400) ?encoding=proto&base64=1&message=<the request, base64url> (or the
// bytes themselves, percent-encoded, without base64), whose request names
// a positive show. Anything else (JSON in base64, compression, an unknown
// JSON field, a counter's view) is the RPC handler's.
func parseConnectGet(r *http.Request) (fastQuery, bool) {
	var q fastQuery
	values, ok := singleQuery(r)
	if !ok {
		return q, false
	}
	for k, vs := range values {
		switch {
		case k == "connect" && vs[0] == "v1", k == "encoding" && (vs[0] == "json" || vs[0] == "proto"), k == "message",
			k == "base64" && vs[0] == "1" && values.Get("encoding") == "proto":
		default:
			return q, false
		}
	}
	raw, ok := values["message"]
	if !ok {
		return q, false
	}
	var m seatmapv1.GetSeatMapRequest
	switch values.Get("encoding") {
	case "json":
		if protojson.Unmarshal([]byte(raw[0]), &m) != nil {
			return q, false
		}
	case "proto":
		msg := []byte(raw[0])
		if values.Get("base64") == "1" {
			var err error
			if msg, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(raw[0], "=")); err != nil {
				return q, false
			}
		}
		if proto.Unmarshal(msg, &m) != nil {
			return q, false
		}
		q.binary = true
	default:
		return q, false
	}
	q.showID, q.layoutETag, q.section, q.connect = m.GetShowId(), m.GetLayoutEtag(), m.GetSection(), true
	q.from, q.to = m.GetFromStopId(), m.GetToStopId()
	// A counter's view is the RPC's (decision 0482): the cache holds the
	// public map.
	return q, q.showID > 0 && m.GetCounterShiftId() == "" && q.answerable()
}

// maxPostBytes bounds the POST body the fast path reads: a GetSeatMap
// request is a show id, an etag and a section name, well under it.
const maxPostBytes = 1024

// parseConnectPost reads the Connect protocol's unary POST of GetSeatMap
// in the binary encoding (Content-Type application/proto: the Go SDK's
// default, decision 0400), uncompressed. Anything else (JSON, gRPC,
// gRPC-Web, a compressed or large body) is the RPC handler's, with the
// body as it came.
func parseConnectPost(r *http.Request) (fastQuery, bool) {
	var q fastQuery
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/proto" || r.URL.RawQuery != "" ||
		(r.Header.Get("Content-Encoding") != "" && r.Header.Get("Content-Encoding") != "identity") ||
		(r.ContentLength < 0 || r.ContentLength > maxPostBytes) {
		return q, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPostBytes+1))
	// Whatever was read goes back in front of the rest, for the RPC.
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || len(body) > maxPostBytes {
		return q, false
	}
	var m seatmapv1.GetSeatMapRequest
	if proto.Unmarshal(body, &m) != nil {
		return q, false
	}
	q = fastQuery{showID: m.GetShowId(), layoutETag: m.GetLayoutEtag(), section: m.GetSection(), connect: true, binary: true, post: true,
		from: m.GetFromStopId(), to: m.GetToStopId()}
	return q, q.showID > 0 && m.GetCounterShiftId() == "" && q.answerable()
}

func (f *seatmapFastPath) serve(w http.ResponseWriter, r *http.Request, q fastQuery, next http.Handler) {
	start := time.Now()
	ctx := r.Context()
	// Who: as auth's interceptor (GetSeatMap is not public; any role may
	// read, read-only keys included). A refusal is the ordinary path's to
	// answer, in its words.
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		next.ServeHTTP(w, r)
		return
	}
	p, ok := f.tokens.authenticate(ctx, strings.TrimSpace(token))
	if !ok {
		next.ServeHTTP(w, r)
		return
	}
	ctx, span := f.tracer.Start(auth.WithPrincipal(ctx, p), getSeatMapProcedure[1:], trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("rpc.system", "connect_rpc"), attribute.String("rpc.service", "seatghor.seatmap.v1.SeatMapService"),
			attribute.String("rpc.method", "GetSeatMap"), attribute.Bool("seatghor.fast_path", true)))
	a, ok := f.availability(ctx, q.showID)
	if q.partner = channelOf(p); ok && q.partner != 0 {
		// The cache holds the public map; the partner sees its channel's
		// (decision 0324).
		var v booking.ChannelView
		if v, ok = f.channelView(ctx, q.showID, q.partner); ok {
			a = v.Apply(a)
		}
	}
	// The journey's view of every leg's availability (decision 0354); a
	// journey the show lacks is the RPC's to refuse.
	from, to := 0, 0
	if ok {
		var err error
		if from, to, err = a.JourneyOf(q.from, q.to); err == nil {
			a, err = a.Journey(from, to)
		}
		ok = err == nil
	}
	var ans *fastAnswer
	switch {
	case !ok:
	case a.LayoutETag != q.layoutETag:
		// The caller lacks the layout (it named none, or a stale one):
		// the whole map, its layout remembered (decision 0275).
		var layout *seatmapv1.GetSeatLayoutResponse
		if layout, ok = f.layout(ctx, q.showID, a.LayoutETag, from, to); ok {
			ans, ok = f.wholeAnswer(q, a, layout)
		}
	default:
		offset, count, states := 0, a.SeatCount, a.States
		if q.section != "" {
			// a huge show is read a section at a time.
			i := slices.IndexFunc(a.Sections, func(s booking.SectionSpan) bool { return s.Name == q.section })
			if ok = i >= 0; ok {
				sec := a.Sections[i]
				offset, count, states = sec.First, sec.Count, sliceStates(a.States, sec.First, sec.Count)
			}
		}
		if ok {
			ans = f.answer(q, a, states, offset, count)
		}
	}
	if !ok {
		// A miss, a layout that moved meanwhile or an unknown section: the
		// ordinary path loads, answers or refuses.
		span.SetAttributes(attribute.Bool("seatghor.fast_path", false))
		span.End()
		next.ServeHTTP(w, r)
		return
	}
	h := w.Header()
	// The RPC's headers.
	setSeatMapCaching(h)
	h.Set("ETag", ans.etag)
	code, body := http.StatusOK, ans.body
	if inm := r.Header.Get("If-None-Match"); inm != "" && !q.post && etagMatches(inm, ans.etag) {
		code, body = http.StatusNotModified, nil
	} else {
		h.Set("Content-Type", "application/json")
		if q.binary {
			h.Set("Content-Type", "application/proto")
		}
		// As the RPC path compresses (compressMinBytes), but once per
		// answer, not once per request (decision 0274).
		if len(body) >= compressMinBytes {
			h.Add("Vary", "Accept-Encoding")
			if acceptsGzip(r.Header.Get("Accept-Encoding")) {
				body = ans.gzipped()
				h.Set("Content-Encoding", "gzip")
			}
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	f.latency.Observe(time.Since(start).Seconds())
	f.answered.Inc()
	noteRPC(ctx, getSeatMapProcedure, "ok")
	span.SetStatus(codes.Ok, "")
	span.End()
	// The headers and the body leave in one write (decision 0256).
	send := holdWrites(w, r)
	defer send()
	w.WriteHeader(code)
	if len(body) > 0 {
		_, _ = w.Write(body)
	}
}

// acceptsGzip says whether an Accept-Encoding header takes gzip (by name
// or *, with a quality above zero).
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.TrimSpace(name)
		if name != "gzip" && name != "*" {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !ok {
			return true
		}
		if v, err := strconv.ParseFloat(q, 64); err == nil && v > 0 {
			return true
		}
	}
	return false
}

// verifiedTokens checks bearer credentials as auth's interceptor does and
// remembers the signed tokens (JWTs: ours and the identity provider's)
// it accepted, until they expire and for a minute at most (decision
// 0231), so a reader polling the map does not pay a signature check and
// a JSON parse on every poll. API keys are never remembered: each use is
// looked up (revocation, last use).
type verifiedTokens struct {
	creds auth.Verifier
	now   func() time.Time
	m     sync.Map // token → verifiedToken
	n     atomic.Int64
}

type verifiedToken struct {
	p     auth.Principal
	until time.Time
}

// maxVerifiedTokens bounds the memory the remembered tokens take: when
// full, all are forgotten.
const maxVerifiedTokens = 10_000

func newVerifiedTokens(creds auth.Verifier, now func() time.Time) *verifiedTokens {
	if now == nil {
		now = time.Now
	}
	return &verifiedTokens{creds: creds, now: now}
}

func (v *verifiedTokens) authenticate(ctx context.Context, token string) (auth.Principal, bool) {
	now := v.now()
	if e, ok := v.m.Load(token); ok {
		if t := e.(verifiedToken); now.Before(t.until) {
			return t.p, true
		}
		v.m.Delete(token)
	}
	p, err := v.creds.Authenticate(ctx, token)
	if err != nil {
		return p, false
	}
	if exp, ok := jwtExpiry(token); ok && p.APIKey == "" {
		if v.n.Add(1) > maxVerifiedTokens {
			v.m.Clear()
			v.n.Store(1)
		}
		until := now.Add(time.Minute)
		if exp.Before(until) {
			until = exp
		}
		v.m.Store(token, verifiedToken{p: p, until: until})
	}
	return p, true
}

// jwtExpiry reads the exp claim of a token shaped like a JWT (one just
// verified, so its claims are the signer's).
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var c struct {
		Exp *float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &c) != nil || c.Exp == nil {
		return time.Time{}, false
	}
	return time.Unix(int64(*c.Exp), 0), true
}

// fastAnswer is one answer of the fast path: what it was made of, its
// ETag and its body (never changed once made), and gzipped, its body
// compressed the first time a reader accepts it.
type fastAnswer struct {
	showID        int64
	section       string
	connect       bool
	binary        bool
	partner       int64 // whose channel's view (0: the public's)
	from, to      string
	whole         bool // with the layout
	version       int64
	layoutETag    string
	currency      string
	seatCount     int
	offset, count int
	states        []byte
	ga            []booking.MapArea
	etag          string
	body          []byte
	gzipped       func() []byte
}

// answer returns the answer of a: the last one made for the show and
// section when a still reads the same (an on-sale morning's readers ask
// for the same few maps between changes, so the ETag's hash and the
// base64 are made once per change), else a new one, remembered.
func (f *seatmapFastPath) answer(q fastQuery, a booking.MapAvailability, states []byte, offset, count int) *fastAnswer {
	showID, section := q.showID, q.section
	slot := &f.answers[answerSlot(showID, section+"\x00"+a.FromStopID+"\x00"+a.ToStopID, q.connect, q.binary, false, q.partner)]
	if e := slot.Load(); e != nil && !e.whole && e.made(q, a, states) && e.offset == offset && e.count == count {
		return e
	}
	ga := make([]int32, len(a.GAAreas))
	for i, g := range a.GAAreas {
		ga[i] = int32(g.Remaining)
	}
	e := &fastAnswer{showID: showID, section: section, connect: q.connect, binary: q.binary, partner: q.partner, from: a.FromStopID, to: a.ToStopID,
		version: a.Version, layoutETag: a.LayoutETag,
		currency: a.Currency, seatCount: a.SeatCount, offset: offset, count: count, states: bytes.Clone(states),
		ga: slices.Clone(a.GAAreas), etag: answerETag(a.Version, a.LayoutETag, offset, count, true, 0, states, ga)}
	if q.binary {
		e.body = availabilityProto(a, states, offset, count)
	} else {
		e.body = appendAvailabilityJSON(make([]byte, 0, 256+len(states)*4/3), a, states, offset, count, q.connect)
	}
	e.gzipped = sync.OnceValue(func() []byte { return gzipBytes(e.body) })
	slot.Store(e)
	return e
}

// made says whether e is the answer of q made of a (states: the ones it
// carries).
func (e *fastAnswer) made(q fastQuery, a booking.MapAvailability, states []byte) bool {
	return e.showID == q.showID && e.section == q.section && e.connect == q.connect && e.binary == q.binary && e.partner == q.partner &&
		e.from == a.FromStopID && e.to == a.ToStopID && e.version == a.Version &&
		e.layoutETag == a.LayoutETag && e.currency == a.Currency && e.seatCount == a.SeatCount &&
		bytes.Equal(e.states, states) && slices.Equal(e.ga, a.GAAreas)
}

// layout is the layout etag names, remembered, or read with show's map
// (one Redis read) and remembered; false when it cannot be had or the
// show's layout is no longer etag (changed meanwhile). On a trip with
// stops it is the layout of the journey from → to (decision 0354), which
// etag names.
func (f *seatmapFastPath) layout(ctx context.Context, showID int64, etag string, from, to int) (*seatmapv1.GetSeatLayoutResponse, bool) {
	if l, ok := f.layouts.Load(etag); ok {
		return l.(*seatmapv1.GetSeatLayoutResponse), true
	}
	m, err := f.maps.SeatMap(ctx, showID)
	if err != nil {
		return nil, false
	}
	if m, err = m.Journey(from, to); err != nil {
		return nil, false
	}
	l := layoutProto(m)
	if l.GetEtag() != etag {
		return nil, false
	}
	if f.nLayouts.Add(1) > maxLayouts {
		f.layouts.Clear()
		f.nLayouts.Store(1)
	}
	f.layouts.Store(etag, l)
	return l, true
}

// wholeAnswer is the answer of q with its layout, made as the RPC makes
// it (seatMapAnswer, then the route's JSON codec) once per change of a,
// and remembered as answer's are; false for a section the show lacks
// (the RPC's to refuse).
func (f *seatmapFastPath) wholeAnswer(q fastQuery, a booking.MapAvailability, layout *seatmapv1.GetSeatLayoutResponse) (*fastAnswer, bool) {
	slot := &f.answers[answerSlot(q.showID, q.section+"\x00"+a.FromStopID+"\x00"+a.ToStopID, q.connect, q.binary, true, q.partner)]
	if e := slot.Load(); e != nil && e.whole && e.made(q, a, a.States) {
		return e, true
	}
	resp, err := seatMapAnswer(a, layout, q.section)
	if err != nil {
		return nil, false
	}
	// The REST route's codec (protoNamesJSON), Connect's JSON (protojson's
	// defaults) or Connect's binary.
	var body []byte
	if q.binary {
		body, err = proto.Marshal(resp)
	} else {
		body, err = protojson.MarshalOptions{UseProtoNames: !q.connect}.Marshal(resp)
	}
	if err != nil {
		return nil, false
	}
	e := &fastAnswer{showID: q.showID, section: q.section, connect: q.connect, binary: q.binary, partner: q.partner, from: a.FromStopID, to: a.ToStopID,
		whole: true, version: a.Version,
		layoutETag: a.LayoutETag, currency: a.Currency, seatCount: a.SeatCount, states: bytes.Clone(a.States),
		ga: slices.Clone(a.GAAreas), etag: seatMapETag(resp), body: body}
	e.gzipped = sync.OnceValue(func() []byte { return gzipBytes(e.body) })
	slot.Store(e)
	return e, true
}

// gzipBytes is b compressed by gzip at the default level.
func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, _ = zw.Write(b) // a bytes.Buffer takes every write
	_ = zw.Close()
	return out.Bytes()
}

// answerSlots is how many answers the fast path remembers (at most one a
// slot; a show and section always take the same slot).
const answerSlots = 256

// answerSlot is the slot of a show's answer of one form and section, to
// partner's channel. A partner's answers take slots of their own, mixed
// in first; the public's (partner 0) keep theirs, so partners' readers
// cost the public's no remakes but by a shared slot's chance.
func answerSlot(showID int64, section string, connect, binary, whole bool, partner int64) int {
	h := uint64(showID) * 0x9e3779b97f4a7c15
	if partner != 0 {
		h = (h ^ uint64(partner)) * 0x100000001b3
	}
	if connect || binary || whole {
		// The form mixed in before the section, so a show's forms mostly
		// take slots of their own (a shared slot costs only a remake).
		form := uint64(0xfc)
		if connect {
			form |= 1
		}
		if whole {
			form |= 2
		}
		if binary {
			form |= 0x100
		}
		h = (h ^ form) * 0x100000001b3
	}
	for i := range len(section) {
		h = (h ^ uint64(section[i])) * 0x100000001b3
	}
	return int(h >> 56 % answerSlots)
}

// appendAvailabilityJSON appends the availability-only answer as the REST
// route's codec writes GetSeatMapResponse (protojson, proto field names,
// in field-number order, zero values left out, 64-bit integers as
// strings, bytes as standard base64), or, camel, as Connect's JSON codec
// does (the same with protojson's lowerCamelCase names).
func appendAvailabilityJSON(b []byte, a booking.MapAvailability, states []byte, offset, count int, camel bool) []byte {
	name := func(proto, json string) string {
		if camel {
			return json
		}
		return proto
	}
	b = append(b, `{"`+name("show_id", "showId")+`":"`...)
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
		b = strconv.AppendInt(append(b, `,"`+name("seat_count", "seatCount")+`":`...), int64(int32(a.SeatCount)), 10)
	}
	if a.Version != 0 {
		b = append(strconv.AppendInt(append(b, `,"version":"`...), a.Version, 10), '"')
	}
	if len(a.GAAreas) > 0 {
		b = append(b, `,"`+name("ga_areas", "gaAreas")+`":[`...)
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
	b = appendJSONString(append(b, `,"`+name("layout_etag", "layoutEtag")+`":`...), a.LayoutETag)
	if offset != 0 {
		b = strconv.AppendInt(append(b, `,"`+name("availability_offset", "availabilityOffset")+`":`...), int64(int32(offset)), 10)
	}
	if count != 0 {
		b = strconv.AppendInt(append(b, `,"`+name("availability_count", "availabilityCount")+`":`...), int64(int32(count)), 10)
	}
	b = append(b, `,"`+name("availability_only", "availabilityOnly")+`":true`...)
	// A trip with stops: the journey (fields 14 and 15, decision 0354).
	if a.FromStopID != "" {
		b = appendJSONString(append(b, `,"`+name("from_stop_id", "fromStopId")+`":`...), a.FromStopID)
	}
	if a.ToStopID != "" {
		b = appendJSONString(append(b, `,"`+name("to_stop_id", "toStopId")+`":`...), a.ToStopID)
	}
	return append(b, '}')
}

// availabilityProto is the availability-only answer in the binary
// encoding, as the RPC's codec writes it (seatMapAnswer's message).
func availabilityProto(a booking.MapAvailability, states []byte, offset, count int) []byte {
	resp := &seatmapv1.GetSeatMapResponse{ShowId: a.ShowID, Currency: a.Currency, Availability: states,
		SeatCount: int32(a.SeatCount), Version: a.Version, LayoutEtag: a.LayoutETag,
		AvailabilityOffset: int32(offset), AvailabilityCount: int32(count), AvailabilityOnly: true}
	for _, g := range a.GAAreas {
		resp.GaAreas = append(resp.GaAreas, &seatmapv1.GaArea{Name: g.Name, Remaining: int32(g.Remaining)})
	}
	b, err := proto.Marshal(resp)
	if err != nil {
		// Only invalid UTF-8 in a string field fails; the RPC path would
		// fail it too.
		return nil
	}
	return b
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
