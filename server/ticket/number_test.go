package ticket_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/ticket"
)

func TestNumberIsTheOrderIDsFirstRandomCharacters(t *testing.T) {
	require.Equal(t, "MWTY306PTD", ticket.Number("ord_1000_mwty306ptd9gg5y7"))
	for _, id := range []string{"", "hld_1000_mwty306ptd9gg5y7", "ord_1000_short", "ord_0_mwty306ptd9gg5y7", "tkt_1000_mwty306ptd9gg5y7_001"} {
		require.Empty(t, ticket.Number(id), id)
	}
	id := shard.NewID("ord", 42)
	n, ok := ticket.ParseNumber(ticket.Number(id))
	require.True(t, ok)
	require.Equal(t, id[len("ord_42_"):][:ticket.NumberLength], n, "a printed number reads back as stored")
}

func TestParseNumberReadsWhatAPersonTypes(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"MWTY306PTD", "mwty306ptd", true},
		{"mwty306ptd", "mwty306ptd", true},
		{" mwty3-06ptd ", "mwty306ptd", true},
		{"MWTY3O6PTD", "mwty306ptd", true}, // O for 0
		{"1LIA000000", "111a000000", true}, // l and I for 1
		{"MWTY306PT", "", false},           // too short
		{"MWTY306PTDX", "", false},         // too long
		{"MWTY306PTU", "", false},          // u is in no id
		{"ord_1000_mwty306ptd9gg5y7", "", false},
		{"মওটিয়াই৩০৬", "", false},
		{"", "", false},
	} {
		got, ok := ticket.ParseNumber(c.in)
		require.Equal(t, c.ok, ok, c.in)
		require.Equal(t, c.want, got, c.in)
	}
}
