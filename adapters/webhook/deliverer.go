// Package webhook sends webhook events out of this network, safely
// (docs/contract.md §12): a time limit, no redirects, no headers but the
// event's, and only to addresses the operator allows — the host is
// resolved once, every address checked, and the connection made to the
// checked address, so that a second lookup cannot point it elsewhere.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/praxis-health/praxis/domain/webhook"
	"github.com/praxis-health/praxis/ports"
)

// Timeout bounds one attempt, from the connection to the answer's end.
const Timeout = 15 * time.Second

// Resolver looks a host up; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Deliverer is the ports.Deliverer of this network.
type Deliverer struct {
	client       *http.Client
	resolver     Resolver
	allowPrivate bool
	userAgent    string
}

var _ ports.Deliverer = (*Deliverer)(nil)

// New sends with resolver; allowPrivate lets events go to loopback and
// private addresses (tests, a private network: PRAXIS_WEBHOOK_ALLOW_PRIVATE).
func New(resolver Resolver, allowPrivate bool, version string) *Deliverer {
	d := &Deliverer{resolver: resolver, allowPrivate: allowPrivate, userAgent: "praxis-webhooks/" + version}
	dialer := &net.Dialer{Timeout: Timeout}
	transport := &http.Transport{
		Proxy:                 nil, // an event never goes through a proxy of the environment
		DialContext:           d.pinnedDial(dialer),
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   Timeout,
		ResponseHeaderTimeout: Timeout,
	}
	d.client = &http.Client{
		Transport: transport,
		Timeout:   Timeout,
		// A redirect is an answer: 3xx, retried like any failure, never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return d
}

// errRefusedAddress: the host resolved to an address an event may not go to.
var errRefusedAddress = errors.New("refused")

// pinnedDial resolves the host once, refuses it if any address is inside
// this network, and connects to the checked addresses only.
func (d *Deliverer) pinnedDial(dialer *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		var addrs []netip.Addr
		if ip, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{ip}
		} else if addrs, err = d.resolver.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, fmt.Errorf("looking up the host: %w", err)
		}
		if len(addrs) == 0 {
			return nil, errors.New("the host has no address")
		}
		for _, a := range addrs {
			if err := webhook.CheckAddress(a, d.allowPrivate); err != nil {
				return nil, fmt.Errorf("%w: the host resolves to %s, inside this network", errRefusedAddress, a.Unmap())
			}
		}
		var last error
		for _, a := range addrs {
			conn, err := dialer.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
			if err == nil {
				return conn, nil
			}
			last = err
		}
		return nil, last
	}
}

// Deliver posts one event. The URL is checked again (the rules may have
// changed since the endpoint was registered), the body goes with exactly
// the headers of Standard Webhooks, a content type and a user agent.
func (d *Deliverer) Deliver(ctx context.Context, dl ports.Delivery) ports.DeliveryResult {
	u, err := webhook.CheckURL(dl.URL, d.allowPrivate)
	if err != nil {
		return ports.DeliveryResult{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(dl.Body))
	if err != nil {
		return ports.DeliveryResult{Err: err}
	}
	req.Header = http.Header{
		"Content-Type":      {"application/json"},
		"User-Agent":        {d.userAgent},
		"Webhook-Id":        {dl.Headers.ID},
		"Webhook-Timestamp": {dl.Headers.Timestamp},
		"Webhook-Signature": {dl.Headers.Signature},
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return ports.DeliveryResult{Err: withoutURL(err)}
	}
	defer func() { _ = resp.Body.Close() }()
	// The answer's body is not read beyond a little, to keep the connection.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return ports.DeliveryResult{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
}

// withoutURL drops the URL from a client error: the log keeps why, not
// where (a URL may carry the receiver's own token).
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("no answer within %s", Timeout)
	}
	return err
}

// retryAfter reads Retry-After in seconds or as an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// maxKeySet bounds a fetched JWK Set.
const maxKeySet = 64 << 10

var _ ports.KeySets = (*Deliverer)(nil)

// Fetch reads a client's JWK Set from its URL (SMART Backend Services)
// under the same rules as an event: the URL and every address it resolves
// to checked, no redirect followed, the time bounded. Only a 200 with at
// most 64 KiB is a key set.
func (d *Deliverer) Fetch(ctx context.Context, raw string) ([]byte, error) {
	u, err := webhook.CheckURL(raw, d.allowPrivate)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header = http.Header{"Accept": {"application/jwk-set+json, application/json"}, "User-Agent": {d.userAgent}}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, withoutURL(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the key set URL answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySet+1))
	if err != nil {
		return nil, withoutURL(err)
	}
	if len(body) > maxKeySet {
		return nil, errors.New("the key set is larger than 64 KiB")
	}
	return body, nil
}
