package httpapi

import (
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// clientAddress is the address a request comes from, which wrong secrets are
// counted against. Behind an ingress the peer is the proxy: then, and only
// when the peer is one of the trusted proxies, X-Forwarded-For is read from
// the right, skipping trusted proxies, and the first other address is the
// client's (entries further left are whatever the client claimed).
func clientAddress(c *fiber.Ctx, trusted []netip.Prefix) string {
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok {
		return "unknown"
	}
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	hops := c.Request().Header.PeekAll(fiber.HeaderXForwardedFor)
	var list []string
	for _, h := range hops {
		list = append(list, strings.Split(string(h), ",")...)
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
