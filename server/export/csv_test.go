package export

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Rahim Uddin", "Rahim Uddin"},
		{"সুন্দরী খাতুন", "সুন্দরী খাতুন"},
		{"=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"},
		{"+8801711", "'+8801711"},
		{"-1", "'-1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tcmd", "'\tcmd"},
		{"", ""},
	} {
		require.Equal(t, tc.want, Text(tc.in), tc.in)
	}
}

func TestAmount(t *testing.T) {
	for minor, want := range map[int64]string{0: "0.00", 5: "0.05", 60000: "600.00", 123456: "1234.56", -2550: "-25.50"} {
		require.Equal(t, want, amount(minor))
	}
}

// Pieces sends what is written in pieces of at least its size, the rest
// on Flush, each a copy that later writes do not change.
func TestPieces(t *testing.T) {
	var got [][]byte
	p := NewPieces(4, func(b []byte) error { got = append(got, b); return nil })
	for _, s := range []string{"ab", "cd", "efghij", "k"} {
		n, err := p.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}
	require.Equal(t, [][]byte{[]byte("abcd"), []byte("efghij")}, got)
	require.NoError(t, p.Flush())
	require.NoError(t, p.Flush(), "nothing more to send")
	require.Equal(t, [][]byte{[]byte("abcd"), []byte("efghij"), []byte("k")}, got)
	require.Equal(t, "abcdefghijk", string(bytes.Join(got, nil)))
}
