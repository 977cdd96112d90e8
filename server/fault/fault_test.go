package fault_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/fault"
)

// TestError: what a fault says, how it is found in a chain, and what of a
// sentinel is shared and what is not.
func TestError(t *testing.T) {
	made := fault.OnField(fault.BookingInvalid, "seats", "unknown seats %s", "Z9")
	require.Equal(t, "seats: unknown seats Z9", made.Error())
	require.Equal(t, "show 4 not found", fault.New(fault.ShowNotFound, "show %d not found", 4).Error())
	require.False(t, made.Shared())

	wrapped := fmt.Errorf("create hold: %w", made)
	got, ok := fault.As(wrapped)
	require.True(t, ok)
	require.Same(t, made, got, "the first fault of the chain")
	require.Equal(t, fault.BookingInvalid, fault.ReasonOf(wrapped))
	require.Empty(t, fault.ReasonOf(errors.New("connection reset")), "no reason: a bug")

	sentinel := fault.Sentinel(fault.PartnerNotFound, "partner not found")
	require.True(t, sentinel.Shared())
	require.ErrorIs(t, fmt.Errorf("partner 7: %w", sentinel), sentinel)
	require.NotErrorIs(t, fault.New(fault.PartnerNotFound, "partner not found"), sentinel,
		"a sentinel is matched by identity, not by its reason")

	b, err := json.Marshal(sentinel)
	require.NoError(t, err)
	var back fault.Error
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, fault.PartnerNotFound, back.Reason)
	require.False(t, back.Shared(), "a decoded fault is one answer, not the shared sentinel")
}

// TestReasonsAreWords: every generated reason is a word of capitals, once.
func TestReasonsAreWords(t *testing.T) {
	seen := map[fault.Reason]bool{}
	for _, r := range fault.Reasons {
		require.Regexp(t, `^[A-Z][A-Z0-9_]*$`, string(r))
		require.False(t, seen[r], "%s twice", r)
		seen[r] = true
	}
	require.True(t, seen[fault.Internal] && seen[fault.SeatsUnavailable] && seen[fault.APIKeyRevoked])
}

// TestReasonFilesAreGenerated: every file the reasons are generated into
// (tools/protoc-gen-seatghor-reasons) is in the Makefile's GENERATED list,
// which `make check-generate` compares with a fresh `make generate`, so a
// hand edit of any of them fails it; and each says it is generated.
func TestReasonFilesAreGenerated(t *testing.T) {
	root := filepath.Join("..", "..")
	plugin, err := os.ReadFile(filepath.Join(root, "tools", "protoc-gen-seatghor-reasons", "main.go"))
	require.NoError(t, err)
	var outputs []string
	for _, m := range regexp.MustCompile(`\{"([a-z/._]+)", [a-zA-Z]+\},`).FindAllStringSubmatch(string(plugin), -1) {
		outputs = append(outputs, m[1])
	}
	require.Contains(t, outputs, "docs/errors.md")
	require.Len(t, outputs, 5, "the plugin's outputs, read from its source")

	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^GENERATED := ((?:.*\\\n)*.*)$`).FindSubmatch(makefile)
	require.NotNil(t, m, "the Makefile's GENERATED list")
	generated := strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " "))
	for _, out := range outputs {
		require.Contains(t, generated, out, "the Makefile's GENERATED list leaves %s out: check-generate would not see a hand edit", out)
		b, err := os.ReadFile(filepath.Join(root, out))
		require.NoError(t, err)
		require.Contains(t, string(b[:min(len(b), 300)]), "protoc-gen-seatghor-reasons", "%s says how it is generated", out)
	}
}
