package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// specialRange is an address range a webhook may not reach.
type specialRange struct {
	prefix netip.Prefix
	// name says what the range is, for the server's log.
	name string
}

// specialRanges are the ranges the sender refuses (decision 0281): every
// entry of IANA's IPv4 and IPv6 Special-Purpose Address Registries,
// multicast, IPv4's reserved 240/4, the deprecated site-local fec0::/10,
// and IPv6 outside 2000::/3, the only space allocated for global unicast.
// A superset of what Stripe's smokescreen refuses by default (not global
// unicast, private, 100.64.0.0/10, and the IPv6 forms that embed an IPv4
// address: NAT64, 6to4, Teredo). The first entry that contains an address
// names it.
var specialRanges = []specialRange{
	// IPv4 (RFC 6890 and the registry's later entries).
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" (RFC 791)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private-use (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space, carrier-grade NAT (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (RFC 1122)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local, cloud metadata (RFC 3927)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private-use (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (RFC 6890)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation, TEST-NET-1 (RFC 5737)"},
	{netip.MustParsePrefix("192.31.196.0/24"), "AS112-v4 (RFC 7535)"},
	{netip.MustParsePrefix("192.52.193.0/24"), "AMT (RFC 7450)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "deprecated 6to4 relay anycast (RFC 7526)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private-use (RFC 1918)"},
	{netip.MustParsePrefix("192.175.48.0/24"), "direct delegation AS112 service (RFC 7534)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation, TEST-NET-2 (RFC 5737)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation, TEST-NET-3 (RFC 5737)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (RFC 5771)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (RFC 1112)"},
	{netip.MustParsePrefix("255.255.255.255/32"), "limited broadcast (RFC 919)"},
	// IPv6.
	{netip.MustParsePrefix("::/128"), "unspecified (RFC 4291)"},
	{netip.MustParsePrefix("::1/128"), "loopback (RFC 4291)"},
	// Go dials an IPv4-mapped address as the IPv4 address it maps, so a
	// guarded dial sees that one; written mapped, it is refused whole.
	{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped (RFC 4291)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 well-known prefix, embeds IPv4 (RFC 6052)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use IPv4/IPv6 translation (RFC 8215)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (RFC 6666)"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "dummy IPv6 prefix (IANA registry)"},
	{netip.MustParsePrefix("2001::/32"), "Teredo, embeds IPv4 (RFC 4380)"},
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking (RFC 5180)"},
	{netip.MustParsePrefix("2001:10::/28"), "deprecated ORCHID (RFC 4843)"},
	{netip.MustParsePrefix("2001:20::/28"), "ORCHIDv2 (RFC 7343)"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments (RFC 2928)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (RFC 3849)"},
	{netip.MustParsePrefix("2002::/16"), "6to4, embeds IPv4 (RFC 3056)"},
	{netip.MustParsePrefix("2620:4f:8000::/48"), "direct delegation AS112 service (RFC 7534)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation (RFC 9637)"},
	{netip.MustParsePrefix("5f00::/16"), "segment routing SIDs (RFC 9602)"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local (RFC 4193)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local (RFC 4291)"},
	{netip.MustParsePrefix("fec0::/10"), "deprecated site-local (RFC 3879)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast (RFC 4291)"},
	// Whatever else lies outside 2000::/3 is reserved by the IETF, and new
	// special-purpose ranges are carved from there first.
	{netip.MustParsePrefix("::/3"), "outside global unicast 2000::/3 (RFC 4291)"},
	{netip.MustParsePrefix("4000::/2"), "outside global unicast 2000::/3 (RFC 4291)"},
	{netip.MustParsePrefix("8000::/1"), "outside global unicast 2000::/3 (RFC 4291)"},
}

// special returns the refused range that holds a, if any.
func special(a netip.Addr) (specialRange, bool) {
	a = a.WithZone("") // a prefix holds no address that has a zone
	for _, r := range specialRanges {
		if r.prefix.Contains(a) {
			return r, true
		}
	}
	return specialRange{}, false
}

// errRefused refuses a connection to an address a webhook may not reach.
var errRefused = errors.New("webhook destination refused")

// guard refuses, at connect time (after DNS, so a name cannot point
// around it), every address in specialRanges; loopback ones only when
// allowLoopback is set (dev and tests).
func guard(allowLoopback bool) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %q is not an IP address and port", errRefused, address)
		}
		a := ap.Addr()
		if allowLoopback && a.IsLoopback() {
			return nil
		}
		if r, ok := special(a); ok {
			return fmt.Errorf("%w: %s is in %s, %s", errRefused, a, r.prefix, r.name)
		}
		return nil
	}
}

// errUnsigned is an attempt not sent because its endpoint's secrets could
// not sign it (an operator's mistake, decision 0273).
var errUnsigned = errors.New("webhook delivery not signed")

// The attempt log's words (decision 0282): all a partner reads of an
// attempt that got no answer. The error itself, with the addresses a name
// resolved to or the resolver's message, goes to the server's log only,
// so an endpoint's URL cannot be used to map the platform's network.
const (
	// attemptRefused: the endpoint's address is one webhooks may not reach.
	attemptRefused = "destination refused"
	// attemptFailed: no connection (the name did not resolve, the
	// connection was refused or reset, TLS failed) or the answer broke off.
	attemptFailed = "connection failed"
	// attemptTimedOut: no answer within the timeout.
	attemptTimedOut = "timed out"
	// attemptUnsigned: Seatghor could not sign it, so it was not sent.
	attemptUnsigned = "not sent: internal error"
)

// describe is what the attempt log says of an attempt that got no answer:
// one of the words above, never the error's text.
func describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, errRefused):
		return attemptRefused
	case errors.Is(err, errUnsigned):
		return attemptUnsigned
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return attemptTimedOut
	}
	return attemptFailed
}
