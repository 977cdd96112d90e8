package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"
)

// restTemplate is the path of one REST route, split at "/": a literal
// segment, or the field a variable segment fills ("{show_id}" → show_id).
type restTemplate struct {
	method   string
	segments []string
	fields   map[int]string
	// input is the request message; body is the route's body ("*": every
	// field comes from the body, none from the query).
	input protoreflect.MessageDescriptor
	body  string
	// rpc is the route's RPC, "Service.Method".
	rpc string
}

// restTemplates reads the REST routes of the named services from their
// google.api.http options.
func restTemplates(services []string) []restTemplate {
	var out []restTemplate
	for _, name := range services {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			continue
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			continue
		}
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
			if rule == nil {
				continue
			}
			for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
				method, path := "GET", r.GetGet()
				switch {
				case r.GetPost() != "":
					method, path = "POST", r.GetPost()
				case r.GetPut() != "":
					method, path = "PUT", r.GetPut()
				case r.GetPatch() != "":
					method, path = "PATCH", r.GetPatch()
				case r.GetDelete() != "":
					method, path = "DELETE", r.GetDelete()
				}
				if path == "" {
					continue
				}
				t := restTemplate{method: method, segments: strings.Split(path, "/"), fields: map[int]string{},
					input: md.Input(), body: r.GetBody(), rpc: string(sd.Name()) + "." + string(md.Name())}
				for j, s := range t.segments {
					if v, ok := strings.CutPrefix(s, "{"); ok {
						v, _, _ = strings.Cut(v, "}")
						v, _, _ = strings.Cut(v, "=")
						t.fields[j] = v
					}
				}
				out = append(out, t)
			}
		}
	}
	return out
}

// match is the route a request's method and path segments take, or nil.
func match(templates []restTemplate, method string, segments []string) *restTemplate {
next:
	for k := range templates {
		t := &templates[k]
		if t.method != method || len(t.segments) != len(segments) {
			continue
		}
		for j, s := range t.segments {
			if _, isVar := t.fields[j]; !isVar {
				if s != segments[j] {
					continue next
				}
			} else if _, verb, ok := strings.Cut(s, "}:"); ok && !strings.HasSuffix(segments[j], ":"+verb) {
				continue next
			}
		}
		return t
	}
	return nil
}

// queryField tells whether a query parameter names a field the route takes
// from the query: a dotted path of proto or JSON names.
func (t *restTemplate) queryField(key string) bool {
	if t.body == "*" {
		return false
	}
	md := t.input
	parts := strings.Split(key, ".")
	for i, p := range parts {
		fd := md.Fields().ByName(protoreflect.Name(p))
		if fd == nil {
			fd = md.Fields().ByJSONName(p)
		}
		if fd == nil {
			return false
		}
		if i < len(parts)-1 {
			if fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() {
				return false
			}
			md = fd.Message()
		}
	}
	return true
}

// restInput refuses a REST request whose path or query parameters are not
// UTF-8 text: every REST parameter fills a string or number field, and
// protobuf strings are UTF-8 (the transcoder would answer "internal"). The
// answer is invalid_argument naming the field, in the transcoder's own
// error shape, with the error table's ErrorInfo and BadRequest.
func restInput(templates []restTemplate, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segments := strings.Split(r.URL.EscapedPath(), "/")
		for i, s := range segments {
			if v, err := url.PathUnescape(s); err == nil && !utf8.ValidString(v) {
				name := "path"
				if t := match(templates, r.Method, segments); t != nil && t.fields[i] != "" {
					name = t.fields[i]
				}
				writeRESTError(w, r, invalidField(name, "%s: not UTF-8 text", name))
				return
			}
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			writeRESTError(w, r, invalidField("query", "the query string is malformed: %v", err))
			return
		}
		route := match(templates, r.Method, segments)
		for k, vs := range q {
			if !utf8.ValidString(k) {
				name := strings.ToValidUTF8(k, "\uFFFD")
				writeRESTError(w, r, invalidField(name, "parameter %q: its name is not UTF-8 text", name))
				return
			}
			if route != nil && !route.queryField(k) {
				writeRESTError(w, r, invalidField(k, "%s: this route takes no such query parameter", k))
				return
			}
			for _, v := range vs {
				if !utf8.ValidString(v) {
					writeRESTError(w, r, invalidField(k, "%s: not UTF-8 text", k))
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// writeRESTError writes err, answered by the error table, as the REST
// routes answer errors: a google.rpc.Status in JSON.
func writeRESTError(w http.ResponseWriter, r *http.Request, err error) {
	var ce *connect.Error
	if !asConnect(toConnect(r.Context(), nil, err), &ce) {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	stat := &status.Status{Code: int32(ce.Code()), Message: ce.Message()}
	for _, d := range ce.Details() {
		stat.Details = append(stat.Details, &anypb.Any{TypeUrl: "type.googleapis.com/" + d.Type(), Value: d.Bytes()})
	}
	b, merr := protojson.MarshalOptions{UseProtoNames: true}.Marshal(stat) // as the transcoder answers
	if merr != nil {
		http.Error(w, ce.Message(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
}

func asConnect(err error, target **connect.Error) bool {
	ce, ok := err.(*connect.Error)
	*target = ce
	return ok
}

// textInterceptor refuses a request with a NUL character in any text field:
// PostgreSQL text cannot hold one, so the database would answer an error the
// caller caused. It runs after validation, naming the field like it.
type textInterceptor struct{}

func (textInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if m, ok := req.Any().(proto.Message); ok {
			if field := nulField(m.ProtoReflect(), ""); field != "" {
				return nil, invalidField(field, "%s: text may not contain NUL characters", field)
			}
		}
		return next(ctx, req)
	}
}

func (textInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (textInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// nulField is the path of the first text field of m (or its messages) that
// holds a NUL, or "".
func nulField(m protoreflect.Message, prefix string) string {
	var found string
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := prefix + string(fd.Name())
		check := func(path string, v protoreflect.Value, kind protoreflect.Kind) bool {
			switch kind {
			case protoreflect.StringKind:
				if strings.ContainsRune(v.String(), 0) {
					found = path
				}
			case protoreflect.MessageKind, protoreflect.GroupKind:
				found = nulField(v.Message(), path+".")
			}
			return found == ""
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if !check(fmt.Sprintf("%s[%d]", name, i), l.Get(i), fd.Kind()) {
					return false
				}
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if strings.ContainsRune(k.String(), 0) {
					found = name
					return false
				}
				return check(fmt.Sprintf("%s[%q]", name, k.String()), mv, fd.MapValue().Kind())
			})
			return found == ""
		default:
			return check(name, v, fd.Kind())
		}
		return true
	})
	return found
}
