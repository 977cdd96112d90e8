package validate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// knownVariables are the SEATGHOR_* names the binary reads: every one its
// configuration (cmd/seatghor) spells out. A deployment file that sets
// another is a typo the process would ignore.
func knownVariables(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	re := regexp.MustCompile(`"(SEATGHOR_[A-Z0-9_]+)"`)
	files, err := filepath.Glob("../../cmd/seatghor/*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			names[m[1]] = true
		}
	}
	require.NotEmpty(t, names)
	return names
}

func requireKnown(t *testing.T, known map[string]bool, where, name string) {
	t.Helper()
	require.True(t, known[name], "%s sets %s, which seatghor does not read (cmd/seatghor/config.go)", where, name)
}
