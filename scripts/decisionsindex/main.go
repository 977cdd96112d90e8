// Command decisionsindex writes docs/decisions/README.md, the index of the
// decision records: under each band of numbers, every record's number,
// title and status. Titles are the records' first lines; bands and
// statuses come from docs/decisions/index.txt, kept by hand (its header
// says the format). scripts/generate.sh runs it, so `make check-generate`
// fails when a record was added, renamed or retitled without the index.
//
// It refuses, naming the file and line, a record outside every band, a
// status for a record that does not exist or naming one that does not,
// and a record that says it supersedes, revises, amends, refines or
// replaces an earlier one whose status does not name it: the index never
// calls a changed decision "in force".
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

func main() {
	dir := flag.String("dir", "docs/decisions", "the directory of the records, index.txt and README.md")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "decisionsindex:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	idx, err := load(os.DirFS(dir))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "README.md"), idx.render(), 0o644)
}

// record is one decision record: NNNN-slug.md.
type record struct {
	num   int
	file  string
	title string
	body  string
}

// band is a range of record numbers under one heading.
type band struct {
	first, last int
	title       string
}

// index is what README.md is made from.
type index struct {
	records []record // by number
	bands   []band   // by first number
	status  map[int]string
}

var (
	recordFile = regexp.MustCompile(`^(\d{4})-[a-z0-9-]+\.md$`)
	// A title may repeat the number: "# 0273: Partners' webhook secrets …".
	titleLine = regexp.MustCompile(`^# (?:(\d{4}): )?(\S.*)$`)
	bandLine  = regexp.MustCompile(`^band (\d{4})-(\d{4}) (\S.*)$`)
	// statusLine's status starts with a word: "superseded in part by 0130: …".
	statusLine = regexp.MustCompile(`^(\d{4}) ([a-z].*)$`)
	number     = regexp.MustCompile(`\b\d{4}\b`)
	// changes finds where a record says it changes earlier ones:
	// "Supersedes decision 0005", "Revises how decisions 0020, 0210 and
	// 0247 are…", "Supersedes the "partner API key" row of decision 0086".
	changes = regexp.MustCompile(`(?i)\b(?:supersedes|revises|amends|refines|replaces)\b[^.;]{0,60}?\bdecisions? (\d{4}(?:(?:, | and )\d{4})*)`)
)

// load reads the records and index.txt of fsys and checks them together.
func load(fsys fs.FS) (*index, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	idx := &index{status: map[int]string{}}
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "README.md" || !strings.HasSuffix(name, ".md") {
			continue
		}
		m := recordFile.FindStringSubmatch(name)
		if m == nil {
			return nil, fmt.Errorf("%s: a record is named NNNN-slug.md (lower case, digits and hyphens)", name)
		}
		num, _ := strconv.Atoi(m[1])
		if other, ok := seen[num]; ok {
			return nil, fmt.Errorf("%s and %s have the same number", other, name)
		}
		seen[num] = name
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		first, _, _ := strings.Cut(string(body), "\n")
		t := titleLine.FindStringSubmatch(strings.TrimSpace(first))
		if t == nil {
			return nil, fmt.Errorf("%s:1: the first line is the title, \"# Title\" or \"# %s: Title\"", name, m[1])
		}
		if t[1] != "" && t[1] != m[1] {
			return nil, fmt.Errorf("%s:1: the title says %s, the file name %s", name, t[1], m[1])
		}
		idx.records = append(idx.records, record{num: num, file: name, title: t[2], body: string(body)})
	}
	slices.SortFunc(idx.records, func(a, b record) int { return a.num - b.num })
	if err := idx.readIndex(fsys); err != nil {
		return nil, err
	}
	return idx, idx.check()
}

// readIndex reads index.txt's bands and statuses.
func (idx *index) readIndex(fsys fs.FS) error {
	f, err := fsys.Open("index.txt")
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if m := bandLine.FindStringSubmatch(line); m != nil {
			first, _ := strconv.Atoi(m[1])
			last, _ := strconv.Atoi(m[2])
			if first > last {
				return fmt.Errorf("index.txt:%d: band %s-%s runs backwards", n, m[1], m[2])
			}
			for _, b := range idx.bands {
				if first <= b.last && b.first <= last {
					return fmt.Errorf("index.txt:%d: band %s-%s overlaps band %04d-%04d", n, m[1], m[2], b.first, b.last)
				}
			}
			idx.bands = append(idx.bands, band{first: first, last: last, title: m[3]})
			continue
		}
		if m := statusLine.FindStringSubmatch(line); m != nil {
			num, _ := strconv.Atoi(m[1])
			if _, ok := idx.status[num]; ok {
				return fmt.Errorf("index.txt:%d: a second status for %s", n, m[1])
			}
			if idx.find(num) == nil {
				return fmt.Errorf("index.txt:%d: a status for %s, which is no record", n, m[1])
			}
			for _, ref := range number.FindAllString(m[2], -1) {
				r, _ := strconv.Atoi(ref)
				if idx.find(r) == nil {
					return fmt.Errorf("index.txt:%d: %s's status names %s, which is no record", n, m[1], ref)
				}
			}
			idx.status[num] = m[2]
			continue
		}
		return fmt.Errorf("index.txt:%d: neither \"band NNNN-NNNN Title\" nor \"NNNN status\": %q", n, line)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	slices.SortFunc(idx.bands, func(a, b band) int { return a.first - b.first })
	return nil
}

// check finds a band for every record, and each earlier record that a
// record says it changes names it in its status.
func (idx *index) check() error {
	var errs []error
	for _, r := range idx.records {
		if idx.bandOf(r.num) < 0 {
			errs = append(errs, fmt.Errorf("%s is in no band: add one to index.txt, or widen one", r.file))
		}
		for _, m := range changes.FindAllStringSubmatch(strings.Join(strings.Fields(r.body), " "), -1) {
			for _, ref := range number.FindAllString(m[1], -1) {
				old, _ := strconv.Atoi(ref)
				if old >= r.num || idx.find(old) == nil {
					continue
				}
				if !slices.Contains(number.FindAllString(idx.status[old], -1), fmt.Sprintf("%04d", r.num)) {
					errs = append(errs, fmt.Errorf("%s says %q: index.txt's status of %s must name %04d", r.file, m[0], ref, r.num))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func (idx *index) find(num int) *record {
	i, ok := slices.BinarySearchFunc(idx.records, num, func(r record, n int) int { return r.num - n })
	if !ok {
		return nil
	}
	return &idx.records[i]
}

func (idx *index) bandOf(num int) int {
	return slices.IndexFunc(idx.bands, func(b band) bool { return b.first <= num && num <= b.last })
}

// render writes README.md.
func (idx *index) render() []byte {
	var b bytes.Buffer
	b.WriteString(`# Decisions

<!-- Generated by scripts/decisionsindex from the records' titles and index.txt: edit those, then run bash scripts/generate.sh. -->

Each record here is one decision that was not obvious: its context, what was decided, what was
rejected, and the tests that hold it (the house style: [DESIGN.md](../DESIGN.md)). A record is
not rewritten to say something else: a later record that changes it says so, and its status below
names that record. A new record takes the next free number of its topic's band, or opens a band in
[index.txt](index.txt), which also keeps the statuses.

`)
	fmt.Fprintf(&b, "%d records in %d bands; a record is in force unless its status names the later records that changed it.\n\n", len(idx.records), idx.usedBands())
	b.WriteString("| numbers | topic | records |\n|---|---|---|\n")
	for i, bd := range idx.bands {
		if n := idx.countIn(i); n > 0 {
			fmt.Fprintf(&b, "| [%04d–%04d](#%s) | %s | %d |\n", bd.first, bd.last, slug(bandHeading(bd)), cell(bd.title), n)
		}
	}
	var changed []string
	for _, r := range idx.records {
		if s, ok := idx.status[r.num]; ok {
			var by []string
			for _, ref := range number.FindAllString(s, -1) {
				if n, _ := strconv.Atoi(ref); !slices.Contains(by, ref) && n != r.num {
					by = append(by, ref)
				}
			}
			changed = append(changed, idx.link(r.num)+" by "+strings.Join(by, ", "))
		}
	}
	fmt.Fprintf(&b, "\nChanged by later records (%d): %s.\n", len(changed), strings.Join(changed, "; "))
	for i, bd := range idx.bands {
		if idx.countIn(i) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n| record | decision | status |\n|---|---|---|\n", bandHeading(bd))
		for _, r := range idx.records {
			if idx.bandOf(r.num) != i {
				continue
			}
			status := "in force"
			if s, ok := idx.status[r.num]; ok {
				status = number.ReplaceAllStringFunc(s, func(ref string) string {
					n, _ := strconv.Atoi(ref)
					return idx.link(n)
				})
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", idx.link(r.num), cell(r.title), cell(status))
		}
	}
	return b.Bytes()
}

func (idx *index) link(num int) string {
	return fmt.Sprintf("[%04d](%s)", num, idx.find(num).file)
}

func (idx *index) countIn(band int) int {
	n := 0
	for _, r := range idx.records {
		if idx.bandOf(r.num) == band {
			n++
		}
	}
	return n
}

func (idx *index) usedBands() int {
	n := 0
	for i := range idx.bands {
		if idx.countIn(i) > 0 {
			n++
		}
	}
	return n
}

func bandHeading(b band) string {
	return fmt.Sprintf("%04d–%04d: %s", b.first, b.last, b.title)
}

// cell escapes what would end a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// slug is the anchor GitHub gives a heading: lower case, spaces to hyphens,
// and only letters, marks, digits, hyphens and underscores kept.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
