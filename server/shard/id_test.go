package shard_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/shard"
)

// TestShowOfAcceptsOnlyTheSpellingNewIDWrites: an id leads to its show,
// and no other spelling of it is an id (decision 0066).
func TestShowOfAcceptsOnlyTheSpellingNewIDWrites(t *testing.T) {
	t.Parallel()
	id := shard.NewID("ord", 42)
	show, err := shard.ShowOf(id)
	require.NoError(t, err)
	require.EqualValues(t, 42, show)
	random := strings.Split(id, "_")[2]
	for _, bad := range []string{
		"ord_042_" + random, "ord_+42_" + random, "ord_-42_" + random, "ord_0_" + random,
		"ord_42_" + strings.ToUpper(random), "ord_42_" + random[:15], "ord_42_" + random + "0",
		"ord_42_" + random[:15] + "\n", "ord_42", "",
	} {
		_, err := shard.ShowOf(bad)
		require.ErrorIs(t, err, shard.ErrBadID, bad)
	}
}
