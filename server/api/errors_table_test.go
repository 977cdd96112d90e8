package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/ticket"
	"github.com/seatghor/seatghor/server/waitingroom"
	"github.com/seatghor/seatghor/server/webhook"
)

// TestErrorTableCoversEveryDomainError: every error a domain package can
// return — each Kind, each waiting-room Reason, each sentinel and typed
// error it lists — has a row in the one error table, every reason has one
// code, and docs/errors.md documents exactly the table's reasons.
func TestErrorTableCoversEveryDomainError(t *testing.T) {
	var all []error
	for _, k := range booking.Kinds {
		all = append(all, &booking.Error{Kind: k})
	}
	for _, k := range payment.Kinds {
		all = append(all, &payment.Error{Kind: k})
	}
	for _, k := range ticket.Kinds {
		all = append(all, &ticket.Error{Kind: k})
	}
	for _, k := range waitingroom.Kinds {
		all = append(all, &waitingroom.Error{Kind: k})
	}
	for _, r := range waitingroom.Reasons {
		all = append(all, &waitingroom.Error{Kind: waitingroom.KindInvalid, Reason: r})
	}
	for _, r := range edgeReasons {
		all = append(all, &edgeError{reason: r})
	}
	for _, list := range [][]error{booking.Errors, payment.Errors, catalog.Errors, ledger.Errors, ticket.Errors, idempotency.Errors, auth.Errors,
		partner.Errors, webhook.Errors} {
		all = append(all, list...)
	}
	all = append(all, &ratelimit.ExceededError{}, &protovalidate.ValidationError{})
	for _, e := range all {
		_, _, ok := lookup(e)
		require.True(t, ok, "%T %+v has no row in api.errorTable (server/api/errors.go)", e, e)
	}

	t.Run("the packages list every kind and error they declare", func(t *testing.T) {
		for dir, want := range map[string]struct {
			kinds, reasons, errs int
		}{
			"booking":     {kinds: len(booking.Kinds), errs: len(booking.Errors)},
			"payment":     {kinds: len(payment.Kinds), errs: len(payment.Errors)},
			"ticket":      {kinds: len(ticket.Kinds), errs: len(ticket.Errors)},
			"waitingroom": {kinds: len(waitingroom.Kinds), reasons: len(waitingroom.Reasons)},
			"catalog":     {errs: len(catalog.Errors)},
			"ledger":      {errs: len(ledger.Errors)},
			"idempotency": {errs: len(idempotency.Errors)},
			"auth":        {errs: len(auth.Errors)},
			"partner":     {errs: len(partner.Errors)},
			"webhook":     {errs: len(webhook.Errors)},
		} {
			kinds, reasons, errs := declared(t, filepath.Join("..", dir))
			if dir == "ledger" {
				kinds = nil // ledger.Kind is a journal's kind, not an error's
			}
			require.Len(t, kinds, want.kinds, "%s declares the kinds %v: list each in %s.Kinds", dir, kinds, dir)
			require.Len(t, reasons, want.reasons, "%s declares the reasons %v: list each in %s.Reasons", dir, reasons, dir)
			require.Len(t, errs, want.errs, "%s declares the errors %v: list each in %s.Errors", dir, errs, dir)
		}
	})

	t.Run("one code per reason, documented", func(t *testing.T) {
		codes := map[string]connect.Code{reasonInternal: connect.CodeInternal}
		for _, r := range errorTable {
			require.Regexp(t, `^[A-Z][A-Z0-9_]*$`, r.reason)
			if c, ok := codes[r.reason]; ok {
				require.Equal(t, c, r.code, "reason %s has two codes", r.reason)
			}
			codes[r.reason] = r.code
		}
		doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "errors.md"))
		require.NoError(t, err)
		documented := map[string]string{}
		for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (\\d+) \\| `([A-Z0-9_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
			documented[m[3]] = m[1]
		}
		for reason, code := range codes {
			require.Contains(t, documented, reason, "docs/errors.md has no row for %s", reason)
			require.Equal(t, code.String(), documented[reason], "docs/errors.md gives %s another code", reason)
		}
		for reason := range documented {
			require.Contains(t, codes, reason, "docs/errors.md documents %s, which the table does not send", reason)
		}
	})
}

// declared reads a package's source for its exported error kinds (constants
// of type Kind), reasons (of type Reason), sentinel errors (package-level
// Err… variables) and error types (…Error structs).
func declared(t *testing.T, dir string) (kinds, reasons, errs []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					typ, _ := s.Type.(*ast.Ident)
					for _, n := range s.Names {
						switch {
						case !n.IsExported():
						case g.Tok == token.CONST && typ != nil && typ.Name == "Kind":
							kinds = append(kinds, n.Name)
						case g.Tok == token.CONST && typ != nil && typ.Name == "Reason":
							reasons = append(reasons, n.Name)
						case g.Tok == token.VAR && sentinelName.MatchString(n.Name):
							errs = append(errs, n.Name)
						}
					}
				case *ast.TypeSpec:
					if _, isStruct := s.Type.(*ast.StructType); isStruct && s.Name.IsExported() &&
						strings.HasSuffix(s.Name.Name, "Error") && s.Name.Name != "Error" {
						errs = append(errs, s.Name.Name)
					}
				}
			}
		}
	}
	return kinds, reasons, errs
}

// sentinelName is how a sentinel error is named: ErrSomething.
var sentinelName = regexp.MustCompile(`^Err[A-Z]`)

// TestConnectErrorsAreMadeOnlyByTheTable: no code outside the table makes a
// Connect error (house rule: one error contract at the edge); a new refusal
// is a domain error, or refuse/invalidField here, with a row in errorTable.
func TestConnectErrorsAreMadeOnlyByTheTable(t *testing.T) {
	var offenders []string
	for _, root := range []string{"..", filepath.Join("..", "..", "cmd"), filepath.Join("..", "..", "projections")} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				path == "errors.go" || path == filepath.Join("..", "api", "errors.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), "connect.NewError(") {
				offenders = append(offenders, path)
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.Empty(t, offenders, "connect.NewError outside server/api/errors.go: return a domain error with a row in errorTable")
}
