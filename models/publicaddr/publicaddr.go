// Package publicaddr guards outbound requests: it refuses to dial an address
// that is not public unicast. Both jobs (the SimpleFIN Bridge client) and sso
// (identity providers) dial URLs that a user or an administrator typed. It
// imports nothing of ours.
package publicaddr

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// ErrPrivate is returned when an outbound connection is refused because its
// address is not public unicast (see Public): a URL from a user must not
// reach the service's own network.
var ErrPrivate = errors.New("refusing to connect to an address that is not public unicast")

// notPublic4 are the IPv4 blocks no outbound request may reach: every
// entry of IANA's IPv4 Special-Purpose Address Registry (2025), including
// those marked globally reachable (anycast services such as AS112, AMT,
// PCP and TURN, never a Bridge or an identity provider), multicast and the
// reserved 240.0.0.0/4 with the limited broadcast address.
var notPublic4 = prefixes(
	"0.0.0.0/8",       // "this network"
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // shared address space (carrier-grade NAT)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link local, cloud metadata services
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments (DS-Lite, NAT64 discovery, PCP/TURN anycast)
	"192.0.2.0/24",    // documentation (TEST-NET-1)
	"192.31.196.0/24", // AS112-v4
	"192.52.193.0/24", // AMT
	"192.88.99.0/24",  // deprecated 6to4 relay anycast
	"192.168.0.0/16",  // private
	"192.175.48.0/24", // direct delegation AS112 service
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation (TEST-NET-2)
	"203.0.113.0/24",  // documentation (TEST-NET-3)
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and 255.255.255.255 limited broadcast
)

// global6 is the only IPv6 space IANA allocates for global unicast: what
// lies outside it (loopback, unspecified, IPv4-compatible, the NAT64
// prefixes 64:ff9b::/96 and 64:ff9b:1::/48, discard-only 100::/64, segment
// routing 5f00::/16, unique local fc00::/7, link local fe80::/10, the old
// site local fec0::/10, multicast ff00::/8) is never public.
var global6 = netip.MustParsePrefix("2000::/3")

// notPublic6 are the entries of IANA's IPv6 Special-Purpose Address
// Registry (2025) that lie inside 2000::/3.
var notPublic6 = prefixes(
	"2001::/23",         // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT, AS112, DRIP
	"2001:db8::/32",     // documentation
	"2002::/16",         // 6to4, which carries an IPv4 address of any kind
	"2620:4f:8000::/48", // direct delegation AS112 service
	"3fff::/20",         // documentation
)

func prefixes(list ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(list))
	for i, s := range list {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Public reports whether a is a public unicast address: one that a
// request made for a user may reach. An IPv4-mapped IPv6 address is judged
// as the IPv4 address it carries.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	blocked := notPublic4
	if a.Is6() {
		if !global6.Contains(a) {
			return false
		}
		blocked = notPublic6
	}
	for _, p := range blocked {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// RefuseNonPublic is a net.Dialer Control function that refuses, with
// ErrPrivate, to connect to an address that is not public. It sees
// the address each connection is about to use, after name resolution, so
// a name that resolves (or is rebound between two lookups) to a private
// address is refused too.
func RefuseNonPublic(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("publicaddr: dial %q: %w", address, err)
	}
	// The address is not in the error: it could show an administrator
	// what an internal name resolves to.
	if a, err := netip.ParseAddr(host); err != nil || !Public(a) {
		return ErrPrivate
	}
	return nil
}

// Dialer is the dialer of outbound requests: it refuses every
// address that is not public unless allowPrivate (tests, or identity
// providers on the operator's own network).
func Dialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = RefuseNonPublic
	}
	return d
}
