package notify_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/notify"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		name     string
		text     string
		enc      notify.Encoding
		units    int
		segments int
	}{
		{"empty", "", notify.GSM7, 0, 1},
		{"plain English", "Seat A1 booked", notify.GSM7, 14, 1},
		{"160 GSM characters fit one", strings.Repeat("a", 160), notify.GSM7, 160, 1},
		{"161 take two parts of 153", strings.Repeat("a", 161), notify.GSM7, 161, 2},
		{"306 take two", strings.Repeat("a", 306), notify.GSM7, 306, 2},
		{"307 take three", strings.Repeat("a", 307), notify.GSM7, 307, 3},
		{"an extension character costs two septets", strings.Repeat("a", 159) + "€", notify.GSM7, 161, 2},
		{"the taka sign is not GSM", "৳1,200", notify.UCS2, 6, 1},
		{"Bengali: 70 fit one", strings.Repeat("ক", 70), notify.UCS2, 70, 1},
		{"Bengali: 71 take two parts of 67", strings.Repeat("ক", 71), notify.UCS2, 71, 2},
		{"Bengali: 134 take two", strings.Repeat("ক", 134), notify.UCS2, 134, 2},
		{"Bengali: 135 take three", strings.Repeat("ক", 135), notify.UCS2, 135, 3},
		{"one Bengali letter makes all of it UCS-2", strings.Repeat("a", 69) + "ক", notify.UCS2, 70, 1},
		{"a character outside the BMP counts two units", strings.Repeat("a", 69) + "😀", notify.UCS2, 71, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, units, segments := notify.Count(tc.text)
			require.Equal(t, tc.enc, enc)
			require.Equal(t, tc.units, units)
			require.Equal(t, tc.segments, segments)
		})
	}
}
