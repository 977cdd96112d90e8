package api

import (
	"errors"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// protoNamesJSON is a Connect JSON codec that writes proto field names
// (hold_id) instead of lowerCamelCase (holdId); it reads both.
type protoNamesJSON struct{}

func (protoNamesJSON) Name() string { return "json" }

func (protoNamesJSON) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, errors.New("json codec: not a protobuf message")
	}
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
}

func (protoNamesJSON) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return errors.New("json codec: not a protobuf message")
	}
	if len(data) == 0 {
		// An empty body is an empty message, as Connect's own codec has it.
		return nil
	}
	return protojson.UnmarshalOptions{DiscardUnknown: false}.Unmarshal(data, m)
}
