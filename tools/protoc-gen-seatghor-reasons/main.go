// Command protoc-gen-seatghor-reasons writes everything that lists the API's
// error reasons from their one declaration, the Reason enum of
// proto/seatghor/errors/v1/reason.proto (decision 0318):
//
//   - server/fault/reasons.gen.go: the reasons as fault.Reason constants and
//     the list of them, for the domain packages;
//   - server/api/reasons.gen.go: the Connect code of each, the edge's table;
//   - docs/errors.md: the table partners read, with the prose of
//     errors.md.tmpl around it;
//   - clients/go/seatghor/reasons.gen.go and clients/ts/src/reasons.gen.ts:
//     the reasons of both SDKs, grouped by the typed error that carries them.
//
// A reason's word is its value's name without REASON_; the value's leading
// comment says when it is sent, its (seatghor.errors.v1.spec) option gives
// the code, what the client does and the SDKs' error class. It needs
// `strategy: all` and writes paths from the repository's root (out: .). Run
// by scripts/generate.sh through buf.gen.yaml.
package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/format"
	"regexp"
	"strings"
	"text/template"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// The declaration this reads.
const (
	reasonEnum = "seatghor.errors.v1.Reason"
	specOption = "seatghor.errors.v1.spec"
	prefix     = "REASON_"
)

//go:embed errors.md.tmpl
var docTemplate string

func main() {
	protogen.Options{}.Run(generate)
}

// reason is one value of the enum, as every output needs it.
type reason struct {
	Word   string // SEATS_UNAVAILABLE
	Go     string // SeatsUnavailable
	Code   string // aborted
	HTTP   int
	When   string
	Action string
	Class  string // the ErrorClass value's name without ERROR_CLASS_; "" for UNSPECIFIED
}

// httpStatus is the HTTP status of each Connect code, as the Connect protocol
// and the REST routes answer it.
var httpStatus = map[string]int{
	"canceled": 499, "unknown": 500, "invalid_argument": 400, "deadline_exceeded": 504, "not_found": 404,
	"already_exists": 409, "permission_denied": 403, "resource_exhausted": 429, "failed_precondition": 400,
	"aborted": 409, "out_of_range": 400, "unimplemented": 501, "internal": 500, "unavailable": 503,
	"data_loss": 500, "unauthenticated": 401,
}

// singles are the classes of one reason each; the SDKs' code names those
// reasons itself, so their words are fixed here too.
var singles = map[string]string{
	"SEATS_UNAVAILABLE": "SEATS_UNAVAILABLE",
	"STILL_RUNNING":     "IDEMPOTENCY_KEY_IN_PROGRESS",
	"RATE_LIMITED":      "RATE_LIMITED",
}

var word = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

func generate(gen *protogen.Plugin) error {
	gen.SupportedFeatures = uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL)
	reasons, err := read(gen)
	if err != nil {
		return err
	}
	for _, out := range []struct {
		path string
		body func([]reason) ([]byte, error)
	}{
		{"server/fault/reasons.gen.go", faultGo},
		{"server/api/reasons.gen.go", apiGo},
		{"clients/go/seatghor/reasons.gen.go", sdkGo},
		{"clients/ts/src/reasons.gen.ts", sdkTS},
		{"docs/errors.md", doc},
	} {
		b, err := out.body(reasons)
		if err != nil {
			return fmt.Errorf("%s: %w", out.path, err)
		}
		if _, err := gen.NewGeneratedFile(out.path, "").Write(b); err != nil {
			return err
		}
	}
	return nil
}

// read finds the Reason enum and reads every value but the zero one.
func read(gen *protogen.Plugin) ([]reason, error) {
	var (
		enum *protogen.Enum
		spec protoreflect.ExtensionDescriptor
	)
	for _, f := range gen.Files {
		for _, e := range f.Enums {
			if e.Desc.FullName() == reasonEnum {
				enum = e
			}
		}
		if x := f.Desc.Extensions().ByName(protoreflect.FullName(specOption).Name()); x != nil && x.FullName() == specOption {
			spec = x
		}
	}
	if enum == nil || spec == nil {
		return nil, fmt.Errorf("no %s and %s among the files: is proto/seatghor/errors/v1/reason.proto an input?", reasonEnum, specOption)
	}
	// The option is not compiled into this program: read it through a
	// dynamic type made from its descriptor.
	xt := dynamicpb.NewExtensionType(spec)
	types := new(protoregistry.Types)
	if err := types.RegisterExtension(xt); err != nil {
		return nil, err
	}
	var (
		out    []reason
		codeOf = map[string]string{}
	)
	for _, v := range enum.Values {
		name := string(v.Desc.Name())
		if v.Desc.Number() == 0 {
			continue
		}
		w, ok := strings.CutPrefix(name, prefix)
		if !ok || !word.MatchString(w) {
			return nil, fmt.Errorf("%s: not REASON_ and a word", name)
		}
		raw, err := proto.Marshal(v.Desc.Options())
		if err != nil {
			return nil, err
		}
		opts := &descriptorpb.EnumValueOptions{}
		if err := (proto.UnmarshalOptions{Resolver: types}).Unmarshal(raw, opts); err != nil {
			return nil, err
		}
		if !opts.ProtoReflect().Has(xt.TypeDescriptor()) {
			return nil, fmt.Errorf("%s has no (spec) option", name)
		}
		m := opts.ProtoReflect().Get(xt.TypeDescriptor()).Message()
		field := func(n string) protoreflect.Value { return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(n))) }
		r := reason{
			Word:   w,
			Go:     goName(w),
			Code:   field("code").String(),
			When:   comment(v.Comments.Leading),
			Action: oneLine(field("action").String()),
		}
		classNum := field("class").Enum()
		if classNum != 0 {
			cv := m.Descriptor().Fields().ByName("class").Enum().Values().ByNumber(classNum)
			r.Class = strings.TrimPrefix(string(cv.Name()), "ERROR_CLASS_")
		}
		var known bool
		if r.HTTP, known = httpStatus[r.Code]; !known {
			return nil, fmt.Errorf("%s: code %q is not a Connect code", name, r.Code)
		}
		if r.When == "" || r.Action == "" {
			return nil, fmt.Errorf("%s: say when it is sent (its comment) and what the client does (action)", name)
		}
		if strings.Contains(r.When+r.Action, "|") {
			return nil, fmt.Errorf("%s: a | would break docs/errors.md's table", name)
		}
		if s, single := singles[r.Class]; single && s != w {
			return nil, fmt.Errorf("%s: class %s is %s's alone (the SDKs name it)", name, r.Class, s)
		}
		if prev, dup := codeOf[w]; dup {
			return nil, fmt.Errorf("%s declared twice (%s)", w, prev)
		}
		codeOf[w] = r.Code
		out = append(out, r)
	}
	for class, w := range singles {
		if _, ok := codeOf[w]; !ok {
			return nil, fmt.Errorf("no reason %s of class %s, which the SDKs name", w, class)
		}
	}
	return out, nil
}

// comment is a leading comment as one line of text.
func comment(c protogen.Comments) string { return oneLine(string(c)) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// initialisms are the words Go spells in capitals.
var initialisms = map[string]string{"ID": "ID", "API": "API", "URL": "URL"}

// goName is a word in Go's spelling: API_KEY_NOT_FOUND → APIKeyNotFound.
func goName(w string) string {
	var b strings.Builder
	for _, part := range strings.Split(w, "_") {
		if i, ok := initialisms[part]; ok {
			b.WriteString(i)
			continue
		}
		b.WriteString(part[:1] + strings.ToLower(part[1:]))
	}
	return b.String()
}

// connectCode is a code's constant in connect-go: not_found → CodeNotFound.
func connectCode(code string) string { return "Code" + goName(strings.ToUpper(code)) }

const goHeader = "// Code generated by protoc-gen-seatghor-reasons from proto/seatghor/errors/v1/reason.proto. DO NOT EDIT.\n\n"

// goDoc writes text as // comment lines of at most about 100 columns.
func goDoc(b *bytes.Buffer, indent, text string) {
	line := indent + "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 100 && line != indent+"//" {
			b.WriteString(line + "\n")
			line = indent + "//"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}

func gofmt(b *bytes.Buffer) ([]byte, error) { return format.Source(b.Bytes()) }

func faultGo(rs []reason) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(goHeader + "package fault\n\n")
	b.WriteString("// The reasons, in the order of docs/errors.md; each comment says when it is sent.\nconst (\n")
	for _, r := range rs {
		goDoc(&b, "\t", r.Go+": "+r.When)
		fmt.Fprintf(&b, "\t%s Reason = %q\n", r.Go, r.Word)
	}
	b.WriteString(")\n\n// Reasons lists every Reason once, in the order of docs/errors.md.\nvar Reasons = []Reason{\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "\t%s,\n", r.Go)
	}
	b.WriteString("}\n")
	return gofmt(&b)
}

func apiGo(rs []reason) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(goHeader + "package api\n\nimport (\n\t\"connectrpc.com/connect\"\n\n\t\"github.com/seatghor/seatghor/server/fault\"\n)\n\n")
	b.WriteString("// reasonCodes is the Connect code of every reason: the edge answers a *fault.Error with\n// its reason's code (docs/errors.md).\nvar reasonCodes = map[fault.Reason]connect.Code{\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "\tfault.%s: connect.%s,\n", r.Go, connectCode(r.Code))
	}
	b.WriteString("}\n")
	return gofmt(&b)
}

// group is one list of the SDKs: the reasons one typed error carries.
type group struct {
	goVar, tsConst, doc string
	has                 func(reason) bool
}

var groups = []group{
	{"invalidArgumentReasons", "INVALID_ARGUMENT_REASONS", "The reasons of requests refused as wrong (code invalid_argument): an InvalidRequestError.",
		func(r reason) bool { return r.Class == "" && r.Code == "invalid_argument" }},
	{"queueTokenReasons", "QUEUE_TOKEN_REASONS", "The refusals of a waiting room's queue token (R-9.3): a QueueTokenError.",
		func(r reason) bool { return r.Class == "QUEUE_TOKEN" }},
	{"unauthenticatedReasons", "UNAUTHENTICATED_REASONS", "No caller, or a credential that is no good (code unauthenticated): an UnauthenticatedError.",
		func(r reason) bool { return r.Class == "" && r.Code == "unauthenticated" }},
	{"singleReasons", "", "The reasons with a type of their own: SeatsUnavailableError, StillRunningError, RateLimitedError.",
		func(r reason) bool { _, ok := singles[r.Class]; return ok }},
	{"otherReasons", "OTHER_REASONS", "The reasons with no class of their own (the plain error type).",
		func(r reason) bool { return r.Class == "" && r.Code != "invalid_argument" && r.Code != "unauthenticated" }},
}

func sdkGo(rs []reason) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(goHeader + "package seatghor\n\n")
	b.WriteString("// The reasons the API answers errors with (docs/errors.md). Act on an APIError's\n// Reason, never on its message. Each comment says when the reason is sent and\n// what to do.\nconst (\n")
	for i, r := range rs {
		if i > 0 {
			b.WriteString("\n")
		}
		goDoc(&b, "\t", fmt.Sprintf("Reason%s (%s): %s What to do: %s", r.Go, r.Code, r.When, r.Action))
		fmt.Fprintf(&b, "\tReason%s = %q\n", r.Go, r.Word)
	}
	b.WriteString(")\n\n// The reasons grouped by the typed error that carries them (Typed).\nvar (\n")
	for _, g := range groups {
		goDoc(&b, "\t", g.doc)
		fmt.Fprintf(&b, "\t%s = []string{\n", g.goVar)
		for _, r := range rs {
			if g.has(r) {
				fmt.Fprintf(&b, "\t\tReason%s,\n", r.Go)
			}
		}
		b.WriteString("\t}\n")
	}
	b.WriteString(")\n")
	return gofmt(&b)
}

func sdkTS(rs []reason) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by protoc-gen-seatghor-reasons from proto/seatghor/errors/v1/reason.proto. DO NOT EDIT.\n")
	b.WriteString("// The reasons the API answers errors with (docs/errors.md), grouped by the\n// class that carries them; errors.ts builds the classes and types on them.\n")
	for _, g := range groups {
		if g.tsConst == "" {
			continue // errors.ts names the single reasons with their classes
		}
		fmt.Fprintf(&b, "\n/** %s */\nexport const %s = [\n", g.doc, g.tsConst)
		for _, r := range rs {
			if g.has(r) {
				fmt.Fprintf(&b, "  %q,\n", r.Word)
			}
		}
		b.WriteString("] as const;\n")
	}
	return b.Bytes(), nil
}

func doc(rs []reason) ([]byte, error) {
	t, err := template.New("errors.md").Parse(docTemplate)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, rs)
	return b.Bytes(), err
}
