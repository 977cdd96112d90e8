package api

import (
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/seatghor/seatghor/gen/openapi"
	"github.com/seatghor/seatghor/server/ratelimit"
)

// TestOpenAPIDeclares429WhereLimited: the REST routes whose description
// declares 429 (RATE_LIMITED) are exactly those of the procedures the
// limiter counts (limitedAction), and every action the limiter knows is
// counted on some procedure.
func TestOpenAPIDeclares429WhereLimited(t *testing.T) {
	var limited []string
	actions := map[ratelimit.Action]bool{}
	protoregistry.GlobalFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(f.Package()), "seatghor.") {
			return true
		}
		for i := range f.Services().Len() {
			s := f.Services().Get(i)
			for j := range s.Methods().Len() {
				m := s.Methods().Get(j)
				if action, ok := limitedAction("/" + string(s.FullName()) + "/" + string(m.Name())); ok {
					actions[action] = true
					limited = append(limited, string(s.Name())+"_"+string(m.Name()))
				}
			}
		}
		return true
	})
	require.Equal(t, map[ratelimit.Action]bool{ratelimit.Hold: true, ratelimit.Pay: true, ratelimit.Join: true}, actions,
		"every action of the limiter is counted on a procedure")
	doc, err := openapi3.NewLoader().LoadFromData(openapi.YAML)
	require.NoError(t, err)
	var declared []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if r := op.Responses.Value("429"); r != nil {
				require.Equal(t, "#/components/responses/RateLimited", r.Ref, op.OperationID)
				declared = append(declared, op.OperationID)
			}
		}
	}
	slices.Sort(limited)
	slices.Sort(declared)
	require.Equal(t, limited, declared)
}
