package webhook

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"
)

// TestGuardRefusesEverySpecialPurposeRange walks IANA's IPv4 and IPv6
// Special-Purpose Address Registries and the other ranges decision 0281
// refuses: the first, a middle and the last address of each are refused
// (given as the dialer gives them, "address:port"), and a public address
// beside each range is let through. Loopback passes only when dev or
// tests allow it.
func TestGuardRefusesEverySpecialPurposeRange(t *testing.T) {
	walked := map[netip.Prefix]bool{}
	for _, tc := range []struct {
		prefix string
		// beside is a public address next to the range: the one right
		// after it, or right before it when the next is refused too, or
		// the nearest global unicast one for IPv6 outside 2000::/3.
		beside string
	}{
		{"0.0.0.0/8", "1.0.0.0"},
		{"10.0.0.0/8", "11.0.0.0"},
		{"100.64.0.0/10", "100.128.0.0"},
		{"127.0.0.0/8", "128.0.0.0"},
		{"169.254.0.0/16", "169.255.0.0"},
		{"172.16.0.0/12", "172.32.0.0"},
		{"192.0.0.0/24", "192.0.1.0"},
		{"192.0.2.0/24", "192.0.3.0"},
		{"192.31.196.0/24", "192.31.197.0"},
		{"192.52.193.0/24", "192.52.194.0"},
		{"192.88.99.0/24", "192.88.100.0"},
		{"192.168.0.0/16", "192.169.0.0"},
		{"192.175.48.0/24", "192.175.49.0"},
		{"198.18.0.0/15", "198.20.0.0"},
		{"198.51.100.0/24", "198.51.101.0"},
		{"203.0.113.0/24", "203.0.114.0"},
		{"224.0.0.0/4", "223.255.255.255"},
		{"240.0.0.0/4", "223.255.255.255"},
		{"255.255.255.255/32", "223.255.255.255"},
		{"::/128", "2000::"},
		{"::1/128", "2000::"},
		{"::ffff:0:0/96", "2000::"},
		{"64:ff9b::/96", "2000::"},
		{"64:ff9b:1::/48", "2000::"},
		{"100::/64", "2000::"},
		{"100:0:0:1::/64", "2000::"},
		{"2001::/32", "2001:200::"},
		{"2001:2::/48", "2001:200::"},
		{"2001:10::/28", "2001:200::"},
		{"2001:20::/28", "2001:200::"},
		{"2001::/23", "2001:200::"},
		{"2001:db8::/32", "2001:db9::"},
		{"2002::/16", "2003::"},
		{"2620:4f:8000::/48", "2620:4f:8001::"},
		{"3fff::/20", "3fff:1000::"},
		{"5f00::/16", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"fc00::/7", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"fe80::/10", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"fec0::/10", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"ff00::/8", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"::/3", "2000::"},
		{"4000::/2", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"8000::/1", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			p := netip.MustParsePrefix(tc.prefix)
			walked[p] = true
			listed := false
			for _, r := range specialRanges {
				listed = listed || r.prefix == p
			}
			require.True(t, listed, "%s is in the table the guard reads", p)
			first, last := bounds(p)
			for _, a := range []netip.Addr{first, middle(first, last), last} {
				for _, loopback := range []bool{false, true} {
					err := guard(loopback)("tcp", netip.AddrPortFrom(a, 443).String(), nil)
					if loopback && a.IsLoopback() {
						require.NoError(t, err, "%s with loopback allowed", a)
						continue
					}
					require.ErrorIs(t, err, errRefused, "%s (loopback allowed: %v)", a, loopback)
				}
			}
			require.NoError(t, guard(false)("tcp", netip.AddrPortFrom(netip.MustParseAddr(tc.beside), 443).String(), nil),
				"%s, beside %s", tc.beside, p)
		})
	}
	for _, r := range specialRanges {
		require.True(t, walked[r.prefix], "%s (%s) is walked above", r.prefix, r.name)
	}

	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"93.184.215.14:443", true},
		{"[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443", true},
		{"169.254.169.254:80", false},         // a cloud's metadata service
		{"[fd00:ec2::254]:80", false},         // and its IPv6 one
		{"[::ffff:10.0.0.1]:443", false},      // IPv4-mapped
		{"[::ffff:93.184.215.14]:443", false}, // mapped, even public: Go dials those as IPv4
		{"[64:ff9b::a00:1]:443", false},       // NAT64 of 10.0.0.1
		{"[2002:a00:1::1]:443", false},        // 6to4 of 10.0.0.1
		{"[2001:0:a00:1::1]:443", false},      // Teredo
		{"[fe80::1%eth0]:443", false},         // a zone does not hide it
		{"[::a00:1]:443", false},              // IPv4-compatible (deprecated)
		{"not an address:443", false},
	} {
		err := guard(false)("tcp", tc.addr, nil)
		if tc.ok {
			require.NoError(t, err, tc.addr)
		} else {
			require.ErrorIs(t, err, errRefused, tc.addr)
		}
	}
}

// bounds are the first and last address of p.
func bounds(p netip.Prefix) (netip.Addr, netip.Addr) {
	first := p.Masked().Addr()
	b := first.AsSlice()
	for i := range b {
		// Bits past the prefix length are set in the last address.
		host := max(0, min(8, (i+1)*8-p.Bits()))
		b[i] |= byte(1<<host - 1)
	}
	last, _ := netip.AddrFromSlice(b)
	return first, last
}

// middle is the address halfway between first and last.
func middle(first, last netip.Addr) netip.Addr {
	a, b := first.AsSlice(), last.AsSlice()
	sum := new(big.Int).Add(new(big.Int).SetBytes(a), new(big.Int).SetBytes(b))
	m := sum.Rsh(sum, 1).FillBytes(make([]byte, len(a)))
	mid, _ := netip.AddrFromSlice(m)
	return mid
}

// TestAttemptLogWords: the attempt log says one of a few fixed words,
// never the error's text (decision 0282).
func TestAttemptLogWords(t *testing.T) {
	refused := guard(false)("tcp", "10.1.2.3:443", nil)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Post", URL: "https://intranet.example/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: refused}}, "destination refused"},
		{&url.Error{Op: "Post", URL: "https://gone.example/", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "gone.example", Server: "10.255.255.53:53", IsNotFound: true}}}, "connection failed"},
		{&url.Error{Op: "Post", URL: "https://slow.example/", Err: &net.DNSError{Err: "i/o timeout", Name: "slow.example",
			Server: "10.255.255.53:53", IsTimeout: true}}, "timed out"},
		{&url.Error{Op: "Post", URL: "https://slow.example/", Err: context.DeadlineExceeded}, "timed out"},
		{&url.Error{Op: "Post", URL: "https://down.example/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, "connection failed"},
		{&url.Error{Op: "Post", URL: "https://tls.example/", Err: x509.HostnameError{Host: "tls.example"}}, "connection failed"},
		{fmt.Errorf("%w: webhook endpoint 7: unknown key k1", errUnsigned), "not sent: internal error"},
	} {
		require.Equal(t, tc.want, describe(tc.err), "%v", tc.err)
	}
}

// TestSignIsStandardWebhooks: what Sign writes, the specification's own
// library verifies, with either secret of a rotation.
func TestSignIsStandardWebhooks(t *testing.T) {
	oldSecret, newSecret := newSecret(), newSecret()
	body := []byte(`{"type":"booking.confirmed","data":{"order_id":"ord_1"}}`)
	now := time.Now()
	sig, err := Sign([]string{newSecret, oldSecret}, "msg_1", now, body)
	require.NoError(t, err)
	h := http.Header{}
	h.Set("webhook-id", "msg_1")
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", sig)
	for _, s := range []string{oldSecret, newSecret} {
		wh, err := standardwebhooks.NewWebhook(s)
		require.NoError(t, err)
		require.NoError(t, wh.Verify(body, h))
		require.True(t, errors.Is(wh.Verify(append(body, ' '), h), standardwebhooks.ErrNoMatchingSignature), "a changed body fails")
	}
	_, err = Sign([]string{"whsec_not base64"}, "msg_1", now, body)
	require.Error(t, err)
}

// TestBackoffGrowsWithJitterUpToItsCap: the n-th retry waits between half
// and all of base·2^(n-1), capped.
func TestBackoffGrowsWithJitterUpToItsCap(t *testing.T) {
	w := &Worker{cfg: WorkerConfig{RetryBase: 5 * time.Second, RetryMax: 2 * time.Hour}}
	for n, full := range map[int]time.Duration{1: 5 * time.Second, 2: 10 * time.Second, 5: 80 * time.Second, 12: 2 * time.Hour, 40: 2 * time.Hour} {
		for range 200 {
			d := w.backoff(n)
			require.True(t, d >= full/2 && d <= full, "attempt %d waits %s, want %s…%s", n, d, full/2, full)
		}
	}
}
