package publicaddr_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"coffer/models/publicaddr"
)

func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"93.184.215.14", true},
		{"100.63.255.255", true},  // just below carrier-grade NAT
		{"100.128.0.0", true},     // just above it
		{"198.17.255.255", true},  // just below benchmarking
		{"198.20.0.0", true},      // just above it
		{"223.255.255.255", true}, // just below multicast
		{"2606:4700:4700::1111", true},
		{"2a00:1450:4001:80b::200e", true},
		{"::ffff:8.8.8.8", true}, // IPv4-mapped: judged as IPv4

		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.5", false},
		{"100.64.0.1", false}, // carrier-grade NAT
		{"100.127.255.254", false},
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"169.254.169.254", false}, // cloud metadata
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.0.0.9", false},
		{"192.0.0.170", false},
		{"192.0.2.1", false},
		{"192.31.196.1", false},
		{"192.52.193.1", false},
		{"192.88.99.1", false},
		{"192.168.1.1", false},
		{"192.175.48.1", false},
		{"198.18.0.1", false}, // benchmarking
		{"198.19.255.255", false},
		{"198.51.100.1", false},
		{"203.0.113.1", false},
		{"224.0.0.1", false}, // multicast
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		{"::", false},
		{"::1", false},
		{"::127.0.0.1", false},      // IPv4-compatible
		{"::ffff:127.0.0.1", false}, // IPv4-mapped loopback
		{"::ffff:10.0.0.1", false},
		{"64:ff9b::7f00:1", false},   // NAT64 of 127.0.0.1
		{"64:ff9b::808:808", false},  // NAT64, even of a public address
		{"64:ff9b:1::a00:1", false},  // local-use NAT64
		{"100::1", false},            // discard-only
		{"2001::1", false},           // Teredo
		{"2001:2::1", false},         // benchmarking
		{"2001:20::1", false},        // ORCHIDv2
		{"2001:db8::1", false},       // documentation
		{"2002:7f00:1::1", false},    // 6to4 of 127.0.0.1
		{"2620:4f:8000::1", false},   // AS112
		{"3fff::1", false},           // documentation
		{"5f00::1", false},           // segment routing
		{"fc00::1", false},           // unique local
		{"fd12:3456:789a::1", false}, // unique local
		{"fe80::1", false},           // link local
		{"fe80::1%eth0", false},
		{"fec0::1", false}, // site local
		{"ff02::1", false}, // multicast
		{"ff0e::1", false},
	} {
		if got := publicaddr.Public(netip.MustParseAddr(tc.addr)); got != tc.public {
			t.Errorf("Public(%s) = %v, want %v", tc.addr, got, tc.public)
		}
	}
	if publicaddr.Public(netip.Addr{}) {
		t.Error("the zero address is public")
	}
}

// TestDialerRefusesLoopback dials a real listener on 127.0.0.1:
// refused before connecting unless private hosts are allowed.
func TestDialerRefusesLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	ctx := context.Background()
	if c, err := publicaddr.Dialer(false).DialContext(ctx, "tcp", ln.Addr().String()); !errors.Is(err, publicaddr.ErrPrivate) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("guarded dial to %s: %v, want ErrPrivate", ln.Addr(), err)
	}
	c, err := publicaddr.Dialer(true).DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("allowed dial: %v", err)
	}
	c.Close()
	<-accepted // the allowed dial's connection
	select {
	case <-accepted:
		t.Fatal("the refused dial reached the listener")
	default:
	}
}
