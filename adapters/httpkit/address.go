package httpkit

import (
	"net/netip"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/domain"
)

// ClientAddress is the address a request comes from, after the trusted
// proxies (domain.ClientAddress): the same for both doors' throttling and
// audit events.
func ClientAddress(c *fiber.Ctx, trusted []netip.Prefix) string {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	var hops []string
	for _, h := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		hops = append(hops, string(h))
	}
	return domain.ClientAddress(peer, hops, trusted)
}
