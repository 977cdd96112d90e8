package ratelimit

import (
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/gen/openapi"
)

// TestOpenAPIDeclares429WhereLimited: the REST routes whose description
// declares 429 (RATE_LIMITED) are exactly those of the procedures the
// limiter counts, every limit on.
func TestOpenAPIDeclares429WhereLimited(t *testing.T) {
	var limited []string
	for _, r := range Defaults().rules() {
		// "/seatghor.booking.v1.HoldService/CreateHold" → "HoldService_CreateHold".
		service, method, _ := strings.Cut(r.procedure[strings.LastIndex(r.procedure[:strings.LastIndex(r.procedure, "/")], ".")+1:], "/")
		if id := service + "_" + method; !slices.Contains(limited, id) {
			limited = append(limited, id)
		}
	}
	require.Len(t, Defaults().rules(), 6, "every limit of Defaults is on")
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
