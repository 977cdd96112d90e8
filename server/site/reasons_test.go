package site_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// TestEveryErrorReasonHasWords: every reason of docs/errors.md's table has
// a sentence in English and one in Bengali in the site (src/reasons.ts;
// decision 0303), so a reason added to the API without words for the buyer
// fails the build, and no sentence is left for a reason that is gone.
func TestEveryErrorReasonHasWords(t *testing.T) {
	doc, err := os.ReadFile("../../docs/errors.md")
	require.NoError(t, err)
	row := regexp.MustCompile("^\\| `[a-z_]+` \\| \\d+ \\| `([A-Z0-9_]+)` \\|")
	var documented []string
	for _, line := range strings.Split(string(doc), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			documented = append(documented, m[1])
		}
	}
	require.Greater(t, len(documented), 40, "reasons read from docs/errors.md")

	// The buyer's reasons in src/reasons.ts, the staff's in
	// src/staffreasons.ts (a bundle of the staff's pages): each once.
	en, bn := map[string]string{}, map[string]string{}
	for _, f := range []struct{ file, en, bn string }{
		{"reasons.ts", "reasonsEn", "reasonsBn"}, {"staffreasons.ts", "staffReasonsEn", "staffReasonsBn"},
	} {
		src, err := os.ReadFile("../../clients/web/src/" + f.file)
		require.NoError(t, err)
		for name, into := range map[string]map[string]string{f.en: en, f.bn: bn} {
			for reason, words := range sentences(t, string(src), name) {
				require.NotContains(t, into, reason, "%s has words in both files", reason)
				into[reason] = words
			}
		}
	}
	for _, reason := range documented {
		require.NotEmpty(t, en[reason], "%s has no English sentence in src/reasons.ts or src/staffreasons.ts", reason)
		require.True(t, hasBengali(bn[reason]), "%s has no Bengali sentence: %q", reason, bn[reason])
	}
	for _, words := range []map[string]string{en, bn} {
		for reason := range words {
			require.Contains(t, documented, reason, "the site words a reason docs/errors.md does not list")
		}
	}
}

// sentences reads `REASON: "sentence",` lines of the object named name.
func sentences(t *testing.T, src, name string) map[string]string {
	t.Helper()
	start := strings.Index(src, "export const "+name+":")
	require.GreaterOrEqual(t, start, 0, "no %s", name)
	body := src[start:]
	end := strings.Index(body, "\n};")
	require.Positive(t, end, "the end of %s", name)
	line := regexp.MustCompile(`^\s+([A-Z0-9_]+): "(.*)",$`)
	out := map[string]string{}
	for _, l := range strings.Split(body[:end], "\n")[1:] {
		m := line.FindStringSubmatch(l)
		require.NotNil(t, m, "%s: a line that is not `REASON: \"sentence\",`: %q", name, l)
		out[m[1]] = m[2]
	}
	return out
}

func hasBengali(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Bengali, r) {
			return true
		}
	}
	return false
}
