package catalog_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/catalog"
)

// TestShowStatus: where a show stands is read from its times (decision
// 0441): a coach boards 30 minutes before it leaves and has arrived once
// its last stop's time has passed; a venue's show has no boarding nor
// arrival; a move reads "delayed" until boarding; a draft is a draft
// (decision 0455); a cancellation wins.
func TestShowStatus(t *testing.T) {
	at := time.Date(2026, 12, 30, 2, 0, 0, 0, time.UTC)
	moved := at.Add(-2 * time.Hour)
	published := at.Add(-30 * 24 * time.Hour)
	cancelled := at.Add(-24 * time.Hour)
	coach := catalog.Show{Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, StartsAt: at, PublishedAt: &published,
		Stops: []catalog.TripStop{{StopID: "dhaka"}, {StopID: "cumilla", Minutes: 90}, {StopID: "chattogram", Minutes: 300}}}
	delayed := coach
	delayed.ScheduledStartsAt = &moved
	gone := coach
	gone.CancelledAt = &cancelled
	concert := catalog.Show{Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, StartsAt: at, PublishedAt: &published}
	draft := concert
	draft.PublishedAt = nil
	for _, tc := range []struct {
		name string
		show catalog.Show
		now  time.Time
		want catalogv1.ShowStatus
	}{
		{"a coach the day before", coach, at.Add(-24 * time.Hour), catalogv1.ShowStatus_SHOW_STATUS_SCHEDULED},
		{"a coach 30 minutes before", coach, at.Add(-30 * time.Minute), catalogv1.ShowStatus_SHOW_STATUS_BOARDING},
		{"a coach at its time", coach, at, catalogv1.ShowStatus_SHOW_STATUS_DEPARTED},
		{"a coach between stops", coach, at.Add(3 * time.Hour), catalogv1.ShowStatus_SHOW_STATUS_DEPARTED},
		{"a coach at its last stop's time", coach, at.Add(5 * time.Hour), catalogv1.ShowStatus_SHOW_STATUS_ARRIVED},
		{"a delayed coach an hour before", delayed, at.Add(-time.Hour), catalogv1.ShowStatus_SHOW_STATUS_DELAYED},
		{"a delayed coach boarding", delayed, at.Add(-10 * time.Minute), catalogv1.ShowStatus_SHOW_STATUS_BOARDING},
		{"a cancelled coach", gone, at.Add(-time.Hour), catalogv1.ShowStatus_SHOW_STATUS_CANCELLED},
		{"a cancelled coach after its time", gone, at.Add(24 * time.Hour), catalogv1.ShowStatus_SHOW_STATUS_CANCELLED},
		{"a concert 10 minutes before", concert, at.Add(-10 * time.Minute), catalogv1.ShowStatus_SHOW_STATUS_SCHEDULED},
		{"a concert the next day", concert, at.Add(24 * time.Hour), catalogv1.ShowStatus_SHOW_STATUS_DEPARTED},
		{"a draft, whenever", draft, at.Add(-24 * time.Hour), catalogv1.ShowStatus_SHOW_STATUS_DRAFT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.show.Status(tc.now))
		})
	}
}
