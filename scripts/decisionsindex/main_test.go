package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// TestTheIndexIsGeneratedFromTheRecords: docs/decisions/README.md is what
// the records and index.txt give (make check-generate says the same, later),
// and it has one row for every record file, under a band.
func TestTheIndexIsGeneratedFromTheRecords(t *testing.T) {
	idx, err := load(os.DirFS("../../docs/decisions"))
	require.NoError(t, err)
	readme, err := os.ReadFile("../../docs/decisions/README.md")
	require.NoError(t, err)
	require.Equal(t, string(idx.render()), string(readme), "docs/decisions/README.md is stale: run bash scripts/generate.sh (or go run ./scripts/decisionsindex)")

	files, err := os.ReadDir("../../docs/decisions")
	require.NoError(t, err)
	row := regexp.MustCompile(`(?m)^\| \[\d{4}\]\(([^)]+)\) \|`)
	var rows []string
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		rows = append(rows, m[1])
	}
	var records []string
	for _, f := range files {
		if recordFile.MatchString(f.Name()) {
			records = append(records, f.Name())
		}
	}
	require.NotEmpty(t, records)
	require.Equal(t, records, rows, "one row per record, in number order")
}

// TestTheIndexRefusesWhatWouldMislead: each way the records and index.txt
// can disagree stops the generation with a message naming the culprit.
func TestTheIndexRefusesWhatWouldMislead(t *testing.T) {
	const index = "band 0001-0009 Core\nband 0010-0019 Later\n"
	base := map[string]string{
		"0001-first.md":  "# The first decision\n\nBody.\n",
		"0010-second.md": "# 0010: The second decision\n\nBody.\n",
	}
	for _, tc := range []struct {
		name    string
		files   map[string]string // added to base; "" removes
		index   string
		wantErr string // "" when it must load
	}{
		{name: "as it is", index: index},
		{name: "a record in no band", files: map[string]string{"0020-third.md": "# Third\n"}, index: index,
			wantErr: "0020-third.md is in no band"},
		{name: "overlapping bands", index: index + "band 0005-0012 Both\n", wantErr: "overlaps band 0001-0009"},
		{name: "a band running backwards", index: "band 0019-0010 Later\n", wantErr: "runs backwards"},
		{name: "a status of no record", index: index + "0005 superseded by 0010\n", wantErr: "a status for 0005, which is no record"},
		{name: "a status naming no record", index: index + "0001 superseded by 0011\n", wantErr: "names 0011, which is no record"},
		{name: "two statuses", index: index + "0001 amended by 0010\n0001 revised by 0010\n", wantErr: "a second status for 0001"},
		{name: "a line of neither kind", index: index + "bands 0020-0029 Typo\n", wantErr: "index.txt:3: neither"},
		{name: "a superseding record without the status",
			files: map[string]string{"0010-second.md": "# The second\n\nSupersedes decision 0001 (all of it).\n"}, index: index,
			wantErr: `0010-second.md says "Supersedes decision 0001": index.txt's status of 0001 must name 0010`},
		{name: "a revising record with the status",
			files: map[string]string{"0010-second.md": "# The second\n\nRevises how decisions 0001 and\n0002 are done.\n"},
			index: index + "0001 revised by 0010\n"},
		{name: "a record naming an earlier one without changing it",
			files: map[string]string{"0010-second.md": "# The second\n\nAs decision 0001 says, nothing changes.\n"}, index: index},
		{name: "a title with the wrong number", files: map[string]string{"0010-second.md": "# 0011: Second\n"}, index: index,
			wantErr: "the title says 0011, the file name 0010"},
		{name: "no title", files: map[string]string{"0010-second.md": "Second\n"}, index: index, wantErr: "0010-second.md:1: the first line is the title"},
		{name: "a badly named record", files: map[string]string{"0010_Second.md": "# Second\n"}, index: index,
			wantErr: "0010_Second.md: a record is named NNNN-slug.md"},
		{name: "one number twice", files: map[string]string{"0010-again.md": "# Again\n"}, index: index, wantErr: "have the same number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"index.txt": {Data: []byte(tc.index)}}
			for name, body := range base {
				fsys[name] = &fstest.MapFile{Data: []byte(body)}
			}
			for name, body := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(body)}
			}
			idx, err := load(fsys)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			out := string(idx.render())
			for name := range fsys {
				if recordFile.MatchString(name) {
					require.Contains(t, out, "("+name+")")
				}
			}
		})
	}
}

// TestTheIndexSaysWhatChangedARecord: a status is rendered with its
// records linked, the rest say "in force", and the band table links each
// band's heading by the anchor GitHub gives it.
func TestTheIndexSaysWhatChangedARecord(t *testing.T) {
	fsys := fstest.MapFS{
		"index.txt":      {Data: []byte("band 0001-0009 The core: ids | shards\nband 0010-0019 Later\n0001 superseded in part by 0010: the rest stays\n")},
		"0001-first.md":  {Data: []byte("# The first\n")},
		"0002-other.md":  {Data: []byte("# The other\n")},
		"0010-second.md": {Data: []byte("# The second\n\nSupersedes decision 0001's part.\n")},
	}
	idx, err := load(fsys)
	require.NoError(t, err)
	out := string(idx.render())
	require.Contains(t, out, "| [0001](0001-first.md) | The first | superseded in part by [0010](0010-second.md): the rest stays |\n")
	require.Contains(t, out, "| [0002](0002-other.md) | The other | in force |\n")
	require.Contains(t, out, "| [0001–0009](#00010009-the-core-ids--shards) | The core: ids \\| shards | 2 |\n")
	require.Contains(t, out, "\n## 0001–0009: The core: ids | shards\n")
	require.Contains(t, out, "Changed by later records (1): [0001](0001-first.md) by 0010.")
	require.Equal(t, 1, strings.Count(out, "(0010-second.md) |"), "one row for 0010")
}
