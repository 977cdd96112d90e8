package ticket_test

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/ticket"
)

func TestIDLeadsToOrderAndShow(t *testing.T) {
	t.Parallel()
	order := shard.NewID("ord", 7)
	id, err := ticket.ID(order, 12)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(id, "tkt_7_"))
	show, gotOrder, pos, err := ticket.Parse(id)
	require.NoError(t, err)
	require.EqualValues(t, 7, show)
	require.Equal(t, order, gotOrder)
	require.Equal(t, 12, pos)
	for _, bad := range []string{"", "tkt_7_x_1", "hld_7_0123456789abcdef_001", "tkt_7_0123456789abcdef_0",
		"tkt_7_0123456789abcdef_000", "tkt_0_0123456789abcdef_001", "tkt_7_0123456789abcdef"} {
		_, _, _, err := ticket.Parse(bad)
		require.ErrorIs(t, err, shard.ErrBadID, bad)
	}
}

func TestCodesAreSigned(t *testing.T) {
	t.Parallel()
	codes := ticket.NewCodes(keyset.FromSecret("secret", keyset.TicketCodes))
	code := codes.Sign("tkt_7_0123456789abcdef_001", "A1")
	id, place, err := codes.Verify(code)
	require.NoError(t, err)
	require.Equal(t, "tkt_7_0123456789abcdef_001", id)
	require.Equal(t, "A1", place)

	// Another secret, an altered payload, a cut signature: refused.
	_, _, err = ticket.NewCodes(keyset.FromSecret("other", keyset.TicketCodes)).Verify(code)
	require.ErrorIs(t, err, ticket.ErrBadCode)
	forged := ticket.NewCodes(keyset.FromSecret("other", keyset.TicketCodes)).Sign("tkt_7_0123456789abcdef_001", "A1")
	_, _, err = codes.Verify(forged)
	require.ErrorIs(t, err, ticket.ErrBadCode)
	parts := strings.Split(code, ".")
	swapped := parts[0] + "." + ticket.NewCodes(keyset.FromSecret("x", keyset.TicketCodes)).Sign("tkt_7_0123456789abcdef_002", "A2")[5:]
	_, _, err = codes.Verify(swapped)
	require.ErrorIs(t, err, ticket.ErrBadCode)
	for _, bad := range []string{"", "SGT1", code + "x", code[:len(code)-1], "SGT2." + parts[1] + "." + parts[2]} {
		_, _, err = codes.Verify(bad)
		require.ErrorIs(t, err, ticket.ErrBadCode, bad)
	}
}

func TestFromBooking(t *testing.T) {
	t.Parallel()
	codes := ticket.NewCodes(keyset.FromSecret("secret", keyset.TicketCodes))
	order := shard.NewID("ord", 7)
	ga, err := ticket.FromBooking(&eventsv1.BookingConfirmed{ShowId: 7, OrderId: order, UserId: "u", GaArea: "Field",
		Quantity: 3, Total: &commonv1.Money{AmountMinor: 100, Currency: "BDT"}, OccurredAt: timestamppb.Now()}, codes)
	require.NoError(t, err)
	require.Len(t, ga, 3)
	var sum int64
	for i, tk := range ga {
		require.Equal(t, "Field", tk.GAArea)
		require.Equal(t, i+1, tk.Position)
		id, place, err := codes.Verify(tk.Code)
		require.NoError(t, err)
		require.Equal(t, tk.ID, id)
		require.Equal(t, "Field", place)
		sum += tk.PriceMinor
	}
	require.EqualValues(t, 100, sum, "the shares add up to the total")
	require.EqualValues(t, []int64{34, 33, 33}, []int64{ga[0].PriceMinor, ga[1].PriceMinor, ga[2].PriceMinor})
}

// TestFromBookingSeatPrices: each seat's ticket carries its own seat's
// price when the event has them (mixed-price orders are not averaged).
func TestFromBookingSeatPrices(t *testing.T) {
	t.Parallel()
	codes := ticket.NewCodes(keyset.FromSecret("secret", keyset.TicketCodes))
	ev := &eventsv1.BookingConfirmed{ShowId: 3, OrderId: shard.NewID("ord", 3), UserId: "u",
		Seats: []string{"A1", "K7"}, SeatPricesMinor: []int64{300000, 50000},
		Total: &commonv1.Money{AmountMinor: 350000, Currency: "BDT"}, OccurredAt: timestamppb.Now()}
	seated, err := ticket.FromBooking(ev, codes)
	require.NoError(t, err)
	require.Len(t, seated, 2)
	require.Equal(t, "A1", seated[0].Seat)
	require.EqualValues(t, 300000, seated[0].PriceMinor)
	require.EqualValues(t, 50000, seated[1].PriceMinor)

	ev.SeatPricesMinor = nil // an event from before seat prices: shared evenly
	even, err := ticket.FromBooking(ev, codes)
	require.NoError(t, err)
	require.EqualValues(t, 175000, even[0].PriceMinor)
}

// TestParseAcceptsOnlyThePrintedSpelling: "…_001" is the ticket; "…_0001",
// "…_+01", "…_1" and a show id with a sign or a leading zero name no ticket
// (decision 0066), so one ticket is one string.
func TestParseAcceptsOnlyThePrintedSpelling(t *testing.T) {
	t.Parallel()
	order := shard.NewID("ord", 7)
	random := strings.Split(order, "_")[2]
	for pos, want := range map[int]string{1: "001", 42: "042", 999: "999", 1000: "1000", 12345: "12345"} {
		id, err := ticket.ID(order, pos)
		require.NoError(t, err)
		require.Equal(t, "tkt_7_"+random+"_"+want, id)
		_, _, got, err := ticket.Parse(id)
		require.NoError(t, err, id)
		require.Equal(t, pos, got)
	}
	for _, other := range []string{"0001", "+01", "+001", "1", "01", "00001", "01000", "-01", " 001", "001 "} {
		_, _, _, err := ticket.Parse("tkt_7_" + random + "_" + other)
		require.ErrorIs(t, err, shard.ErrBadID, other)
	}
	for _, show := range []string{"07", "+7", "007"} {
		_, _, _, err := ticket.Parse("tkt_" + show + "_" + random + "_001")
		require.ErrorIs(t, err, shard.ErrBadID, show)
	}
}

// Rotating the ticket keys (decision 0085): the new key signs and its kid is
// in the code; codes of the old key scan while it is listed and are refused
// once it is removed.
func TestRotatingTicketKeys(t *testing.T) {
	t.Parallel()
	keys := func(s string) *keyset.Set {
		set, err := keyset.Parse(s)
		require.NoError(t, err)
		return set
	}
	oldSecret, newSecret := strings.Repeat("o", 32), strings.Repeat("n", 32)
	const id = "tkt_7_0123456789abcdef_001"
	old := ticket.NewCodes(keys("t1:"+oldSecret)).Sign(id, "A1")
	require.True(t, strings.HasPrefix(old, "SGT3.t1."), old)
	oldMAC := ticket.NewCodes(keys("t1:"+oldSecret)).SignMAC(id, "A1")
	require.True(t, strings.HasPrefix(oldMAC, "SGT2.t1."), oldMAC)

	during := ticket.NewCodes(keys("t2:" + newSecret + ",t1:" + oldSecret))
	got, place, err := during.Verify(old)
	require.NoError(t, err, "the old key still verifies while listed")
	require.Equal(t, id, got)
	require.Equal(t, "A1", place)
	_, _, err = during.Verify(oldMAC)
	require.NoError(t, err, "an HMAC code of the old key too")
	fresh := during.Sign(id, "A1")
	require.True(t, strings.HasPrefix(fresh, "SGT3.t2."), "the new key signs: %s", fresh)
	pub := during.PublicKeys()
	require.Len(t, pub, 2)
	require.Equal(t, []string{"t2", "t1"}, []string{pub[0].ID, pub[1].ID})
	require.True(t, pub[0].Signing)
	require.False(t, pub[1].Signing)
	require.True(t, offline(pub, old), "the old key's public key verifies its codes offline")
	require.True(t, offline(pub, fresh))

	after := ticket.NewCodes(keys("t2:" + newSecret))
	_, _, err = after.Verify(old)
	require.ErrorIs(t, err, ticket.ErrBadCode, "the old key is removed: its codes are refused")
	_, _, err = after.Verify(oldMAC)
	require.ErrorIs(t, err, ticket.ErrBadCode)
	require.False(t, offline(after.PublicKeys(), old), "and its public key is no longer published")
	_, _, err = after.Verify(fresh)
	require.NoError(t, err)
	// The kid is signed: a code cannot be moved to another listed key.
	_, _, err = during.Verify(strings.Replace(fresh, ".t2.", ".t1.", 1))
	require.ErrorIs(t, err, ticket.ErrBadCode)
}

// Codes printed before key sets ("SGT1.", no kid) were signed with the key
// derived from SEATGHOR_AUTH_SECRET: they scan while that secret is set,
// and are refused once it is gone.
func TestCodesOfTheFirstFormatScanWhileTheShorthandIsSet(t *testing.T) {
	t.Parallel()
	const secret, id = "the-platform-secret", "tkt_7_0123456789abcdef_001"
	// The first format, as it was signed.
	key := keyset.Derive(secret, keyset.TicketCodes).Secret
	payload := base64.RawURLEncoding.EncodeToString([]byte(id + "|A1"))
	m := hmac.New(sha256.New, key)
	m.Write([]byte("SGT1." + payload))
	legacy := "SGT1." + payload + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))

	listed, err := keyset.Parse("t1:" + strings.Repeat("n", 32))
	require.NoError(t, err)
	withShorthand, err := keyset.Resolve(listed, secret, keyset.TicketCodes)
	require.NoError(t, err)
	got, place, err := ticket.NewCodes(withShorthand).Verify(legacy)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.Equal(t, "A1", place)
	_, _, err = ticket.NewCodes(listed).Verify(legacy)
	require.ErrorIs(t, err, ticket.ErrBadCode, "without the shorthand the first format is void")
	_, _, err = ticket.NewCodes(keyset.FromSecret("another", keyset.TicketCodes)).Verify(legacy)
	require.ErrorIs(t, err, ticket.ErrBadCode)
}

// offline verifies a code as a gate device does (decision 0390): with the
// published public keys only, no secret.
func offline(keys []ticket.PublicKey, code string) bool {
	parts := strings.Split(code, ".")
	if len(parts) != 4 || parts[0] != "SGT3" {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil {
		return false
	}
	for _, k := range keys {
		if k.ID == parts[1] {
			return ed25519.Verify(k.Key, []byte(strings.Join(parts[:3], ".")), sig)
		}
	}
	return false
}

// TestCodesVerifyWithThePublicKeysOnly: a code is an Ed25519 signature a
// gate verifies with the published keys and no secret; an altered payload,
// another key's signature, an HMAC code passed off as Ed25519 and a code of
// an unknown key are refused, offline and at the server alike. HMAC codes
// (SGT2) of before still verify at the server (decision 0390).
func TestCodesVerifyWithThePublicKeysOnly(t *testing.T) {
	t.Parallel()
	const id = "tkt_7_0123456789abcdef_001"
	codes := ticket.NewCodes(keyset.FromSecret("secret", keyset.TicketCodes))
	code := codes.Sign(id, "A1")
	pub := codes.PublicKeys()
	require.Len(t, pub, 1)
	require.Len(t, pub[0].Key, ed25519.PublicKeySize)
	require.True(t, offline(pub, code))

	parts := strings.Split(code, ".")
	otherSeat := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString([]byte(id+"|A2")) + "." + parts[3]
	otherKey := ticket.NewCodes(keyset.FromSecret("other", keyset.TicketCodes)).Sign(id, "A1")
	mac := codes.SignMAC(id, "A1")
	macAsEd := "SGT3" + strings.TrimPrefix(mac, "SGT2")
	unknownKid := strings.Replace(code, ".shared.", ".gone.", 1)
	for name, bad := range map[string]string{"altered seat": otherSeat, "another key": otherKey,
		"HMAC as Ed25519": macAsEd, "unknown key": unknownKid} {
		require.False(t, offline(pub, bad), name)
		_, _, err := codes.Verify(bad)
		require.ErrorIs(t, err, ticket.ErrBadCode, name)
	}
	got, place, err := codes.Verify(mac)
	require.NoError(t, err, "an HMAC code of before still scans at the server")
	require.Equal(t, id, got)
	require.Equal(t, "A1", place)
	require.False(t, offline(pub, mac), "but carries no public signature")
}
