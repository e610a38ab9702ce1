package domain

import (
	"net/netip"
	"strings"
)

// ClientAddress is the address a request comes from, which wrong secrets are
// counted against and audit events name. Behind an ingress the peer is the
// proxy: then, and only when the peer is one of the trusted proxies, the
// X-Forwarded-For hops are read from the right, skipping trusted proxies, and
// the first other address is the client's (hops further left are whatever
// the client claimed). forwarded holds the header's values as received.
func ClientAddress(peer netip.Addr, forwarded []string, trusted []netip.Prefix) string {
	if !peer.IsValid() {
		return "unknown"
	}
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	var list []string
	for _, h := range forwarded {
		list = append(list, strings.Split(h, ",")...)
	}
	for i := len(list) - 1; i >= 0; i-- {
		addr, err := netip.ParseAddr(strings.TrimSpace(list[i]))
		if err != nil {
			return peer.String() // a malformed hop: the proxy's own address is all we know
		}
		if addr = addr.Unmap(); !isTrusted(addr, trusted) {
			return addr.String()
		}
	}
	return peer.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
