package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"buf.build/go/protovalidate"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// operation is what the image says of one RPC that gnostic cannot.
type operation struct {
	needsKey bool   // neither NO_SIDE_EFFECTS nor IDEMPOTENT
	answer   string // the full name of the response_body field's message, if any
	list     bool   // the response_body field is repeated: the answer is an array
	input    string // the request message's full name
}

// protos is the buf image of proto/: the RPCs and their messages, and the
// protovalidate rules the server checks every request with.
type protos struct {
	ops       map[string]operation // by gnostic's operationId (Service_Method)
	files     *protoregistry.Files
	validator protovalidate.Validator
}

// readImage reads the image `buf build` wrote. Its options carry the
// buf.validate rules as known extensions (this program links them).
func readImage(image string) (*protos, error) {
	b, err := os.ReadFile(image)
	if err != nil {
		return nil, err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", image, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", image, err)
	}
	validator, err := protovalidate.New()
	if err != nil {
		return nil, err
	}
	p := &protos{ops: map[string]operation{}, files: files, validator: validator}
	messages := map[string]*descriptorpb.DescriptorProto{}
	for _, f := range set.GetFile() {
		for _, m := range f.GetMessageType() {
			messages[f.GetPackage()+"."+m.GetName()] = m
		}
	}
	for _, f := range set.GetFile() {
		if !strings.HasPrefix(f.GetPackage(), "seatghor.") {
			continue
		}
		for _, s := range f.GetService() {
			for _, m := range s.GetMethod() {
				level := m.GetOptions().GetIdempotencyLevel()
				op := operation{
					// A public RPC's caller has no identity to keep a key for.
					needsKey: level != descriptorpb.MethodOptions_NO_SIDE_EFFECTS && level != descriptorpb.MethodOptions_IDEMPOTENT &&
						!slices.Contains(anonymous(), s.GetName()+"_"+m.GetName()),
					input:    strings.TrimPrefix(m.GetInputType(), "."),
				}
				rule, _ := proto.GetExtension(m.GetOptions(), annotations.E_Http).(*annotations.HttpRule)
				if body := rule.GetResponseBody(); body != "" {
					out := messages[strings.TrimPrefix(m.GetOutputType(), ".")]
					i := slices.IndexFunc(out.GetField(), func(f *descriptorpb.FieldDescriptorProto) bool { return f.GetName() == body })
					if i < 0 || out.GetField()[i].GetType() != descriptorpb.FieldDescriptorProto_TYPE_MESSAGE {
						return nil, fmt.Errorf("%s.%s: response_body %q is no message field of %s", s.GetName(), m.GetName(), body, m.GetOutputType())
					}
					op.answer = strings.TrimPrefix(out.GetField()[i].GetTypeName(), ".")
					op.list = out.GetField()[i].GetLabel() == descriptorpb.FieldDescriptorProto_LABEL_REPEATED
				}
				p.ops[s.GetName()+"_"+m.GetName()] = op
			}
		}
	}
	return p, nil
}

// required lists the fields of message name that a request cannot leave
// out: those protovalidate refuses when unset. It validates the empty
// message and keeps the top-level fields it complains of, so "required",
// a minimum length, "greater than 0" and a minimum count all count, exactly
// as the server checks them. Rules of the whole message (CEL across
// fields, a oneof that needs one member) name no single field and are left
// to the descriptions. A name that is not a message of proto/ (gnostic's
// own schemas) has none.
func (p *protos) required(name string) ([]string, error) {
	d, err := p.files.FindDescriptorByName(protoreflect.FullName(name))
	if errors.Is(err, protoregistry.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, nil
	}
	err = p.validator.Validate(dynamicpb.NewMessage(md))
	var verr *protovalidate.ValidationError
	if err == nil || !errors.As(err, &verr) {
		return nil, err
	}
	var fields []string
	for _, v := range verr.Violations {
		path := v.Proto.GetField().GetElements()
		if len(path) != 1 || v.Proto.GetForKey() {
			continue
		}
		// A oneof that needs a member is named like a field.
		if f := path[0].GetFieldName(); md.Fields().ByName(protoreflect.Name(f)) != nil && !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	return fields, nil
}
