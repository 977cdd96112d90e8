// Command printproto writes import-only copies of third-party .proto files
// that the product protos import, printed from the file descriptors that the
// upstream Go packages register at init:
//
//   - buf/validate/validate.proto from
//     buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate
//   - google/api/annotations.proto and google/api/http.proto from
//     google.golang.org/genproto/googleapis/api/annotations
//
// The buf Schema Registry is not reachable from our machines, so buf.yaml
// cannot use `deps:`. Printing from the descriptors that our Go binaries
// link guarantees the .proto sources match the registered descriptors
// exactly (same package, same go_package, same extension numbers).
//
// The output directory is its own buf module (proto-imports/) that is never a
// `buf generate` input: generating Go code for these files would register
// them a second time and panic at init.
//
// Regenerate (from the repository root):
//
//	go run -C tools ./printproto -out ../proto-imports
//
// (`go run -modfile=tools/go.mod ./tools/printproto` does NOT work: tools/
// has its own go.mod, so with -modfile the module root stays at the
// repository root and ./tools is excluded from it. `go run -C tools` runs
// inside the tools module, hence the ../ in -out.)
//
// To verify (e.g. in CI) that the checked-in copies are current, add -check:
// it writes nothing and exits 1 if any file differs.
//
// The versions printed are the ones selected in tools/go.mod. The output is
// deterministic, so running it twice gives identical files.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jhump/protoreflect/v2/protoprint"
	"google.golang.org/protobuf/reflect/protoreflect"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	annotationspb "google.golang.org/genproto/googleapis/api/annotations"
)

const protovalidateNotice = `Copyright 2023-2025 Buf Technologies, Inc.`

const googleapisNotice = `Copyright 2025 Google LLC`

// source describes one file to print.
type source struct {
	fd       protoreflect.FileDescriptor
	notice   string // copyright line
	upstream string // upstream project, for the header
	goModule string // Go module the descriptor came from
}

func main() {
	out := flag.String("out", "proto-imports", "output root directory")
	check := flag.Bool("check", false, "only compare with the files in -out; exit 1 if any differs")
	flag.Parse()

	sources := []source{
		{
			fd:       validatepb.File_buf_validate_validate_proto,
			notice:   protovalidateNotice,
			upstream: "github.com/bufbuild/protovalidate",
			goModule: "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go",
		},
		{
			fd:       annotationspb.File_google_api_annotations_proto,
			notice:   googleapisNotice,
			upstream: "github.com/googleapis/googleapis",
			goModule: "google.golang.org/genproto/googleapis/api",
		},
		{
			fd:       annotationspb.File_google_api_http_proto,
			notice:   googleapisNotice,
			upstream: "github.com/googleapis/googleapis",
			goModule: "google.golang.org/genproto/googleapis/api",
		},
	}

	printer := &protoprint.Printer{}
	stale := false
	for _, s := range sources {
		content, err := render(printer, s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "printproto: %s: %v\n", s.fd.Path(), err)
			os.Exit(1)
		}
		path := filepath.Join(*out, filepath.FromSlash(s.fd.Path()))
		if *check {
			if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, content) {
				fmt.Fprintf(os.Stderr, "printproto: %s is missing or out of date\n", path)
				stale = true
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "printproto: %v\n", err)
			os.Exit(1)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "printproto: %v\n", err)
			os.Exit(1)
		}
	}
	if stale {
		os.Exit(1)
	}
}

// render returns the license header followed by the printed descriptor.
func render(printer *protoprint.Printer, s source) ([]byte, error) {
	var body bytes.Buffer
	if err := printer.PrintProtoFile(s.fd, &body); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(header(s))
	buf.WriteString("\n")
	buf.Write(body.Bytes())
	return buf.Bytes(), nil
}

func header(s source) string {
	lines := []string{
		s.notice,
		"",
		`Licensed under the Apache License, Version 2.0 (the "License");`,
		"you may not use this file except in compliance with the License.",
		"You may obtain a copy of the License at",
		"",
		"    http://www.apache.org/licenses/LICENSE-2.0",
		"",
		"Unless required by applicable law or agreed to in writing, software",
		`distributed under the License is distributed on an "AS IS" BASIS,`,
		"WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.",
		"See the License for the specific language governing permissions and",
		"limitations under the License.",
		"",
		"Upstream: " + s.upstream + " (" + s.fd.Path() + ").",
		"",
		"IMPORT-ONLY: printed by tools/printproto from the descriptor registered",
		"at init by the Go module " + s.goModule + ".",
		"Do not edit; never generate code from it. Regenerate with:",
		"  go run -C tools ./printproto -out ../proto-imports",
	}
	var b strings.Builder
	for _, l := range lines {
		if l == "" {
			b.WriteString("//\n")
			continue
		}
		b.WriteString("// " + l + "\n")
	}
	return b.String()
}
