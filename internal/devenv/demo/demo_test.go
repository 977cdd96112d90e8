package demo

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/display"
)

// TestDemoTimesAreDhakaWallClock: a time in a demo title is when the show
// starts in Dhaka, whatever the server's clock zone (decision 0170): the
// Cox's Bazar bus "10:00" is 04:00 UTC, and its ticket reads 10:00.
func TestDemoTimesAreDhakaWallClock(t *testing.T) {
	now := time.Date(2026, 11, 30, 20, 30, 0, 0, time.UTC) // already 1 December in Dhaka
	dhaka := display.ZoneOrDefault(display.DefaultZone)
	hhmm := regexp.MustCompile(`\d\d:\d\d$`)
	for _, s := range Shows(now) {
		require.Equal(t, display.DefaultZone, s.TimeZone, s.Title)
		if clock := hhmm.FindString(s.Title); clock != "" {
			require.Equal(t, clock, s.StartsAt.In(dhaka).Format("15:04"), s.Title)
		}
		if s.ID == 7 {
			require.Equal(t, time.Date(2026, 12, 31, 4, 0, 0, 0, time.UTC), s.StartsAt)
			require.Equal(t, "Thu 31 Dec 2026, 10:00 (Asia/Dhaka, +06)", display.Time(s.StartsAt, dhaka, display.English))
		}
	}
}

// TestReadmeNamesEveryDemoShow keeps the README's table of the demo shows
// true: its rows are exactly the shows Load creates, by id and title.
func TestReadmeNamesEveryDemoShow(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	row := regexp.MustCompile(`(?m)^\| (\d+) \| ([^|]+?) \|`)
	var documented []string
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		documented = append(documented, m[1]+" "+m[2])
	}
	var loaded []string
	for _, s := range Shows(time.Now()) {
		loaded = append(loaded, strconv.FormatInt(s.ID, 10)+" "+s.Title)
	}
	require.Equal(t, loaded, documented, "the README's demo shows (expected: the shows internal/devenv/demo loads)")
}
