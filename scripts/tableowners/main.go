// Command tableowners guards docs/DESIGN.md, style 13 ("tables have one
// owner"): every table the migrations create has one owning package in
// docs/table-owners.txt, and a table named in SQL outside its owner fails
// unless that file lists the package, or the file, as an exception with
// its reason (decision 0313). scripts/check-repo.sh runs it in the
// repository's root with the .go and .sql files, tracked or not, on stdin,
// NUL-separated (`git ls-files -z`); it prints each problem and exits 1.
//
// SQL is found in the string literals of Go files that are not tests, in
// pgx.Identifier{…} literals (CopyFrom), and in .sql files; the migrations
// (server/migrations) define the tables and are not checked. Tests are
// exempt: they arrange and inspect a database as the world sees it, not as
// a package. A table named only by a string built at run time (a move's
// list of tables) is not seen; such code names its tables in a list a test
// checks against the schema.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/seatghor/seatghor/scripts/guard"
)

// ownersFile is where the owners and the exceptions are written.
const ownersFile = "docs/table-owners.txt"

// migrationsDir holds the schema; its SQL creates the tables.
const migrationsDir = "server/migrations/"

func main() { guard.Main(check) }

// owners is docs/table-owners.txt read.
type owners struct {
	owner map[string]string // table → package
	// except maps "table package" to the reason the package may name it.
	except map[string]string
	used   map[string]bool // exceptions some SQL needed
}

// check returns what is wrong in fsys, whose files are listed in files
// (paths relative to the repository's root, slash-separated).
func check(fsys fs.FS, files []string) []string {
	tables, problems := schemaTables(fsys, files)
	o, ps := readOwners(fsys, tables)
	problems = append(problems, ps...)
	if o == nil {
		return problems
	}
	for _, f := range files {
		if strings.HasPrefix(f, migrationsDir) || strings.HasSuffix(f, "_test.go") {
			continue
		}
		isGo := strings.HasSuffix(f, ".go")
		if !isGo && !strings.HasSuffix(f, ".sql") {
			continue
		}
		b, err := fs.ReadFile(fsys, f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted, not yet committed
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		var refs []ref
		if isGo {
			refs = goRefs(b, tables)
		} else {
			refs = sqlRefs(string(b), 1, tables)
		}
		pkg := path.Dir(f)
		for _, r := range refs {
			owner := o.owner[r.table]
			if owner == pkg || owner == "" { // no owner: reported above
				continue
			}
			// An exception names the package, or one file of it.
			if key := r.table + " " + f; o.except[key] != "" {
				o.used[key] = true
				continue
			}
			if key := r.table + " " + pkg; o.except[key] != "" {
				o.used[key] = true
				continue
			}
			problems = append(problems, fmt.Sprintf("%s:%d: SQL names table %s, which %s owns (%s, docs/DESIGN.md style 13): ask %s through a read API, or list \"except %s %s <reason>\" (or name the file)",
				f, r.line, r.table, owner, ownersFile, owner, r.table, pkg))
		}
	}
	var stale []string
	for key := range o.except {
		if !o.used[key] {
			stale = append(stale, fmt.Sprintf("%s: the exception \"%s\" is needed by no SQL: remove it", ownersFile, key))
		}
	}
	slices.Sort(stale)
	return append(problems, stale...)
}

// schemaTables returns the tables the migrations leave in some database,
// each with the migration that created it: each directory under
// server/migrations is one database's schema, whose Up sections are
// applied in order.
func schemaTables(fsys fs.FS, files []string) (map[string]string, []string) {
	var problems []string
	var migrations []string
	for _, f := range files {
		if strings.HasPrefix(f, migrationsDir) && strings.HasSuffix(f, ".sql") {
			migrations = append(migrations, f)
		}
	}
	slices.Sort(migrations) // by database, then by version (zero-padded)
	tables := map[string]string{}
	var db string
	var have map[string]string // the tables of db so far
	flush := func() {
		for t, f := range have {
			if _, ok := tables[t]; !ok {
				tables[t] = f
			}
		}
	}
	for _, f := range migrations {
		if d := path.Dir(f); d != db {
			flush()
			db, have = d, map[string]string{}
		}
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		up := stripSQLComments(strings.SplitN(string(b), "+goose Down", 2)[0])
		for _, m := range tableDDL.FindAllStringSubmatch(up, -1) {
			t := strings.ToLower(m[2])
			if strings.EqualFold(m[1], "DROP") {
				delete(have, t)
			} else {
				have[t] = f
			}
		}
	}
	flush()
	return tables, problems
}

// tableDDL finds a migration's CREATE TABLE and DROP TABLE statements (one
// table each). A name followed by a format verb (my_tickets_p%s) is a
// partition made in a loop, part of its parent's table. The goose
// annotations are comments, so the Down section is cut before they are.
var tableDDL = regexp.MustCompile(`(?i)\b(CREATE|DROP)\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?([a-z_][a-z0-9_]*)\b([^a-z0-9_%]|$)`)

// readOwners reads docs/table-owners.txt: "owner <table> <package>" and
// "except <table> <package> <reason…>" lines, # comments and blank lines.
func readOwners(fsys fs.FS, tables map[string]string) (*owners, []string) {
	b, err := fs.ReadFile(fsys, ownersFile)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s is missing: every table needs its owner (docs/DESIGN.md style 13)", ownersFile)}
	}
	o := &owners{owner: map[string]string{}, except: map[string]string{}, used: map[string]bool{}}
	var problems []string
	bad := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: ", ownersFile, line)+fmt.Sprintf(format, args...))
	}
	type pending struct {
		line       int
		table, pkg string
	}
	var excepts []pending
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "owner":
			if len(fields) != 3 {
				bad(n, "an owner line is \"owner <table> <package>\"")
				continue
			}
			t, pkg := fields[1], fields[2]
			if _, ok := tables[t]; !ok {
				bad(n, "the migrations leave no table %s", t)
				continue
			}
			if prev, ok := o.owner[t]; ok {
				bad(n, "table %s has an owner already, %s: a table has one owner", t, prev)
				continue
			}
			o.owner[t] = pkg
		case "except":
			if len(fields) < 4 {
				bad(n, "an exception says why: \"except <table> <package> <reason>\"")
				continue
			}
			t, pkg := fields[1], fields[2]
			key := t + " " + pkg
			if _, ok := o.except[key]; ok {
				bad(n, "the exception \"%s\" is listed twice", key)
				continue
			}
			o.except[key] = strings.Join(fields[3:], " ")
			excepts = append(excepts, pending{n, t, pkg})
		default:
			bad(n, "a line is \"owner …\" or \"except …\", not %q", fields[0])
		}
	}
	// A wrong exception is reported once, as wrong, not also as unneeded.
	for _, e := range excepts {
		owner, ok := o.owner[e.table]
		switch {
		case !ok:
			bad(e.line, "the exception names table %s, which has no owner", e.table)
		case e.pkg == owner || isFile(e.pkg) && path.Dir(e.pkg) == owner:
			bad(e.line, "the exception \"%s %s\" names the owner's own code", e.table, e.pkg)
		default:
			continue
		}
		delete(o.except, e.table+" "+e.pkg)
	}
	names := make([]string, 0, len(tables))
	for t := range tables {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		if _, ok := o.owner[t]; !ok {
			problems = append(problems, fmt.Sprintf("%s: table %s (%s) has no owner: add \"owner %s <package>\"", ownersFile, t, tables[t], t))
		}
	}
	return o, problems
}

// isFile tells a file of a package from the package: files have an
// extension.
func isFile(p string) bool { return strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".sql") }

// ref is a table named in SQL, at a line of its file.
type ref struct {
	table string
	line  int
}

// goRefs finds the tables named in a Go file's string literals.
func goRefs(src []byte, tables map[string]string) []ref {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0) // comments are skipped; errors leave the rest to the compiler
	var out []ref
	// prev is the token before the current one, so Identifier{"seats"} is
	// seen.
	var prev token.Token
	var prevLit string
	inIdentifier := false
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		switch {
		case tok == token.LBRACE && prev == token.IDENT && prevLit == "Identifier":
			inIdentifier = true
		case tok == token.RBRACE:
			inIdentifier = false
		case tok == token.STRING:
			v, err := strconv.Unquote(lit)
			if err != nil {
				break
			}
			line := fset.Position(pos).Line
			if inIdentifier {
				if _, ok := tables[v]; ok {
					out = append(out, ref{v, line})
				}
				break
			}
			out = append(out, sqlRefs(v, line, tables)...)
		}
		prev, prevLit = tok, lit
	}
	return out
}

// sqlToken is one token of SQL: a word, a quoted identifier or one
// punctuation character; strings and comments are dropped.
var sqlToken = regexp.MustCompile(`'(?:[^']|'')*'|"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*|\$\d+|\d+|\n|\S`)

// tableKeywords are followed by a table name; after FROM and USING a
// comma-separated list of tables may follow.
var tableKeywords = map[string]bool{"FROM": true, "JOIN": true, "INTO": true, "UPDATE": true, "TABLE": true, "TRUNCATE": true, "USING": true}

// notAlias are words that may follow a table name and are no alias.
var notAlias = map[string]bool{
	"WHERE": true, "JOIN": true, "LEFT": true, "RIGHT": true, "INNER": true, "FULL": true, "CROSS": true,
	"ON": true, "USING": true, "GROUP": true, "ORDER": true, "LIMIT": true, "OFFSET": true, "FOR": true,
	"SET": true, "VALUES": true, "SELECT": true, "RETURNING": true, "UNION": true, "EXCEPT": true,
	"INTERSECT": true, "WINDOW": true, "HAVING": true, "DEFAULT": true, "NATURAL": true, "LATERAL": true,
}

// sqlRefs finds the tables named in SQL text starting at line.
func sqlRefs(sql string, line int, tables map[string]string) []ref {
	var toks []string
	var lines []int
	for _, t := range sqlToken.FindAllString(stripSQLComments(sql), -1) {
		if t == "\n" {
			line++
			continue
		}
		if len(t) > 1 && t[0] == '\'' {
			line += strings.Count(t, "\n")
			continue
		}
		if len(t) > 1 && t[0] == '"' {
			t = strings.ReplaceAll(t[1:len(t)-1], `""`, `"`)
		}
		toks = append(toks, t)
		lines = append(lines, line)
	}
	isWord := func(i int) bool {
		if i >= len(toks) {
			return false
		}
		c := toks[i][0]
		return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
	}
	var out []ref
	for i := range toks {
		kw := strings.ToUpper(toks[i])
		if !tableKeywords[kw] {
			continue
		}
		j := i + 1
		if j < len(toks) && strings.EqualFold(toks[j], "ONLY") {
			j++
		}
		for isWord(j) {
			name := toks[j]
			if j+2 < len(toks) && toks[j+1] == "." && isWord(j+2) { // schema.table
				j += 2
				name = toks[j]
			}
			if _, ok := tables[strings.ToLower(name)]; ok {
				out = append(out, ref{strings.ToLower(name), lines[j]})
			}
			j++
			if j < len(toks) && strings.EqualFold(toks[j], "AS") {
				j++
			}
			if isWord(j) && !notAlias[strings.ToUpper(toks[j])] {
				j++
			}
			if (kw != "FROM" && kw != "USING") || j >= len(toks) || toks[j] != "," {
				break
			}
			j++
		}
	}
	return out
}

// stripSQLComments drops -- comments to the end of their line.
var sqlComment = regexp.MustCompile(`--[^\n]*`)

func stripSQLComments(sql string) string { return sqlComment.ReplaceAllString(sql, "") }
