package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"connectrpc.com/connect"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	counterv1 "github.com/seatghor/seatghor/gen/seatghor/counter/v1"
	"github.com/seatghor/seatghor/server/auth"
)

// The counter's desk (issue 25's channel in the chaos load): a clerk of the
// run's organisation opens a cash shift, sells seats of the buses for cash
// from the same seats as the crowd, through the faults, and takes some
// back; after the load the shift is closed with the drawer counted as
// expected. What the run was told of each sale and refund is kept to check
// against the shift's report, which the ledger sums (R2).

// desk is what the run saw of its counter.
type desk struct {
	clerk   *caller
	shift   string
	sold    map[string]int64 // order id → cash taken, as SellTickets answered
	refunds map[string]int64 // order id → cash given back (negative), as RefundTickets answered
	report  *counterv1.ShiftReport
	err     error // why the desk could not open or close
}

// openDesk makes the run's clerk a counter member of the organisation and
// opens its shift with an empty drawer.
func (r *run) openDesk(ctx context.Context) error {
	clerk := "chaos-" + r.tag + "-clerk"
	if _, err := call(ctx, r.rec, r.admin, "AddOrganizationMember", func(ctx context.Context, c clients) (*connect.Response[catalogv1.AddOrganizationMemberResponse], error) {
		return c.catalog.AddOrganizationMember(ctx, connect.NewRequest(&catalogv1.AddOrganizationMemberRequest{
			OrganizationId: r.d.Organization, UserId: clerk, Role: catalogv1.OrganizationRole_ORGANIZATION_ROLE_COUNTER}))
	}); err != nil {
		return fmt.Errorf("chaos: make the counter clerk: %w", err)
	}
	tok, err := r.token(clerk, auth.RoleOperator, 0)
	if err != nil {
		return err
	}
	r.desk = &desk{clerk: newCaller(r.hc, r.d.Cluster.APIs(), tok, 1), sold: map[string]int64{}, refunds: map[string]int64{}}
	s, err := call(ctx, r.rec, r.desk.clerk, "OpenShift", func(ctx context.Context, c clients) (*connect.Response[counterv1.OpenShiftResponse], error) {
		return c.counter.OpenShift(ctx, connect.NewRequest(&counterv1.OpenShiftRequest{OrganizationId: r.d.Organization,
			CounterId: "chaos-desk", OpeningFloat: &commonv1.Money{Currency: "BDT"}}))
	})
	if err != nil {
		return fmt.Errorf("chaos: open the counter's shift: %w", err)
	}
	r.desk.shift = s.Msg.GetShift().GetShiftId()
	return nil
}

// counterSales sells a seat of a bus every few hundred milliseconds until
// the load ends, and takes one sale in five back.
func (r *run) counterSales(ctx context.Context, rnd *rand.Rand) {
	var buses []show
	for _, s := range r.shows {
		if s.Bus {
			buses = append(buses, s)
		}
	}
	if len(buses) == 0 {
		return
	}
	every(ctx, 300*time.Millisecond, func(i int) {
		s := buses[rnd.IntN(len(buses))]
		free := r.freeSeats(ctx, r.desk.clerk, s.ID, s.Seats)
		if len(free) == 0 {
			return
		}
		seat := free[rnd.IntN(len(free))]
		sold, err := call(ctx, r.rec, r.desk.clerk, "SellTickets", func(ctx context.Context, c clients) (*connect.Response[counterv1.SellTicketsResponse], error) {
			return c.counter.SellTickets(ctx, connect.NewRequest(&counterv1.SellTicketsRequest{ShiftId: r.desk.shift, ShowId: s.ID,
				Seats: []string{seat}, Contact: &commonv1.Contact{Phone: fmt.Sprintf("01711-%06d", i), Language: "bn"}}))
		})
		if err != nil {
			return // taken by the crowd meanwhile, or a fault: the seat stays theirs
		}
		order := sold.Msg.GetOrder().GetOrderId()
		r.mu.Lock()
		r.desk.sold[order] = sold.Msg.GetEntry().GetAmount().GetAmountMinor()
		r.mu.Unlock()
		if rnd.IntN(5) > 0 {
			return
		}
		back, err := call(ctx, r.rec, r.desk.clerk, "RefundTickets", func(ctx context.Context, c clients) (*connect.Response[counterv1.RefundTicketsResponse], error) {
			return c.counter.RefundTickets(ctx, connect.NewRequest(&counterv1.RefundTicketsRequest{ShiftId: r.desk.shift, OrderId: order}))
		})
		if err == nil {
			r.mu.Lock()
			r.desk.refunds[order] = back.Msg.GetEntry().GetAmount().GetAmountMinor()
			r.mu.Unlock()
		}
	})
}

// closeDesk closes the shift with the drawer counted as the report expects
// it, after reading the report.
func (r *run) closeDesk(ctx context.Context) {
	if r.desk == nil || r.desk.shift == "" {
		return
	}
	open, err := call(ctx, r.rec, r.desk.clerk, "GetShift", func(ctx context.Context, c clients) (*connect.Response[counterv1.GetShiftResponse], error) {
		return c.counter.GetShift(ctx, connect.NewRequest(&counterv1.GetShiftRequest{ShiftId: r.desk.shift}))
	})
	if err != nil {
		r.desk.err = fmt.Errorf("read the shift: %w", err)
		return
	}
	closed, err := call(ctx, r.rec, r.desk.clerk, "CloseShift", func(ctx context.Context, c clients) (*connect.Response[counterv1.CloseShiftResponse], error) {
		return c.counter.CloseShift(ctx, connect.NewRequest(&counterv1.CloseShiftRequest{ShiftId: r.desk.shift,
			CountedCash: open.Msg.GetReport().GetExpectedCash()}))
	})
	if err != nil {
		r.desk.err = fmt.Errorf("close the shift: %w", err)
		return
	}
	r.desk.report = closed.Msg.GetReport()
	r.say("counter: %d sales, %d taken back; the shift closed", len(r.desk.sold), len(r.desk.refunds))
}

// deskProblems is what the counter's shift report breaks: a sale or refund
// the clerk was answered that the report lacks or has at another amount,
// entries that do not sum to the ledger's net, a drawer counted as expected
// that shows a difference. checked is how many answers it compared.
func (r *run) deskProblems() (checked int64, problems []string) {
	if r.desk == nil {
		return 0, []string{"no counter desk"}
	}
	if r.desk.err != nil || r.desk.report == nil {
		return 0, []string{fmt.Sprint("no report: ", r.desk.err)}
	}
	rep := r.desk.report
	inReport := map[string]int64{}
	var sum int64
	for _, e := range rep.GetEntries() {
		inReport[fmt.Sprint(e.GetKind(), e.GetOrderId())] += e.GetAmount().GetAmountMinor()
		sum += e.GetAmount().GetAmountMinor()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for kind, seen := range map[counterv1.CashEntryKind]map[string]int64{
		counterv1.CashEntryKind_CASH_ENTRY_KIND_SALE: r.desk.sold, counterv1.CashEntryKind_CASH_ENTRY_KIND_REFUND: r.desk.refunds} {
		for order, amount := range seen {
			checked++
			if got, ok := inReport[fmt.Sprint(kind, order)]; !ok || got != amount {
				problems = append(problems, fmt.Sprintf("%s of %s: answered %d, in the report %d", kind, order, amount, got))
			}
		}
	}
	if net := rep.GetLedgerNet().GetAmountMinor(); net != sum {
		problems = append(problems, fmt.Sprintf("the entries sum to %d, the ledger to %d", sum, net))
	}
	if d := rep.GetDifference().GetAmountMinor(); d != 0 {
		problems = append(problems, fmt.Sprintf("the drawer counted as expected differs by %d", d))
	}
	return checked, problems
}
