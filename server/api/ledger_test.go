package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/gen/seatghor/ledger/v1/ledgerv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/pg"
)

// ledgerClient returns a ledger client that authenticates as sub with role.
func ledgerClient(tb testing.TB, env *apptest.Env, h connect.HTTPClient, sub string, role auth.Role, opts ...connect.ClientOption) ledgerv1connect.LedgerServiceClient {
	token := env.Token(tb, sub, role)
	opts = append(opts, connect.WithInterceptors(connect.UnaryInterceptorFunc(
		func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
				req.Header().Set("Authorization", "Bearer "+token)
				return next(ctx, req)
			}
		})))
	return ledgerv1connect.NewLedgerServiceClient(h, env.URL, opts...)
}

// TestLedgerSeedExample reproduces on the platform's own pools (the
// application role): the seed's five postings, then the trial balance
// through the real Connect handler, in the contract's JSON.
func TestLedgerSeedExample(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	shards := env.App.Router.Shards()
	now := time.Now()
	tk := func(taka int64) int64 { return taka * 100 }
	post := func(db *pg.Pool, j ledger.Journal) (posted bool, err error) {
		err = pg.InTx(ctx, db, func(tx pgx.Tx) error {
			posted, err = ledger.Post(ctx, tx, j, now)
			return err
		})
		return posted, err
	}
	steps := []struct {
		name   string
		db     *pg.Pool
		j      ledger.Journal
		posted bool
	}{
		{"T1 book O1", shards[0], ledger.BookingJournal("T1 book O1", "O1", 0, "BDT", tk(1700), 1000), true},
		{"T2 fee O1", shards[0], ledger.FeeJournal("T2 fee O1", "O1", 0, "BDT", tk(30)), true},
		// O2's show lives on the other shard: the balance sums both.
		{"T3 book O2", shards[1], ledger.BookingJournal("T3 book O2", "O2", 0, "BDT", tk(850), 1000), true},
		{"T3 book O2 again", shards[1], ledger.BookingJournal("T3 book O2", "O2", 0, "BDT", tk(850), 1000), false},
		{"T4 refund O1", shards[0], ledger.RefundJournal("T4 refund O1", "O1", 0, "BDT", tk(1700), tk(1700), 1000), true},
	}
	for _, s := range steps {
		posted, err := post(s.db, s.j)
		require.NoError(t, err, s.name)
		require.Equal(t, s.posted, posted, s.name)
	}
	// The seed's lines, exactly.
	require.Equal(t, []ledger.Line{{Account: "gateway_clearing", AmountMinor: tk(1700)}, {Account: "operator_payable", AmountMinor: -tk(1530)}, {Account: "platform_revenue", AmountMinor: -tk(170)}},
		steps[0].j.Lines)
	require.Equal(t, []ledger.Line{{Account: "operator_payable", AmountMinor: tk(1530)}, {Account: "platform_revenue", AmountMinor: tk(170)}, {Account: "gateway_clearing", AmountMinor: -tk(1700)}},
		steps[4].j.Lines)
	_, err := post(shards[0], ledger.Journal{TxnID: "T5 payout", Kind: ledger.KindPayout, Currency: "BDT",
		Lines: []ledger.Line{{Account: "operator_payable", AmountMinor: tk(765)}, {Account: "bank", AmountMinor: -tk(750)}}}) // a typo: 750 instead of 765
	require.ErrorIs(t, err, ledger.ErrUnbalanced)
	var ue *ledger.UnbalancedError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, int64(1500), ue.SumMinor, "REJECTED: lines sum to 1500 paisa")

	// The contract: POST …/GetTrialBalance {} as an admin.
	req, err := http.NewRequest(http.MethodPost, env.URL+"/seatghor.ledger.v1.LedgerService/GetTrialBalance", bytes.NewBufferString("{}"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+env.Token(t, "finance", auth.RoleAdmin))
	resp, err := env.HTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	t.Logf("GetTrialBalance {} → %s", body)
	var got struct {
		Accounts []struct {
			Account      string `json:"account"`
			Currency     string `json:"currency"`
			BalanceMinor string `json:"balanceMinor"`
		} `json:"accounts"`
		SumMinor           *string `json:"sumMinor"`
		UnbalancedJournals *int    `json:"unbalancedJournals"`
		Balanced           bool    `json:"balanced"`
	}
	require.NoError(t, json.Unmarshal(body, &got), "%s", body)
	balances := map[string]string{}
	for _, a := range got.Accounts {
		require.Equal(t, "BDT", a.Currency)
		balances[a.Account] = a.BalanceMinor
	}
	require.Equal(t, map[string]string{
		"gateway_clearing": "82000",  // 820.00 Tk
		"operator_payable": "-76500", // −765.00
		"platform_revenue": "-8500",  // −85.00
		"gateway_fees":     "3000",   // 30.00
	}, balances, "%s", body)
	require.NotNil(t, got.SumMinor, "sumMinor is always present: %s", body)
	require.Equal(t, "0", *got.SumMinor)
	require.NotNil(t, got.UnbalancedJournals, "unbalancedJournals is always present: %s", body)
	require.Equal(t, 0, *got.UnbalancedJournals)
	require.True(t, got.Balanced)

	// The same over gRPC, and per shard.
	admin := ledgerClient(t, env, env.H2C, "finance", auth.RoleAdmin, connect.WithGRPC())
	one := int32(1)
	tb, err := admin.GetTrialBalance(ctx, connect.NewRequest(&ledgerv1.GetTrialBalanceRequest{Shard: &one}))
	require.NoError(t, err)
	require.Equal(t, []int32{1}, tb.Msg.GetShards())
	require.Len(t, tb.Msg.GetAccounts(), 3, "O2's booking only")
	require.Zero(t, tb.Msg.GetSumMinor())

	// The journal, newest first; T3 once.
	list, err := admin.ListJournal(ctx, connect.NewRequest(&ledgerv1.ListJournalRequest{}))
	require.NoError(t, err)
	require.Len(t, list.Msg.GetTransactions(), 4)
	refs := map[string]int{}
	for _, txn := range list.Msg.GetTransactions() {
		refs[txn.GetTxnId()]++
	}
	require.Equal(t, map[string]int{"T1 book O1": 1, "T2 fee O1": 1, "T3 book O2": 1, "T4 refund O1": 1}, refs)
	refunds, err := admin.ListJournal(ctx, connect.NewRequest(&ledgerv1.ListJournalRequest{
		Kind: ledgerv1.TransactionKind_TRANSACTION_KIND_REFUND}))
	require.NoError(t, err)
	require.Len(t, refunds.Msg.GetTransactions(), 1)
	require.Len(t, refunds.Msg.GetTransactions()[0].GetLines(), 3)

	// The periodic check feeds the alert metric.
	_, err = env.App.Ledger.Check(ctx)
	require.NoError(t, err)
	mresp, err := env.HTTP.Get(env.AdminURL + "/metrics")
	require.NoError(t, err)
	defer mresp.Body.Close()
	metrics, err := io.ReadAll(mresp.Body)
	require.NoError(t, err)
	require.Contains(t, string(metrics), "seatghor_ledger_unbalanced_transactions 0\n")
	require.Contains(t, string(metrics), `seatghor_ledger_trial_balance_minor{currency="BDT"} 0`)
}

// TestLedgerAdminOnly: the ledger is for admins; everyone else is refused,
// over Connect and gRPC; bad input is invalid_argument.
func TestLedgerAdminOnly(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	for _, role := range []auth.Role{auth.RoleUser, auth.RoleOperator} {
		for name, h := range map[string]ledgerv1connect.LedgerServiceClient{
			"connect": ledgerClient(t, env, env.HTTP, "mallory", role),
			"grpc":    ledgerClient(t, env, env.H2C, "mallory", role, connect.WithGRPC()),
		} {
			_, err := h.GetTrialBalance(ctx, connect.NewRequest(&ledgerv1.GetTrialBalanceRequest{}))
			require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s %s: %v", role, name, err)
			_, err = h.ListJournal(ctx, connect.NewRequest(&ledgerv1.ListJournalRequest{}))
			require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s %s: %v", role, name, err)
		}
	}
	anon := ledgerv1connect.NewLedgerServiceClient(env.HTTP, env.URL)
	_, err := anon.GetTrialBalance(ctx, connect.NewRequest(&ledgerv1.GetTrialBalanceRequest{}))
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))

	admin := ledgerClient(t, env, env.HTTP, "finance", auth.RoleAdmin)
	empty, err := admin.GetTrialBalance(ctx, connect.NewRequest(&ledgerv1.GetTrialBalanceRequest{}))
	require.NoError(t, err)
	require.True(t, empty.Msg.GetBalanced(), "an empty ledger balances")
	seven := int32(7)
	_, err = admin.GetTrialBalance(ctx, connect.NewRequest(&ledgerv1.GetTrialBalanceRequest{Shard: &seven}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
	_, err = admin.ListJournal(ctx, connect.NewRequest(&ledgerv1.ListJournalRequest{PageToken: "garbage"}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
	// RunReconciliation is the payment work's.
	_, err = admin.RunReconciliation(ctx, connect.NewRequest(&ledgerv1.RunReconciliationRequest{}))
	require.Error(t, err)
}
