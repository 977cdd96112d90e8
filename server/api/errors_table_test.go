package api

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/network"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/search"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/ticket"
	"github.com/seatghor/seatghor/server/webhook"
)

// TestErrorTableCoversEveryDomainError: every error a domain package can
// return has a reason the edge answers with its code (decision 0318): each
// sentinel a package lists is a *fault.Error, each reason has one code, the
// mechanisms' own errors have theirs, and docs/errors.md documents exactly
// the reasons with their codes.
func TestErrorTableCoversEveryDomainError(t *testing.T) {
	var all []error
	for _, list := range [][]error{booking.Errors, payment.Errors, catalog.Errors, ledger.Errors, ticket.Errors, idempotency.Errors, auth.Errors,
		partner.Errors, webhook.Errors, network.Errors} {
		for _, e := range list {
			f, ok := fault.As(e)
			require.True(t, ok, "%v is listed but is no *fault.Error: make it with fault.Sentinel", e)
			require.True(t, f.Shared(), "%s: a listed error is a sentinel (fault.Sentinel)", f.Reason)
		}
		all = append(all, list...)
	}
	for _, r := range fault.Reasons {
		all = append(all, fault.New(r, "made for a request"))
	}
	all = append(all, &ratelimit.ExceededError{}, &protovalidate.ValidationError{}, context.Canceled,
		fmt.Errorf("wrapped: %w", context.DeadlineExceeded), shard.ErrUnknownShow, page.ErrBadToken, search.ErrUnavailable)
	for _, e := range all {
		reason, by := answerOf(e)
		require.NotNil(t, by, "%T %+v has no reason", e, e)
		_, ok := reasonCodes[reason]
		require.True(t, ok, "%T %+v: reason %s has no code (proto/seatghor/errors/v1/reason.proto)", e, e, reason)
	}
	_, by := answerOf(errors.New("connection reset"))
	require.Nil(t, by, "an error without a reason is a bug, answered internal")

	t.Run("the packages list every kind and error they declare", func(t *testing.T) {
		for dir, want := range map[string]int{
			"booking":     len(booking.Errors),
			"payment":     len(payment.Errors),
			"ticket":      len(ticket.Errors),
			"waitingroom": 0,
			"catalog":     len(catalog.Errors),
			"ledger":      len(ledger.Errors),
			"idempotency": len(idempotency.Errors),
			"auth":        len(auth.Errors),
			"partner":     len(partner.Errors),
			"webhook":     len(webhook.Errors),
			"network":     len(network.Errors),
		} {
			kinds, reasons, errs := declared(t, filepath.Join("..", dir))
			if dir == "ledger" {
				kinds = nil // ledger.Kind is a journal's kind, not an error's
				// A journal that breaks is our bug, never the caller's:
				// answered internal, so not listed.
				errs = slices.DeleteFunc(errs, func(n string) bool {
					return n == "ErrUnbalanced" || n == "ErrInvalidJournal" || n == "UnbalancedError"
				})
			}
			require.Empty(t, kinds, "%s declares error kinds %v: return a *fault.Error of a reason instead", dir, kinds)
			require.Empty(t, reasons, "%s declares reasons %v: declare them in proto/seatghor/errors/v1/reason.proto", dir, reasons)
			require.Len(t, errs, want, "%s declares the errors %v: make each a *fault.Error listed in %s.Errors", dir, errs, dir)
		}
	})

	t.Run("one code per reason, documented", func(t *testing.T) {
		require.Len(t, reasonCodes, len(fault.Reasons), "every reason has one code")
		codes := map[string]connect.Code{}
		for _, r := range fault.Reasons {
			require.Regexp(t, `^[A-Z][A-Z0-9_]*$`, string(r))
			codes[string(r)] = reasonCodes[r]
		}
		require.Equal(t, connect.CodeInternal, codes[string(fault.Internal)])
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

// TestOneErrorShape: the domain's business errors are *fault.Error, one
// shape (decision 0318); no package under server/ or projections/ declares
// an error type of its own, but for the few that are not refusals of a
// request.
func TestOneErrorShape(t *testing.T) {
	others := map[string]string{
		"fault.Error":             "the one shape",
		"ledger.UnbalancedError":  "a journal that breaks R-7.1: our bug, answered internal",
		"ratelimit.ExceededError": "the rate limiter's answer with its wait and quota (RetryInfo, QuotaFailure)",
		"sandbox.APIError":        "the sandbox gateway client's reading of the gateway's own errors",
	}
	var found []string
	for _, root := range []string{"..", filepath.Join("..", "..", "projections")} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			_, _, errs := declared(t, path)
			for _, e := range errs {
				if !strings.HasPrefix(e, "Err") {
					found = append(found, filepath.Base(path)+"."+e)
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	for _, name := range found {
		_, ok := others[name]
		require.True(t, ok, "%s is an error type of its own: return a *fault.Error of a reason (server/fault)", name)
	}
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
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") ||
			strings.HasSuffix(e.Name(), ".gen.go") {
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
						strings.HasSuffix(s.Name.Name, "Error") {
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

// TestConnectErrorsAreMadeOnlyByTheTable: no code outside errors.go makes a
// Connect error (house rule: one error contract at the edge); a new refusal
// is a *fault.Error of a reason (invalidField here for a field only the
// edge checks).
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
	require.Empty(t, offenders, "connect.NewError outside server/api/errors.go: return a *fault.Error of a reason")
}
