package display

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTimeIsReadInTheShowsZone(t *testing.T) {
	at := time.Date(2026, 12, 30, 10, 0, 0, 0, time.UTC)
	dhaka, err := Zone("")
	require.NoError(t, err)
	london, err := Zone("Europe/London")
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		loc  *time.Location
		lang Lang
		want string
	}{
		{"Dhaka in English", dhaka, English, "Wed 30 Dec 2026, 16:00 (Asia/Dhaka, +06)"},
		{"Dhaka in Bengali", dhaka, Bengali, "বুধ ৩০ ডিসেম্বর ২০২৬, ১৬:০০ (Asia/Dhaka, +০৬)"},
		{"London in English", london, English, "Wed 30 Dec 2026, 10:00 (Europe/London, GMT)"},
	} {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, Time(at, c.loc, c.lang)) })
	}
	require.Equal(t, "2026-12-30T16:00:00+06:00", Local(at, dhaka))
}

func TestDayIsTheLocalDay(t *testing.T) {
	dhaka, _ := Zone(DefaultZone)
	// 02:00 in Dhaka on the 31st is 20:00 UTC on the 30th.
	at := time.Date(2026, 12, 30, 20, 0, 0, 0, time.UTC)
	require.Equal(t, 20261231, Day(at, dhaka))
	require.Equal(t, 20261230, Day(at, time.UTC))
}

func TestZoneRefusesWhatIsNotAnIANAZone(t *testing.T) {
	for _, name := range []string{"Local", "Asia/Dacca/", "Mars/Olympus", "../etc/passwd", "+06:00"} {
		_, err := Zone(name)
		require.True(t, errors.Is(err, ErrUnknownZone), name)
	}
	require.Equal(t, DefaultZone, ZoneOrDefault("Mars/Olympus").String())
}

func TestMoney(t *testing.T) {
	require.Equal(t, "৳1,200.00", Money(120000, "BDT", English))
	require.Equal(t, "৳১,২০০.০০", Money(120000, "BDT", Bengali))
	require.Equal(t, "৳0.50", Money(50, "BDT", English))
	require.Equal(t, "USD 1,234,567.05", Money(123456705, "USD", English))
	require.Equal(t, "-৳12.00", Money(-1200, "BDT", English))
}

func TestParseLang(t *testing.T) {
	require.Equal(t, Bengali, ParseLang("bn-BD"))
	require.Equal(t, Bengali, ParseLang("BN"))
	require.Equal(t, English, ParseLang(""))
	require.Equal(t, English, ParseLang("en-GB"))
}
