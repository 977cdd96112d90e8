package api

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/seatghor/seatghor/gen/openapi"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
)

// TestOpenAPIValidates: gen/openapi/openapi.yaml is a valid OpenAPI 3
// document (kin-openapi's validator), with the bearer scheme, the
// Idempotency-Key header and the error body.
func TestOpenAPIValidates(t *testing.T) {
	doc := loadOpenAPI(t)
	require.NoError(t, doc.Validate(context.Background()))
	require.Equal(t, "bearer", doc.Components.SecuritySchemes["apiKey"].Value.Scheme)
	require.Equal(t, "Idempotency-Key", doc.Components.Parameters["IdempotencyKey"].Value.Name)
	require.Contains(t, doc.Components.Schemas, "google.rpc.ErrorInfo")

	// The key is on the writes and not on the reads or IDEMPOTENT Join.
	hasKey := func(op *openapi3.Operation) bool {
		return slices.ContainsFunc(op.Parameters, func(p *openapi3.ParameterRef) bool {
			return p.Value != nil && p.Value.Name == "Idempotency-Key" && p.Value.In == "header"
		})
	}
	require.True(t, hasKey(doc.Paths.Find("/v1/holds").Post), "CreateHold")
	require.False(t, hasKey(doc.Paths.Find("/v1/holds/{hold_id}").Get), "GetHold")
	require.False(t, hasKey(doc.Paths.Find("/v1/shows/{show_id}/waiting-room:join").Post), "Join is IDEMPOTENT")
}

// TestOpenAPIListsEveryRESTRoute: the description has exactly the REST
// routes the server registers (their google.api.http rules), each as the
// operation of its RPC.
func TestOpenAPIListsEveryRESTRoute(t *testing.T) {
	var names []string
	for _, s := range services(Config{}, nil) {
		names = append(names, s.name)
	}
	var registered []string
	for _, r := range restTemplates(names) {
		registered = append(registered, r.method+" "+strings.Join(r.segments, "/")+" "+strings.Replace(r.rpc, ".", "_", 1))
	}
	var described []string
	for path, item := range loadOpenAPI(t).Paths.Map() {
		for method, op := range item.Operations() {
			described = append(described, method+" "+path+" "+op.OperationID)
		}
	}
	slices.Sort(registered)
	slices.Sort(described)
	require.NotEmpty(t, registered)
	require.Equal(t, registered, described, "gen/openapi/openapi.yaml (expected: the routes the server registers); run make generate")
}

// TestOpenAPIAnswers: each route's 200 answer is what REST sends: the
// response_body field's message when the rule names one (the Hold of
// CreateHold), else the whole response.
func TestOpenAPIAnswers(t *testing.T) {
	doc := loadOpenAPI(t)
	byOperation := map[string]string{} // the 200 schema's $ref, "[]" before it for an array
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			schema := op.Responses.Status(200).Value.Content.Get("application/json").Schema
			if schema.Value != nil && schema.Value.Type.Is("array") {
				byOperation[op.OperationID] = "[]" + schema.Value.Items.Ref
			} else {
				byOperation[op.OperationID] = schema.Ref
			}
		}
	}
	checked := 0
	for _, s := range services(Config{}, nil) {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(s.name))
		require.NoError(t, err)
		methods := d.(protoreflect.ServiceDescriptor).Methods()
		for i := range methods.Len() {
			m := methods.Get(i)
			rule, _ := proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule)
			if rule == nil {
				continue
			}
			want := "#/components/schemas/" + string(m.Output().FullName())
			if body := rule.GetResponseBody(); body != "" {
				f := m.Output().Fields().ByName(protoreflect.Name(body))
				want = "#/components/schemas/" + string(f.Message().FullName())
				if f.IsList() {
					want = "[]" + want
				}
			}
			op := string(m.Parent().Name()) + "_" + string(m.Name())
			require.Equal(t, want, byOperation[op], op)
			checked++
		}
	}
	require.Positive(t, checked)
}

func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openapi.YAML)
	require.NoError(t, err)
	return doc
}

// TestOpenAPISecurityMatchesTheServer: the operations whose security the
// description makes optional are exactly the RPCs the auth interceptor
// lets through without a credential (publicProcedures); every other
// operation requires the key (the document's default).
func TestOpenAPISecurityMatchesTheServer(t *testing.T) {
	doc := loadOpenAPI(t)
	require.Equal(t, openapi3.SecurityRequirements{{"apiKey": []string{}}}, doc.Security)
	var optional []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Security == nil {
				continue // the document's: the key
			}
			require.Equal(t, openapi3.SecurityRequirements{{}, {"apiKey": []string{}}}, *op.Security, op.OperationID)
			optional = append(optional, op.OperationID)
		}
	}
	var public []string
	for _, p := range publicProcedures() {
		public = append(public, operationID(p))
	}
	slices.Sort(optional)
	slices.Sort(public)
	require.Equal(t, public, optional)
}

// operationID is gnostic's operationId of a procedure:
// "/seatghor.booking.v1.HoldService/CreateHold" is
// "HoldService_CreateHold".
func operationID(procedure string) string {
	service, method, _ := strings.Cut(procedure[strings.LastIndex(procedure[:strings.LastIndex(procedure, "/")], ".")+1:], "/")
	return service + "_" + method
}

// TestOpenAPIErrorAnswers: every operation declares the errors it can
// answer as shared responses with the google.rpc.Status body: 400, 401
// and 403 everywhere, 404 where the route names something by its path,
// 409 exactly where a write takes an Idempotency-Key (a repeat still
// running), and a default for the rest; each has a summary.
func TestOpenAPIErrorAnswers(t *testing.T) {
	doc := loadOpenAPI(t)
	for name, r := range doc.Components.Responses {
		require.Equal(t, "#/components/schemas/google.rpc.Status",
			r.Value.Content.Get("application/json").Schema.Ref, "response %s", name)
	}
	require.NotNil(t, doc.Components.Responses["RateLimited"].Value.Headers["Retry-After"])
	checked := 0
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			require.NotEmpty(t, op.Summary, op.OperationID)
			ref := func(status string) string {
				if r := op.Responses.Value(status); r != nil {
					return r.Ref
				}
				return ""
			}
			require.Equal(t, "#/components/responses/BadRequest", ref("400"), op.OperationID)
			require.Equal(t, "#/components/responses/Unauthenticated", ref("401"), op.OperationID)
			require.Equal(t, "#/components/responses/PermissionDenied", ref("403"), op.OperationID)
			require.Equal(t, "#/components/responses/Error", ref("default"), op.OperationID)
			if slices.ContainsFunc(op.Parameters, func(p *openapi3.ParameterRef) bool { return p.Value.In == "path" }) {
				require.Equal(t, "#/components/responses/NotFound", ref("404"), op.OperationID)
			}
			hasKey := slices.ContainsFunc(op.Parameters, func(p *openapi3.ParameterRef) bool {
				return p.Value.Name == "Idempotency-Key"
			})
			require.Equal(t, hasKey, ref("409") == "#/components/responses/Conflict", op.OperationID)
			checked++
		}
	}
	require.Positive(t, checked)
}

// TestOpenAPIQueueTokenWhereTheWaitingRoomApplies: the Queue-Token header
// is declared on exactly the operation queueTokenInterceptor checks it on.
func TestOpenAPIQueueTokenWhereTheWaitingRoomApplies(t *testing.T) {
	var with []string
	for _, item := range loadOpenAPI(t).Paths.Map() {
		for _, op := range item.Operations() {
			if slices.ContainsFunc(op.Parameters, func(p *openapi3.ParameterRef) bool {
				return p.Value.Name == QueueTokenHeader && p.Value.In == "header" && !p.Value.Required
			}) {
				with = append(with, op.OperationID)
			}
		}
	}
	require.Equal(t, []string{operationID(bookingv1connect.HoldServiceCreateHoldProcedure)}, with)
}

// TestOpenAPIDescribesNoRepository: no description or summary sends a
// partner to the repository's files, decisions or issues.
func TestOpenAPIDescribesNoRepository(t *testing.T) {
	cites := regexp.MustCompile(`docs/|decisions?\s+\d{4}|issue\s+\d+|\.md\b|\b(?:proto|scripts|server)/`)
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if s, ok := c.(string); ok && (k == "description" || k == "summary") {
					require.False(t, cites.MatchString(s), "%s/%s: %q", at, k, s)
				}
				walk(c, at+"/"+k)
			}
		case []any:
			for _, c := range v {
				walk(c, at)
			}
		}
	}
	var doc any
	require.NoError(t, yaml.Unmarshal(openapi.YAML, &doc))
	walk(doc, "")
}
