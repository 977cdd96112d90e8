package api

import (
	"bufio"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeListsEveryRESTRoute keeps the README's REST table true: its
// rows are exactly the REST routes of the services the server registers
// (their google.api.http rules), each with its RPC.
func TestReadmeListsEveryRESTRoute(t *testing.T) {
	var names []string
	for _, s := range services(Config{}, nil) {
		names = append(names, s.name)
	}
	var registered []string
	for _, r := range restTemplates(names) {
		registered = append(registered, r.method+" "+strings.Join(r.segments, "/")+" "+r.rpc)
	}
	sort.Strings(registered)
	documented := readmeRoutes(t, "../../README.md")
	require.Equal(t, registered, documented, "the README's REST table (expected: the routes the server registers)")
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
