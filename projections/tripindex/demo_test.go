package tripindex_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/devenv/demo"
	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/server/search"
)

// TestDemoFindsRenamedPlacesByEitherName: the demo has trips to the places
// renamed in 2018, which the tour finds by their former and new names.
func TestDemoFindsRenamedPlacesByEitherName(t *testing.T) {
	idx := openEmbedded(t)
	var trips []search.Trip
	for _, s := range demo.Shows(base) {
		trips = append(trips, tripindex.FromShow(s))
	}
	require.NoError(t, idx.Put(context.Background(), trips))
	for q, want := range map[string][]int64{
		"cumilla": {10}, "comilla": {10}, "barishal": {11, 14}, "barisal": {11, 14}, "jashore": {12, 14},
		"jessore": {12, 14}, "bogura": {13}, "bogra": {13}, "dhaka barisal": {11}, "coxs bazar": {7},
		"chittagong": {1}, "ঢাকা বগুড়া": {13},
	} {
		r, err := idx.Search(context.Background(), search.Query{Text: q, StartsAfter: base.Add(-time.Hour)})
		require.NoError(t, err)
		require.ElementsMatch(t, want, ids(r), q)
	}
}
