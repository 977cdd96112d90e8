package api

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// RequestIDHeader carries a request's id in and out of the public port.
const RequestIDHeader = "X-Request-Id"

type requestKey struct{}

// requestInfo is what the access log learns while a request runs: its id,
// and, for an RPC, the procedure and the Connect code the metrics
// interceptor saw.
type requestInfo struct {
	id        string
	procedure string
	code      string
}

// RequestID is the id of the API request ctx belongs to, "" outside one.
func RequestID(ctx context.Context) string {
	if ri, ok := ctx.Value(requestKey{}).(*requestInfo); ok {
		return ri.id
	}
	return ""
}

// ContextWithRequestID is ctx carrying request id id, for work that
// continues a request outside the API's handler.
func ContextWithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestKey{}, &requestInfo{id: id})
}

// saneRequestID accepts a caller's id when it is short and plain, so a log
// line never carries a caller's arbitrary text (decision 0150).
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune("-_.:", c):
		default:
			return false
		}
	}
	return true
}

// LogHandler wraps h so that every record logged with a request's context
// carries its request_id. Wrapping twice adds it once.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(requestIDHandler); ok {
		return h
	}
	return requestIDHandler{h}
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher: nothing to report
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accessLog gives every request of the public port an id (the caller's
// X-Request-Id when sane, else a new one), echoes it, puts it in the
// request's context for the logs, and logs one line per request at info
// . The probes /livez and /readyz are not logged: they are polled.
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !saneRequestID(id) {
			id = rand.Text()
		}
		w.Header().Set(RequestIDHeader, id)
		ri := &requestInfo{id: id}
		ctx := context.WithValue(r.Context(), requestKey{}, ri)
		if r.URL.Path == "/livez" || r.URL.Path == "/readyz" {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		// Taken before: the REST transcoder rewrites the URL in place.
		method, path := r.Method, r.URL.Path
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(ctx))
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		attrs := []slog.Attr{slog.String("method", method), slog.String("path", path), slog.Int("status", sw.status)}
		if ri.procedure != "" {
			attrs = append(attrs, slog.String("procedure", ri.procedure), slog.String("code", ri.code))
		}
		attrs = append(attrs, slog.Duration("duration", time.Since(start)))
		log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
	})
}

// noteRPC records an RPC's procedure and code for the access log.
func noteRPC(ctx context.Context, procedure, code string) {
	if ri, ok := ctx.Value(requestKey{}).(*requestInfo); ok {
		ri.procedure, ri.code = procedure, code
	}
}
