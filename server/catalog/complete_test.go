package catalog

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
)

// These tests check complete and checkBounds on their own: the rules a
// show must meet before anything is written. catalog_test.go checks that
// CreateShow applies them and writes nothing when they refuse.

var testNow = time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)

// validShow is a show complete accepts: it starts a month after now and
// has one section and one GA area.
func validShow() Show {
	return Show{
		Title: "Shironamhin live", Venue: "Army Stadium", Currency: "BDT",
		StartsAt: testNow.Add(30 * 24 * time.Hour),
		Sections: []Section{{Name: "Front", Rows: []string{"A", "B"}, SeatsPerRow: 10, PriceMinor: 150000}},
		GAAreas:  []GAArea{{Name: "Field", Capacity: 500, PriceMinor: 80000}},
	}
}

// TestCompleteFillsTheDefaults: what a request leaves unset takes the
// catalog's defaults, and what it sets stays.
func TestCompleteFillsTheDefaults(t *testing.T) {
	t.Parallel()
	fee, commission := 250, 700
	for _, tc := range []struct {
		name  string
		edit  func(*Show)
		check func(t *testing.T, s Show)
	}{{
		name: "unset rules take the defaults",
		check: func(t *testing.T, s Show) {
			require.Equal(t, "creator", s.Operator, "the creator operates a show that names no operator")
			require.Equal(t, "creator", s.CreatedBy)
			require.Equal(t, testNow, s.CreatedAt)
			require.Equal(t, testNow, s.OnSaleAt, "on sale now")
			require.Equal(t, display.DefaultZone, s.TimeZone)
			require.Equal(t, DefaultHoldTTL, s.HoldTTL)
			require.Equal(t, DefaultPaymentExtension, s.PaymentExtension)
			require.Equal(t, DefaultSeatCap, s.MaxSeatsPerAccount)
			require.Equal(t, DefaultSeatCap, s.MaxSeatsPerHold)
			require.Equal(t, DefaultCommissionBps, *s.CommissionBps)
			require.Equal(t, DefaultCancellationFeeBps, *s.CancellationFeeBps)
			require.Equal(t, 20, s.SeatCount, "2 rows of 10")
			require.Nil(t, s.WaitingRoom)
		},
	}, {
		name: "set rules stay",
		edit: func(s *Show) {
			s.Operator, s.TimeZone = "Shohoz Live", "Asia/Kolkata"
			s.OnSaleAt = testNow.Add(time.Hour)
			s.HoldTTL, s.PaymentExtension = 3*time.Minute, time.Minute
			s.MaxSeatsPerAccount, s.MaxSeatsPerHold = 6, 4
			s.CommissionBps, s.CancellationFeeBps = &commission, &fee
		},
		check: func(t *testing.T, s Show) {
			require.Equal(t, "Shohoz Live", s.Operator)
			require.Equal(t, "Asia/Kolkata", s.TimeZone)
			require.Equal(t, testNow.Add(time.Hour), s.OnSaleAt)
			require.Equal(t, 3*time.Minute, s.HoldTTL)
			require.Equal(t, time.Minute, s.PaymentExtension)
			require.Equal(t, 6, s.MaxSeatsPerAccount)
			require.Equal(t, 4, s.MaxSeatsPerHold)
			require.Equal(t, 700, *s.CommissionBps)
			require.Equal(t, 250, *s.CancellationFeeBps)
		},
	}, {
		name: "the per-hold limit defaults to no more than the account's cap",
		edit: func(s *Show) { s.MaxSeatsPerAccount = 4 },
		check: func(t *testing.T, s Show) {
			require.Equal(t, 4, s.MaxSeatsPerHold)
		},
	}, {
		name: "times are kept in UTC",
		edit: func(s *Show) {
			dhaka, err := display.Zone(display.DefaultZone)
			require.NoError(t, err)
			s.StartsAt = s.StartsAt.In(dhaka)
		},
		check: func(t *testing.T, s Show) {
			require.Equal(t, time.UTC, s.StartsAt.Location())
			require.Equal(t, testNow.Add(30*24*time.Hour), s.StartsAt)
		},
	}, {
		name: "known places take their official names and ids, unknown ones stay as typed",
		edit: func(s *Show) { s.Origin, s.Destination = "ctg", "Nowhere Ghat" },
		check: func(t *testing.T, s Show) {
			require.Equal(t, "Chattogram", s.Origin)
			require.Equal(t, "chattogram", s.OriginPlaceID)
			require.Equal(t, "Nowhere Ghat", s.Destination)
			require.Empty(t, s.DestinationPlaceID)
		},
	}, {
		name: "seats are counted over every section",
		edit: func(s *Show) {
			s.Sections = append(s.Sections, Section{Name: "Back", Rows: []string{"C", "D", "E"}, SeatsPerRow: 7, PriceMinor: 1})
		},
		check: func(t *testing.T, s Show) {
			require.Equal(t, 20+21, s.SeatCount)
		},
	}, {
		name: "a show of GA only",
		edit: func(s *Show) { s.Sections = nil },
		check: func(t *testing.T, s Show) {
			require.Zero(t, s.SeatCount)
			require.Len(t, s.GAAreas, 1)
		},
	}, {
		name: "a waiting room takes its defaults, its window ending two hours after the opening",
		edit: func(s *Show) { s.WaitingRoom = &WaitingRoom{} },
		check: func(t *testing.T, s Show) {
			require.Equal(t, &WaitingRoom{MinRate: DefaultMinAdmissionRate, MaxRate: DefaultMaxAdmissionRate,
				AdmittedTTL: DefaultAdmittedTTL, EndsAt: testNow.Add(DefaultWaitingRoomWindow)}, s.WaitingRoom)
		},
	}, {
		name: "a waiting room's window ends when the show starts, if sooner",
		edit: func(s *Show) {
			s.StartsAt = testNow.Add(time.Hour)
			s.WaitingRoom = &WaitingRoom{MinRate: 500}
		},
		check: func(t *testing.T, s Show) {
			require.Equal(t, testNow.Add(time.Hour), s.WaitingRoom.EndsAt)
			require.Equal(t, 500, s.WaitingRoom.MaxRate, "the highest rate is at least the lowest")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := validShow()
			if tc.edit != nil {
				tc.edit(&s)
			}
			require.NoError(t, complete(&s, "creator", testNow))
			tc.check(t, s)
		})
	}
}

// TestGABucketsDefault: an area's places are spread over a bucket per 250
// places, at least one and at most 64 (decision 0211), and never
// more buckets than places.
func TestGABucketsDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		capacity, buckets, want int
	}{
		{capacity: 1, want: 1},
		{capacity: 250, want: 1},
		{capacity: 251, want: 2},
		{capacity: 1000, want: 4},
		{capacity: 1001, want: 5},
		{capacity: 16000, want: 64},
		{capacity: 16001, want: 64},
		{capacity: 100000, want: 64},
		{capacity: 1000, buckets: 3, want: 3},   // set: kept
		{capacity: 1000, buckets: 80, want: 80}, // set: kept beyond the default's ceiling
		{capacity: 5, buckets: 9, want: 5},      // never more buckets than places
	} {
		s := validShow()
		s.GAAreas = []GAArea{{Name: "Field", Capacity: tc.capacity, Buckets: tc.buckets}}
		require.NoError(t, complete(&s, "creator", testNow))
		require.Equal(t, tc.want, s.GAAreas[0].Buckets, "capacity %d, buckets %d", tc.capacity, tc.buckets)
	}
}

// TestCompleteRefuses: every show complete refuses, with the field at
// fault; and the bounds themselves are allowed.
func TestCompleteRefuses(t *testing.T) {
	t.Parallel()
	rows := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("R%d", i))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Show)
		field string // empty: accepted
	}{
		{"an unknown time zone", func(s *Show) { s.TimeZone = "Mars/Olympus" }, "time_zone"},
		{"a time zone by offset", func(s *Show) { s.TimeZone = "+06:00" }, "time_zone"},
		{"starts when sales open", func(s *Show) { s.OnSaleAt = s.StartsAt }, "starts_at"},
		{"starts before sales open", func(s *Show) { s.OnSaleAt = s.StartsAt.Add(time.Second) }, "starts_at"},
		{"starts in the past (sales open now)", func(s *Show) { s.StartsAt = testNow.Add(-time.Hour) }, "starts_at"},
		{"starts a microsecond after sales open", func(s *Show) { s.OnSaleAt = s.StartsAt.Add(-time.Microsecond) }, ""},
		{"a row twice in a section", func(s *Show) { s.Sections[0].Rows = []string{"A", "A"} }, "sections"},
		{"a row in two sections", func(s *Show) {
			s.Sections = append(s.Sections, Section{Name: "Back", Rows: []string{"C", "B"}, SeatsPerRow: 1})
		}, "sections"},
		{"a GA area twice", func(s *Show) { s.GAAreas = append(s.GAAreas, GAArea{Name: "Field", Capacity: 10}) }, "ga_areas"},
		{"two GA areas", func(s *Show) { s.GAAreas = append(s.GAAreas, GAArea{Name: "Balcony", Capacity: 10}) }, ""},
		{"no seats and no GA area", func(s *Show) { s.Sections, s.GAAreas = nil, nil }, "sections"},
		{"sections without seats and no GA area", func(s *Show) {
			s.Sections[0].SeatsPerRow, s.GAAreas = 0, nil
		}, "sections"},
		{"one seat more than a show may have", func(s *Show) {
			s.Sections = []Section{{Name: "All", Rows: rows(1000), SeatsPerRow: MaxSeats / 1000}, {Name: "One", Rows: []string{"Z"}, SeatsPerRow: 1}}
		}, "sections"},
		{"as many seats as a show may have", func(s *Show) {
			s.Sections = []Section{{Name: "All", Rows: rows(1000), SeatsPerRow: MaxSeats / 1000}}
		}, ""},
		{"a negative seat price", func(s *Show) { s.Sections[0].PriceMinor = -1 }, "sections[0].price_minor"},
		{"a seat price over the bound", func(s *Show) {
			s.Sections = append(s.Sections, Section{Name: "VIP", Rows: []string{"V"}, SeatsPerRow: 1, PriceMinor: amount.MaxPriceMinor + 1})
		}, "sections[1].price_minor"},
		{"a seat price at the bound", func(s *Show) { s.Sections[0].PriceMinor = amount.MaxPriceMinor }, ""},
		{"a free seat", func(s *Show) { s.Sections[0].PriceMinor = 0 }, ""},
		{"a negative GA price", func(s *Show) { s.GAAreas[0].PriceMinor = -5 }, "ga_areas[0].price_minor"},
		{"a GA price over the bound", func(s *Show) {
			s.GAAreas = append(s.GAAreas, GAArea{Name: "Pit", Capacity: 1, PriceMinor: amount.MaxPriceMinor + 1})
		}, "ga_areas[1].price_minor"},
		{"a negative account cap", func(s *Show) { s.MaxSeatsPerAccount = -1 }, "max_seats_per_account"},
		{"an account cap over the bound", func(s *Show) { s.MaxSeatsPerAccount = amount.MaxPlacesPerHold + 1 }, "max_seats_per_account"},
		{"an account cap at the bound", func(s *Show) { s.MaxSeatsPerAccount = amount.MaxPlacesPerHold }, ""},
		{"a negative per-hold limit", func(s *Show) { s.MaxSeatsPerHold = -1 }, "max_seats_per_hold"},
		{"a per-hold limit over the bound", func(s *Show) { s.MaxSeatsPerHold = amount.MaxPlacesPerHold + 1 }, "max_seats_per_hold"},
		{"a waiting room whose lowest rate is over its highest", func(s *Show) {
			s.WaitingRoom = &WaitingRoom{MinRate: 50, MaxRate: 40}
		}, "waiting_room.min_admission_rate"},
		{"a waiting room whose window ends when sales open", func(s *Show) {
			s.OnSaleAt = testNow.Add(time.Hour)
			s.WaitingRoom = &WaitingRoom{EndsAt: testNow.Add(time.Hour)}
		}, "waiting_room.ends_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validShow()
			tc.edit(&s)
			err := complete(&s, "creator", testNow)
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			invalid, ok := fault.As(err)
			require.True(t, ok && invalid.Reason == fault.ShowInvalid, "want SHOW_INVALID, got %v", err)
			require.Equal(t, tc.field, invalid.Field, "error: %v", err)
			require.NotEmpty(t, invalid.Message)
		})
	}
}
