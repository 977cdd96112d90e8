package validate

import (
	"os"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/require"
)

// TestDockerfile parses the image's Dockerfile as BuildKit does and checks
// what docs/operations.md promises of the image: built in its own stage, a
// static binary on a minimal base, run as a non-root user.
func TestDockerfile(t *testing.T) {
	f, err := os.Open("../../Dockerfile")
	require.NoError(t, err)
	defer f.Close()
	ast, err := parser.Parse(f)
	require.NoError(t, err)
	require.Empty(t, ast.Warnings, "BuildKit warns about the Dockerfile")
	stages, _, err := instructions.Parse(ast.AST, nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(stages), 2, "a multi-stage build")

	build, final := stages[0], stages[len(stages)-1]
	var static bool
	for _, cmd := range build.Commands {
		if run, ok := cmd.(*instructions.RunCommand); ok {
			line := strings.Join(run.CmdLine, " ")
			if strings.Contains(line, "go build") && strings.Contains(line, "CGO_ENABLED=0") {
				static = true
			}
		}
	}
	require.True(t, static, "the build stage builds with CGO_ENABLED=0 (a static binary)")

	require.True(t, strings.HasPrefix(final.BaseName, "gcr.io/distroless/static"), "final base %q is not distroless static", final.BaseName)
	var user string
	var copied, entry bool
	for _, cmd := range final.Commands {
		switch c := cmd.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.CopyCommand:
			require.Equal(t, build.Name, c.From, "the final stage copies only from the build stage")
			copied = true
		case *instructions.EntrypointCommand:
			require.False(t, c.PrependShell, "ENTRYPOINT in exec form: there is no shell in the image")
			require.Equal(t, []string{"/usr/local/bin/seatghor"}, c.CmdLine)
			entry = true
		case *instructions.RunCommand:
			t.Fatalf("the final stage runs %v: there is no shell in the image", c.CmdLine)
		}
	}
	require.True(t, copied && entry, "the final stage copies the binary and runs it")
	require.NotEmpty(t, user, "the final stage sets USER")
	uid, _, _ := strings.Cut(user, ":")
	require.NotContains(t, []string{"0", "root"}, uid, "the image runs as root")
}
