package catalog

import (
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
)

// FromRequest is the show a CreateShowRequest describes, as CreateShow
// takes it: the one reading of the request, for the API's CreateShow and
// for the timetable job (server/network), which makes its trips through
// the same request. The caller sets what the request does not say: Admin,
// InTx, and RouteID for a trip a timetable makes.
func FromRequest(m *catalogv1.CreateShowRequest) NewShow {
	in := NewShow{Show: Show{
		Kind: m.GetKind(), Title: m.GetTitle(), Operator: m.GetOperator(), OrganizationID: m.GetOrganizationId(),
		Origin:      m.GetOrigin(),
		Destination: m.GetDestination(), Venue: m.GetVenue(), StartsAt: m.GetStartsAt().AsTime(),
		Currency: m.GetCurrency(), HoldTTL: m.GetHoldTtl().AsDuration(),
		PaymentExtension:   m.GetPaymentExtension().AsDuration(),
		MaxSeatsPerAccount: int(m.GetMaxSeatsPerAccount()), MaxSeatsPerHold: int(m.GetMaxSeatsPerHold()),
		TimeZone: m.GetTimeZone(), TitleBn: m.GetTitleBn(), VenueBn: m.GetVenueBn(), OperatorBn: m.GetOperatorBn(),
		WalkInReserveSeats: int(m.GetWalkInReserveSeats()), WalkInReserve: m.GetWalkInReserve().AsDuration(),
	}, Draft: m.GetDraft()}
	if m.GetOnSaleAt() != nil {
		in.OnSaleAt = m.GetOnSaleAt().AsTime()
	}
	if m.Shard != nil {
		in.RequestedShard = m.Shard
	}
	if m.CommissionBps != nil {
		in.CommissionBps = new(int(m.GetCommissionBps()))
	}
	if m.CancellationFeeBps != nil {
		in.CancellationFeeBps = new(int(m.GetCancellationFeeBps()))
	}
	if w := m.GetWaitingRoom(); w.GetEnabled() {
		in.WaitingRoom = &WaitingRoom{MinRate: int(w.GetMinAdmissionRate()), MaxRate: int(w.GetMaxAdmissionRate()),
			AdmittedTTL: w.GetAdmittedTokenTtl().AsDuration(), SaleID: w.GetSaleId()}
		if w.GetEndsAt() != nil {
			in.WaitingRoom.EndsAt = w.GetEndsAt().AsTime()
		}
	}
	for _, s := range m.GetSections() {
		in.Sections = append(in.Sections, Section{Name: s.GetName(), NameBn: s.GetNameBn(), Rows: s.GetRows(),
			SeatsPerRow: int(s.GetSeatsPerRow()), PriceMinor: s.GetPriceMinor()})
	}
	for _, a := range m.GetGaAreas() {
		in.GAAreas = append(in.GAAreas, GAArea{Name: a.GetName(), Capacity: int(a.GetCapacity()),
			PriceMinor: a.GetPriceMinor(), Buckets: int(a.GetBuckets())})
	}
	in.Layout, in.LayoutTemplateID = LayoutFromProto(m.GetLayout()), m.GetLayoutTemplateId()
	for _, p := range m.GetSectionPrices() {
		in.SectionPrices = append(in.SectionPrices, SectionPrice{Section: p.GetSection(), PriceMinor: p.GetPriceMinor()})
	}
	in.Stops, in.Fares = tripOf(m)
	return in
}

// tripOf is a request's stops and fares (issue 24) as the catalog takes
// them; CreateShow checks them (decision 0351).
func tripOf(m *catalogv1.CreateShowRequest) ([]TripStop, []Fare) {
	var stops []TripStop
	for _, st := range m.GetStops() {
		s := TripStop{StopID: st.GetStopId(), Place: st.GetPlace(), Minutes: int(st.GetMinutesFromStart())}
		for _, c := range st.GetCounters() {
			s.Counters = append(s.Counters, Counter{ID: c.GetCounterId(), Name: c.GetName(), NameBn: c.GetNameBn(),
				Address: c.GetAddress(), AddressBn: c.GetAddressBn(), Boarding: c.GetBoarding(), Dropping: c.GetDropping(),
				Minutes: int(c.GetMinutesAfterDeparture())})
		}
		stops = append(stops, s)
	}
	var fares []Fare
	for _, f := range m.GetFares() {
		fares = append(fares, Fare{From: f.GetFromStopId(), To: f.GetToStopId(), SeatClass: f.GetSeatClass(),
			PriceMinor: f.GetPriceMinor()})
	}
	return stops, fares
}
