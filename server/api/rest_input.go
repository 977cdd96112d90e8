package api

import (
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
			rule, _ := proto.GetExtension(sd.Methods().Get(i).Options(), annotations.E_Http).(*annotations.HttpRule)
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
				t := restTemplate{method: method, segments: strings.Split(path, "/"), fields: map[int]string{}}
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

// field names the route field that segment i of a request's path fills, or
// "" when no route of the method has a variable there.
func field(templates []restTemplate, method string, segments []string, i int) string {
next:
	for _, t := range templates {
		if t.method != method || len(t.segments) != len(segments) || t.fields[i] == "" {
			continue
		}
		for j, s := range t.segments {
			if _, isVar := t.fields[j]; !isVar && s != segments[j] {
				continue next
			}
		}
		return t.fields[i]
	}
	return ""
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
				name := field(templates, r.Method, segments, i)
				if name == "" {
					name = "path"
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
		for k, vs := range q {
			if !utf8.ValidString(k) {
				name := strings.ToValidUTF8(k, "\uFFFD")
				writeRESTError(w, r, invalidField(name, "parameter %q: its name is not UTF-8 text", name))
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
	b, merr := protojson.Marshal(stat)
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
