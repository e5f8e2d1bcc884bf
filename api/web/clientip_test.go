package web

import (
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	proxies, err := ParseProxies([]string{"10.0.0.1", "172.16.0.0/12", "2001:db8:1::/48", "::ffff:192.168.0.0/112"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		peer      string
		forwarded []string
		trusted   []netip.Prefix
		want      string
	}{
		{"no proxies: the header is ignored", "203.0.113.9", []string{"198.51.100.1"}, nil, "203.0.113.9"},
		{"untrusted peer: the header is ignored", "203.0.113.9", []string{"198.51.100.1"}, proxies, "203.0.113.9"},
		{"trusted peer, no header", "10.0.0.1", nil, proxies, "10.0.0.1"},
		{"one proxy", "10.0.0.1", []string{"198.51.100.7"}, proxies, "198.51.100.7"},
		{"a spoofed leftmost entry is skipped", "10.0.0.1", []string{"1.2.3.4, 198.51.100.7"}, proxies, "198.51.100.7"},
		{"a chain of trusted proxies", "10.0.0.1", []string{"1.2.3.4, 198.51.100.7, 172.20.0.3, 172.16.9.9"}, proxies, "198.51.100.7"},
		{"headers repeated are one list", "10.0.0.1", []string{"1.2.3.4, 198.51.100.7", "172.20.0.3"}, proxies, "198.51.100.7"},
		{"the client claims a proxy's address on the left", "10.0.0.1", []string{"10.0.0.1, 198.51.100.7"}, proxies, "198.51.100.7"},
		{"all trusted: the leftmost proxy", "10.0.0.1", []string{"172.16.0.5, 172.16.0.6"}, proxies, "172.16.0.5"},
		{"garbage ends the walk at the last proxy", "10.0.0.1", []string{"198.51.100.7, not-an-ip, 172.16.0.6"}, proxies, "172.16.0.6"},
		{"empty entry ends the walk", "10.0.0.1", []string{"198.51.100.7,,"}, proxies, "10.0.0.1"},
		{"ports are dropped", "10.0.0.1", []string{"1.2.3.4, 198.51.100.7:4711"}, proxies, "198.51.100.7"},
		{"IPv6 with a port", "10.0.0.1", []string{"[2001:db8:2::5]:443"}, proxies, "2001:db8:2::5"},
		{"IPv6 proxies", "2001:db8:1::1", []string{"2001:db8:2::5, 2001:db8:1::9"}, proxies, "2001:db8:2::5"},
		{"an IPv4-mapped peer is IPv4", "::ffff:10.0.0.1", []string{"198.51.100.7"}, proxies, "198.51.100.7"},
		{"an IPv4-mapped prefix covers IPv4", "192.168.0.4", []string{"198.51.100.7"}, proxies, "198.51.100.7"},
		{"an IPv4-mapped entry is IPv4", "10.0.0.1", []string{"::ffff:198.51.100.7"}, proxies, "198.51.100.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ClientAddr(netip.MustParseAddr(tc.peer), tc.forwarded, tc.trusted)
			if got.String() != tc.want {
				t.Errorf("ClientAddr(%s, %q) = %s, want %s", tc.peer, tc.forwarded, got, tc.want)
			}
		})
	}
}

func TestParseProxies(t *testing.T) {
	for _, bad := range []string{"", "10.0.0", "10.0.0.0/33", "example.com"} {
		if _, err := ParseProxies([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	p, err := ParseProxies([]string{" 10.1.2.3/8 ", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	if p[0].String() != "10.0.0.0/8" || p[1].String() != "::1/128" {
		t.Errorf("parsed %v", p)
	}
}
