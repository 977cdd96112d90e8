package api

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository, seen from this package.
const repoRoot = "../.."

// TestReadmeLayoutNamesEveryFolder keeps the README's "Repository layout"
// block true: every folder and file it names exists, and every product
// folder is named (or a folder inside it is). The product folders are
// every top-level folder, and the folders in server/, projections/,
// clients/ and cmd/ and internal/ (there, a folder of Go files, or each
// folder of a folder of them).
func TestReadmeLayoutNamesEveryFolder(t *testing.T) {
	named := readmeLayout(t, filepath.Join(repoRoot, "README.md"))
	for _, p := range named {
		matches, err := filepath.Glob(filepath.Join(repoRoot, placeholder.ReplaceAllString(p, "*")))
		require.NoError(t, err)
		assert.NotEmpty(t, matches, "the README's layout names %s, which does not exist", p)
	}
	for _, dir := range productFolders(t) {
		assert.True(t, slices.ContainsFunc(named, func(p string) bool {
			p = strings.TrimSuffix(p, "/")
			return p == dir || strings.HasPrefix(p, dir+"/")
		}), "the README's layout does not name %s/", dir)
	}
}

// placeholder is a path segment standing for any name: <area>.
var placeholder = regexp.MustCompile(`<[a-z]+>`)

// layoutLine is a line of the layout block: its indentation, the paths it
// names (separated by one space) and, after two spaces or more, what they
// are. A folder's path ends in "/"; an indented line names a folder
// inside the last less indented one.
var layoutLine = regexp.MustCompile(`^( *)(\S+(?: \S+)*?)(?: {2,}\S.*)?$`)

// readmeLayout reads the paths the layout block names, each from the
// repository's root.
func readmeLayout(t *testing.T, readme string) []string {
	b, err := os.ReadFile(readme)
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "\n## Repository layout\n")
	require.True(t, ok, "README.md has a Repository layout section")
	_, block, ok := strings.Cut(after, "```\n")
	require.True(t, ok, "the layout is a fenced block")
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok, "the layout block is closed")

	type parent struct {
		indent int
		path   string
	}
	var parents []parent
	var paths []string
	for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
		m := layoutLine.FindStringSubmatch(line)
		require.NotNil(t, m, "a layout line: %q", line)
		indent := len(m[1])
		for len(parents) > 0 && parents[len(parents)-1].indent >= indent {
			parents = parents[:len(parents)-1]
		}
		if indent > 0 {
			require.NotEmpty(t, parents, "an indented line with nothing above it: %q", line)
		}
		names := strings.Fields(m[2])
		for _, name := range names {
			p := name
			if len(parents) > 0 {
				p = parents[len(parents)-1].path + name
			}
			paths = append(paths, p)
		}
		if len(names) == 1 && strings.HasSuffix(names[0], "/") {
			parents = append(parents, parent{indent, paths[len(paths)-1]})
		}
	}
	require.NotEmpty(t, paths)
	return paths
}

// productFolders lists the folders the layout must name, from the repoRoot.
func productFolders(t *testing.T) []string {
	var out []string
	top := subfolders(t, ".")
	out = append(out, top...)
	for _, parent := range []string{"server", "projections", "clients", "cmd", "internal"} {
		for _, d := range subfolders(t, parent) {
			if parent == "internal" && !hasGo(t, d) {
				out = append(out, subfolders(t, d)...)
				continue
			}
			out = append(out, d)
		}
	}
	require.Contains(t, out, "server/api")
	return out
}

// subfolders lists the folders in dir (from the repoRoot) but hidden ones, test
// data and what builds and installs leave (bin/, node_modules/).
func subfolders(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(filepath.Join(repoRoot, dir))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() || strings.HasPrefix(n, ".") || n == "testdata" || n == "bin" || n == "node_modules" {
			continue
		}
		out = append(out, filepath.ToSlash(filepath.Join(dir, n)))
	}
	return out
}

func hasGo(t *testing.T, dir string) bool {
	m, err := filepath.Glob(filepath.Join(repoRoot, dir, "*.go"))
	require.NoError(t, err)
	return len(m) > 0
}

// TestDocsIndexListsEveryDocument keeps docs/README.md the index of docs/:
// it links every Markdown file there.
func TestDocsIndexListsEveryDocument(t *testing.T) {
	index, err := os.ReadFile(filepath.Join(repoRoot, "docs", "README.md"))
	require.NoError(t, err)
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	for _, d := range docs {
		name := filepath.Base(d)
		if name == "README.md" {
			continue
		}
		require.Contains(t, string(index), "]("+name+")", "docs/README.md links %s", name)
	}
}

// TestDocsLinksResolve: every relative link of the README and of docs/
// (the decision records too) leads to a file or folder that exists, and a
// link to a heading (#anchor) of a Markdown file to one of its headings,
// as GitHub names them.
func TestDocsLinksResolve(t *testing.T) {
	pages := []string{"README.md", "projections/README.md", "clients/ts/README.md", "clients/go/seatghor/README.md"}
	for _, pattern := range []string{"docs/*.md", "docs/decisions/*.md"} {
		m, err := filepath.Glob(filepath.Join(repoRoot, pattern))
		require.NoError(t, err)
		for _, p := range m {
			rel, err := filepath.Rel(repoRoot, p)
			require.NoError(t, err)
			pages = append(pages, filepath.ToSlash(rel))
		}
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		text := markdownText(t, page)
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue // https:, mailto:
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.ToSlash(filepath.Join(filepath.Dir(page), path))
			}
			_, err := os.Stat(filepath.Join(repoRoot, file))
			require.NoError(t, err, "%s links %s, which does not exist", page, target)
			if anchor != "" && strings.HasSuffix(file, ".md") {
				require.Contains(t, headingAnchors(markdownText(t, file)), anchor, "%s links %s, which is no heading of %s", page, target, file)
			}
		}
	}
}

// markdownText is a Markdown file without its fenced code blocks, where
// brackets and # lines are code, not links and headings.
func markdownText(t *testing.T, page string) string {
	b, err := os.ReadFile(filepath.Join(repoRoot, page))
	require.NoError(t, err)
	return regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(b), "")
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, spaces to hyphens, only letters, marks, digits, hyphens and
// underscores kept.
func headingAnchors(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^#+ (.*)$`).FindAllStringSubmatch(text, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(m[1])) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}
