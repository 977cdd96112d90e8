package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/api"
)

// ourCommands is every command of the tree by its path, but cobra's own
// help and completion: a new command joins this list and envVars.
func ourCommands(root *cobra.Command) map[string]*cobra.Command {
	cmds := map[string]*cobra.Command{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			cmds[strings.TrimPrefix(sub.CommandPath(), "seatghor ")] = sub
			walk(sub)
		}
	}
	walk(root)
	return cmds
}

func TestCommandHelp(t *testing.T) {
	paths := []string{"dev", "serve", "migrate", "rebuild", "gateway", "loadtest", "loadtest onsale",
		"loadtest holds", "token", "verify", "shard", "shard move", "probe", "version", "cluster", "cluster up", "cluster down",
		"cluster status", "chaos"}
	tree := ourCommands(newRootCmd(nil, nil))
	require.ElementsMatch(t, paths, slices.Collect(func(yield func(string) bool) {
		for p := range tree {
			if !yield(p) {
				return
			}
		}
	}), "the table lists every command")
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			var out, errOut bytes.Buffer
			// A bad variable must not hide the help.
			t.Setenv("SEATGHOR_SHARDS", "many")
			require.NoError(t, run(context.Background(), append(strings.Fields(path), "-h"), &out, &errOut))
			require.Empty(t, errOut.String())
			help := out.String()
			cmd := tree[path]
			require.NotEmpty(t, cmd.Short)
			require.Contains(t, help, cmd.Long[:20])
			_, examples, ok := strings.Cut(help, "\nExamples:\n")
			require.True(t, ok, "no examples")
			require.Contains(t, examples, "seatghor "+path)
			require.Contains(t, help, "--help")
			cmd.Flags().VisitAll(func(f *pflag.Flag) {
				require.Contains(t, help, "--"+f.Name+" ", "flag %s", f.Name)
				require.NotEmpty(t, f.Usage, "flag %s", f.Name)
			})
			if cmd.HasSubCommands() { // its subcommands list theirs
				require.NotContains(t, help, "Environment")
				return
			}
			require.Contains(t, help, "\nEnvironment")
			reads := 0
			for _, v := range envVars() {
				if slices.Contains(v.commands, path) {
					require.Contains(t, help, "  "+v.name+" ", "variable %s", v.name)
					reads++
				} else {
					require.NotContains(t, help, "  "+v.name+" ", "variable %s", v.name)
				}
			}
			if reads == 0 {
				require.Contains(t, help, "Environment (README.md, Configuration, says more):\n  none\n")
			}
		})
	}
}

// TestEnvTableListsEveryVariable keeps the help's table equal to what
// loadConfig reads (every variable is read, set or not), each row naming
// commands that exist.
func TestEnvTableListsEveryVariable(t *testing.T) {
	read := map[string]bool{}
	_, err := loadConfig(func(name string) string { read[name] = true; return "" })
	require.NoError(t, err)
	require.NotEmpty(t, read)
	tree := ourCommands(newRootCmd(nil, nil))
	listed := map[string]bool{}
	for _, v := range envVars() {
		require.False(t, listed[v.name], "%s listed twice", v.name)
		listed[v.name] = true
		require.True(t, read[v.name], "%s is listed but loadConfig does not read it", v.name)
		require.NotEmpty(t, v.meaning, v.name)
		require.NotEmpty(t, v.commands, v.name)
		for _, c := range v.commands {
			require.Contains(t, tree, c, "%s names command %q", v.name, c)
		}
	}
	for name := range read {
		require.True(t, listed[name], "loadConfig reads %s: add it to envVars (envvars.go)", name)
	}
}

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"version"}, &out, &errOut))
	require.Empty(t, errOut.String())
	b := api.ReadBuild()
	require.Equal(t, "seatghor "+b.Version+"\nrevision "+b.Revision+"\n"+b.GoVersion+"\n", out.String())
	require.True(t, strings.HasPrefix(b.GoVersion, "go"), b.GoVersion)
}

func TestCompletion(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash":       "complete -o default -F __start_seatghor seatghor",
		"zsh":        "#compdef seatghor",
		"fish":       "complete -c seatghor",
		"powershell": "Register-ArgumentCompleter",
	} {
		t.Run(shell, func(t *testing.T) {
			var out, errOut bytes.Buffer
			require.NoError(t, run(context.Background(), []string{"completion", shell}, &out, &errOut))
			require.Contains(t, out.String(), marker)
		})
	}
	// The completions know the commands and a command's flags.
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{cobra.ShellCompRequestCmd, "loadtest", "onsale", "--pre"}, &out, &out))
	require.Contains(t, out.String(), "--preset")
	out.Reset()
	require.NoError(t, run(context.Background(), []string{cobra.ShellCompRequestCmd, "rebuild", ""}, &out, &out))
	require.Contains(t, out.String(), "tripindex")
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no command given"},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"migrat"}, "did you mean migrate?"},
		{[]string{"dev", "--bogus"}, "seatghor dev: unknown flag: --bogus"},
		{[]string{"dev", "-addr", "x"}, "seatghor dev: unknown shorthand flag: 'a'"},
		{[]string{"serve", "extra"}, "seatghor serve: unknown command"},
		{[]string{"loadtest"}, "loadtest onsale|holds"},
		{[]string{"loadtest", "bogus"}, "loadtest onsale|holds"},
		{[]string{"loadtest", "onsale", "--buyers", "many"}, `invalid argument "many" for "--buyers"`},
		{[]string{"loadtest", "onsale", "--preset", "huge"}, `no preset "huge"`},
		{[]string{"verify", "--timeout", "soon"}, `invalid argument "soon" for "--timeout"`},
		{[]string{"version", "now"}, "seatghor version: unknown command"},
		{[]string{"token"}, "token needs --sub"},
		{[]string{"rebuild"}, "rebuild needs one projector name"},
		{[]string{"probe"}, "probe needs one URL"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), tt.args, &out, &errOut)
			require.ErrorIs(t, err, errUsage)
			require.ErrorContains(t, err, tt.want)
			require.Contains(t, errOut.String(), "-h' for help.")
		})
	}
}
