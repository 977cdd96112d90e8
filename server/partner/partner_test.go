package partner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCommissionIsOnTheNetRoundedTowardZero(t *testing.T) {
	for _, tt := range []struct {
		name           string
		sales, refunds int64
		bps            int32
		want           int64
	}{
		{"nothing", 0, 0, 500, 0},
		{"5 % of 1 700 Tk", 170000, 0, 500, 8500},
		{"less a refund", 340000, 76500, 500, 13175},
		{"fractions are dropped once", 199, 0, 500, 9},
		{"more refunded than sold gives back, rounded toward zero", 0, 199, 500, -9},
		{"all of it", 1000, 0, 10000, 1000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := StatementLine{SalesMinor: tt.sales, RefundsMinor: tt.refunds}
			require.Equal(t, tt.want, l.CommissionMinor(tt.bps))
		})
	}
}

func TestSecretsArePrefixedRandomWords(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range []Mode{ModeLive, ModeTest} {
		for range 100 {
			s, err := newSecret(m)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(s, "sk_"+string(m)+"_"), s)
			body := strings.TrimPrefix(s, "sk_"+string(m)+"_")
			require.Len(t, body, 52, "32 bytes in base32")
			require.Regexp(t, `^[a-z2-7]+$`, body, "letters and digits only: never shaped like a JWT")
			require.False(t, seen[s])
			seen[s] = true
			require.Len(t, hashSecret(s), 32)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"live": ModeLive, "test": ModeTest} {
		got, err := ParseMode(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for _, bad := range []string{"", "LIVE", "sandbox"} {
		_, err := ParseMode(bad)
		require.Error(t, err, bad)
	}
}
