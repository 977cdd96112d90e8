// Command layers guards the repository's import layers (docs/DESIGN.md,
// "The shape"): only server/api speaks Connect (decision 0316), only the
// packages decision 0317 names serve HTTP, and nothing under clients/
// imports the server or the binary's internal helpers (decision 0330).
// scripts/check-repo.sh runs it with the tracked .go files on stdin,
// NUL-separated (`git ls-files -z`); it prints each problem and exits 1.
//
// The first two rules read the files of server/ that are not tests: a
// test is a caller of the API and may drive it through a Connect client
// or serve a fake endpoint to the code under test. The third reads every
// Go file under clients/, tests too: the clients are built and tested on
// their own.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/seatghor/seatghor/scripts/guard"
)

// module is the repository's Go module.
const module = "github.com/seatghor/seatghor"

// edge is the one package, with its subpackages, that speaks Connect.
const edge = "server/api"

func main() { guard.Main(check) }

// check returns what is wrong in fsys, whose files are listed in files
// (paths relative to the repository's root, slash-separated).
func check(fsys fs.FS, files []string) []string {
	var problems []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		inServer := under(f, "server") && !strings.HasSuffix(f, "_test.go")
		inClients := under(f, "clients")
		if !inServer && !inClients {
			continue
		}
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: not Go the guard can read: %v", f, err))
			continue
		}
		dir := path.Dir(f)
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case inServer && speaksConnect(p) && !under(dir, edge):
				problems = append(problems, fmt.Sprintf("%s imports %s: only %s speaks Connect; "+
					"give the edge a plain Go call to make instead (decision 0316)", f, p, edge))
			case inClients && (p == module+"/server" || p == module+"/internal" ||
				strings.HasPrefix(p, module+"/server/") || strings.HasPrefix(p, module+"/internal/")):
				problems = append(problems, fmt.Sprintf("%s imports %s: the clients use the API, never the "+
					"server's packages or internal/ (decision 0330)", f, p))
			}
		}
		if inServer && !mayServe(dir) {
			if at, what := servesHTTP(file); what != "" {
				problems = append(problems, fmt.Sprintf("%s:%d serves HTTP (%s): only the packages decision 0317 "+
					"names do (mayServe); serve it from %s", f, fset.Position(at).Line, what, edge))
			}
		}
	}
	return problems
}

// under tells whether the slash-separated path p is dir or inside it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// speaksConnect tells whether importing p speaks Connect: a module of
// connectrpc.com (connect, validate, otelconnect, vanguard, …) or a
// package generated for Connect from our protos (…/v1/bookingv1connect).
func speaksConnect(p string) bool {
	return strings.HasPrefix(p, "connectrpc.com/") ||
		strings.HasPrefix(p, module+"/") && strings.HasSuffix(path.Base(p), "connect")
}

// mayServe tells whether the package in dir may serve HTTP (decision 0317).
func mayServe(dir string) bool {
	for _, d := range []string{
		edge,                       // the public API and the admin listener (metrics, pprof)
		"server/app",               // the wiring, which hands the API's handlers to the listeners
		"server/site",              // the site
		"server/signin",            // the site's sign-in: the identity provider's redirects
		"server/gateway/sandbox",   // the sandbox payment provider, whose protocol is HTTP
		"server/notify/smssandbox", // the sandbox SMS provider, whose protocol is HTTP (decision 0431)
		"server/objstore",          // dev mode's embedded S3 server
	} {
		if under(dir, d) {
			return true
		}
	}
	return false
}

// serving are the names of net/http and net/http/httptest that answer
// requests or run a listener.
var serving = map[string]map[string]bool{
	"net/http": {"ResponseWriter": true, "Handler": true, "HandlerFunc": true, "ServeMux": true, "NewServeMux": true,
		"Server": true, "Serve": true, "ServeTLS": true, "ListenAndServe": true, "ListenAndServeTLS": true,
		"FileServer": true, "FileServerFS": true, "ServeContent": true, "ServeFile": true, "ServeFileFS": true},
	"net/http/httptest": {"NewServer": true, "NewUnstartedServer": true, "NewTLSServer": true, "NewRecorder": true},
}

// servesHTTP returns where file first uses a name of serving, and the name
// ("" when it uses none).
func servesHTTP(file *ast.File) (token.Pos, string) {
	names := map[string]string{} // the file's name of a package → its path
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if serving[p] == nil {
			continue
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	var at token.Pos
	var what string
	ast.Inspect(file, func(n ast.Node) bool {
		if what != "" {
			return false
		}
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && serving[names[x.Name]][sel.Sel.Name] {
			at, what = sel.Pos(), x.Name+"."+sel.Sel.Name
		}
		return true
	})
	return at, what
}
