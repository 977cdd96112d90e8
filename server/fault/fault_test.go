package fault_test

import (
	"encoding/json"
	"errors"
	"fmt"
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
