package api

import (
	"bufio"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// TestReadmeListsEveryRESTRoute keeps the README's REST table true: its
// rows are exactly the REST routes of the services the server registers
// (their google.api.http rules), each with its RPC.
func TestReadmeListsEveryRESTRoute(t *testing.T) {
	var registered []string
	for _, s := range services(Config{}, nil) {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(s.name))
		if err != nil {
			t.Fatalf("service %s: %v", s.name, err)
		}
		sd := d.(protoreflect.ServiceDescriptor)
		for i := range sd.Methods().Len() {
			m := sd.Methods().Get(i)
			rule, _ := proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule)
			if rule == nil {
				continue
			}
			for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
				registered = append(registered, route(r)+" "+string(sd.Name())+"."+string(m.Name()))
			}
		}
	}
	sort.Strings(registered)
	documented := readmeRoutes(t, "../../README.md")
	require.Equal(t, registered, documented, "the README's REST table (expected: the routes the server registers)")
}

func route(r *annotations.HttpRule) string {
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return "GET " + p.Get
	case *annotations.HttpRule_Post:
		return "POST " + p.Post
	case *annotations.HttpRule_Put:
		return "PUT " + p.Put
	case *annotations.HttpRule_Patch:
		return "PATCH " + p.Patch
	case *annotations.HttpRule_Delete:
		return "DELETE " + p.Delete
	case *annotations.HttpRule_Custom:
		return p.Custom.GetKind() + " " + p.Custom.GetPath()
	}
	return "?"
}

// readmeRow is a row of the README's REST table: | `GET /v1/x` | Svc.Method … |
var readmeRow = regexp.MustCompile("^\\s*\\| `([A-Z]+ /v1/[^`]*)` \\| ([A-Za-z]+\\.[A-Za-z]+)")

func readmeRoutes(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := readmeRow.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, strings.TrimSpace(m[1])+" "+m[2])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
