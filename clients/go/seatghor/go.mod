module github.com/seatghor/seatghor/clients/go/seatghor

// Go 1.24: iterators (1.23) and unencrypted HTTP/2 for gRPC over http://
// without golang.org/x/net (1.24). The dependencies are the oldest that
// build the generated code, so a partner's newer ones win (decision 0195).
go 1.24

require (
	buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go v1.36.12-20260825204119-511051f7f437.2
	connectrpc.com/connect v1.18.1
	// Only the reseller example and the tests verify webhooks with it; the
	// SDK's package does not import it (no dependencies of its own).
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
	google.golang.org/genproto/googleapis/api v0.0.0-20250324211829-b45e905df463
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250324211829-b45e905df463
	google.golang.org/protobuf v1.36.12
)
