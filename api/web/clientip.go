package web

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

const localClientIP = "client_ip"

// ParseProxies reads TRUSTED_PROXIES entries: IPs or CIDRs.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, netip.PrefixFrom(p.Addr().Unmap(), unmappedBits(p)).Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("api: trusted proxy %q is neither an IP nor a CIDR", s)
		}
		a = a.Unmap().WithZone("")
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// unmappedBits is the length of p once an IPv4-mapped prefix
// (::ffff:10.0.0.0/104) is written as IPv4 (10.0.0.0/8).
func unmappedBits(p netip.Prefix) int {
	if p.Addr().Is4In6() {
		return max(p.Bits()-96, 0)
	}
	return p.Bits()
}

// ClientAddr works out the client's address from the socket peer and the
// X-Forwarded-For header values (in the order received). The header is
// read only when the peer is a trusted proxy, and then from the right:
// each proxy appends the address it saw, so the rightmost entry that is
// not itself a trusted proxy is the client. Anything left of it was
// written by the client and is never believed. An entry that is not an
// address ends the walk at the last proxy seen.
func ClientAddr(peer netip.Addr, forwarded []string, trusted []netip.Prefix) netip.Addr {
	addr := peer.Unmap().WithZone("")
	if !isTrusted(addr, trusted) {
		return addr
	}
	var entries []string
	for _, v := range forwarded {
		entries = append(entries, strings.Split(v, ",")...)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		next, ok := parseForwarded(entries[i])
		if !ok {
			return addr
		}
		addr = next
		if !isTrusted(addr, trusted) {
			return addr
		}
	}
	return addr
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseForwarded reads one X-Forwarded-For entry: an address, with a port
// as some proxies write it ("192.0.2.1:4711", "[2001:db8::1]:4711").
func parseForwarded(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone(""), true
}

// FindClient is middleware that works out the client's address once, for
// ClientIP. It runs before anything that counts per address (lockouts,
// rate limits) or records one (sessions, the audit log).
func (s *Site) FindClient(c *fiber.Ctx) error {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	var forwarded []string
	if len(s.proxies) > 0 {
		for _, v := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
			forwarded = append(forwarded, string(v))
		}
	}
	ip := c.IP() // the peer as fasthttp has it, should it not be an address
	if a := ClientAddr(peer, forwarded, s.proxies); a.IsValid() {
		ip = a.String()
	}
	c.Locals(localClientIP, ip)
	return c.Next()
}

// ClientIP is the address of the client that sent this request: the one
// place every lockout, rate limit and record asks. fiber's own c.IP() is
// left at the socket peer, so a forgotten caller errs towards the proxy,
// not towards what the client wrote.
func ClientIP(c *fiber.Ctx) string {
	if ip, ok := c.Locals(localClientIP).(string); ok {
		return ip
	}
	return c.IP()
}
