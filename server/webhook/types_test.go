package webhook

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/seatghor/seatghor/gen/seatghor/events/v1" // the outbox events
)

// TestEventTypesNameRealFields: every outbox event a webhook carries
// exists, and every field it omits is one of that event's, so a renamed
// field cannot slip a staff id back into partners' payloads (decision 0285).
func TestEventTypesNameRealFields(t *testing.T) {
	for _, et := range eventTypes {
		mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(et.Outbox))
		if err != nil {
			t.Errorf("%s: outbox event %s: %v", et.Name, et.Outbox, err)
			continue
		}
		for _, f := range et.Omit {
			if mt.Descriptor().Fields().ByName(protoreflect.Name(f)) == nil {
				t.Errorf("%s omits %q, which %s does not have", et.Name, f, et.Outbox)
			}
		}
	}
}
