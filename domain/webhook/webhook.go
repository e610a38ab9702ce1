// Package webhook is what a webhook of the change feed is, on the wire of
// Standard Webhooks 1.0: the signing secret and the signature, the event
// types an endpoint subscribes to, the thin event body, the addresses an
// endpoint may have, and the retry schedule. Issue "Webhooks" builds the
// endpoints' store, the dispatcher and the API on it.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// secretPrefix marks a signing secret, as Standard Webhooks spells it.
const secretPrefix = "whsec_"

// secretBytes is a new secret's length: 24 random bytes, within the 24–64
// bytes the specification asks for.
const secretBytes = 24

// Secret is an endpoint's signing secret: "whsec_" and the key in base64.
type Secret string

// NewSecret makes a secret from the system's random source.
func NewSecret() (Secret, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return Secret(secretPrefix + base64.StdEncoding.EncodeToString(b)), nil
}

// key is the HMAC key the secret spells.
func (s Secret) key() ([]byte, error) {
	raw, ok := strings.CutPrefix(string(s), secretPrefix)
	if !ok {
		return nil, errors.New("webhook: a signing secret begins with whsec_")
	}
	return base64.StdEncoding.DecodeString(raw)
}

// Headers are the three headers of a delivery.
type Headers struct {
	ID        string // webhook-id: the same on every retry of one event
	Timestamp string // webhook-timestamp: unix seconds of this attempt
	Signature string // webhook-signature: "v1,<base64>" per secret, space-separated
}

// Sign signs one attempt of message id at the time given with every secret
// (two while a rotation overlaps): the receiver accepts any one of them.
func Sign(id string, at time.Time, body []byte, secrets ...Secret) (Headers, error) {
	if len(secrets) == 0 {
		return Headers{}, errors.New("webhook: nothing to sign with")
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	var sigs []string
	for _, s := range secrets {
		key, err := s.key()
		if err != nil {
			return Headers{}, err
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + ts + "."))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return Headers{ID: id, Timestamp: ts, Signature: strings.Join(sigs, " ")}, nil
}

// Operations a change can be, in an event type's second part.
var operations = []string{"created", "updated", "deleted"}

// EventTypes are what an endpoint subscribes to: "<section>.<operation>"
// of a section of the table, "appointments.cancelled", or "*" for all.
type EventTypes []string

// ParseEventTypes checks a subscription: known types, each once, "*" alone.
func ParseEventTypes(types []string) (EventTypes, error) {
	if len(types) == 0 {
		return nil, domain.FieldErrors{{Field: "event_types", Message: `names no event type: give at least one, or ["*"]`}}.Err()
	}
	var errs domain.FieldErrors
	seen := map[string]bool{}
	for i, t := range types {
		field := fmt.Sprintf("event_types[%d]", i)
		switch {
		case seen[t]:
			errs.Add(field, "is given twice")
		case t == "*" && len(types) > 1:
			errs.Add(field, `"*" stands alone: it is every event type`)
		case t != "*" && !knownType(t):
			errs.Add(field, "is no event type: <section>.created, .updated or .deleted of a section, appointments.cancelled, or *")
		}
		seen[t] = true
	}
	return EventTypes(types), errs.Err()
}

func knownType(t string) bool {
	if t == "appointments.cancelled" {
		return true
	}
	section, op, ok := strings.Cut(t, ".")
	if !ok || !slices.Contains(operations, op) {
		return false
	}
	return section == "files" || domain.KindOf(section) != nil
}

// Wants tells whether the subscription takes an event of type t.
func (e EventTypes) Wants(t string) bool { return slices.Contains(e, "*") || slices.Contains(e, t) }

// Data is what an event tells: which object changed and where the sync
// feed stands just past the change. Never a name, a date of birth or
// clinical text: the receiver fetches the object through the audited API.
type Data struct {
	Section    string             `json:"section"`
	ID         string             `json:"id"`
	CustomerID *domain.CustomerID `json:"customer_id,omitempty"`
	Cursor     string             `json:"cursor"`
	// Version is the object's version after the change (0, left out, for
	// the test event, which names no object's change).
	Version int64 `json:"version,omitempty"`
}

// MaxBody bounds an event's body: thin by design.
const MaxBody = 2 << 10

// Body is an event in the envelope of Standard Webhooks.
func Body(eventType string, at time.Time, d Data) ([]byte, error) {
	b, err := json.Marshal(struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      Data   `json:"data"`
	}{eventType, at.UTC().Format(time.RFC3339Nano), d})
	if err == nil && len(b) > MaxBody {
		err = fmt.Errorf("webhook: an event of %d bytes is over %d", len(b), MaxBody)
	}
	return b, err
}

// CheckURL refuses an endpoint a practice must not register: not https,
// credentials in it, or a host that is an address of this network (loopback,
// private, link-local, unspecified) — unless the operator allows plain and
// private targets (tests, a private network). A host name is resolved at
// delivery and checked again with CheckAddress.
func CheckURL(raw string, allowPrivate bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return nil, urlError("is not an absolute URL")
	case u.Scheme != "https" && (u.Scheme != "http" || !allowPrivate):
		return nil, urlError("must be https")
	case u.User != nil:
		return nil, urlError("must not carry credentials")
	case u.Fragment != "":
		return nil, urlError("must not have a fragment")
	}
	if addr, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if err := CheckAddress(addr, allowPrivate); err != nil {
			return nil, err
		}
	} else if host := strings.ToLower(u.Hostname()); !allowPrivate && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
		return nil, urlError("must not name this machine")
	}
	return u, nil
}

// CheckAddress refuses a resolved address inside this network.
func CheckAddress(addr netip.Addr, allowPrivate bool) error {
	addr = addr.Unmap()
	if !allowPrivate && (addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsUnspecified() || addr.IsMulticast() || addr.IsInterfaceLocalMulticast() || isCGNAT(addr)) {
		return urlError("must name an address on the internet, not " + addr.String())
	}
	return nil
}

// isCGNAT is the shared address space of RFC 6598 (100.64.0.0/10).
func isCGNAT(a netip.Addr) bool { return netip.MustParsePrefix("100.64.0.0/10").Contains(a) }

func urlError(msg string) error { return domain.FieldErrors{{Field: "url", Message: msg}}.Err() }

// Retries is the schedule of Standard Webhooks after a failed attempt:
// about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h.
var Retries = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// DisableAfter is how long an endpoint may fail before it is disabled.
const DisableAfter = 5 * 24 * time.Hour

// NextDelay is the wait after failed attempt n (0 the first), with ±10 %
// jitter so that endpoints that failed together do not retry together; a
// Retry-After the receiver sent is honoured when it asks for longer. After
// the last step of the schedule it stays at 24 h.
func NextDelay(n int, retryAfter time.Duration) time.Duration {
	base := Retries[min(max(n, 0), len(Retries)-1)]
	jitter := 1 + (mrand.Float64()*0.2 - 0.1) //nolint:gosec // spreading retries needs no secret randomness
	d := time.Duration(math.Round(float64(base) * jitter))
	return max(d, retryAfter)
}

// Outcome is what a receiver's answer means for the endpoint.
type Outcome int

// Outcomes of an attempt.
const (
	Delivered Outcome = iota // 2xx: the next event may go
	Retry                    // any other answer, or none: try again later
	Throttled                // 429, 502, 503, 504: the receiver asks to slow down; try again later
	Gone                     // 410: the receiver asks to be disabled
)

// OutcomeOf reads an answer's status; 0 is no answer at all.
func OutcomeOf(status int) Outcome {
	switch {
	case status >= 200 && status < 300:
		return Delivered
	case status == 410:
		return Gone
	case status == 429 || status == 502 || status == 503 || status == 504:
		return Throttled
	}
	return Retry
}

// ScopesFor is what a client must be able to read to subscribe to t: the
// section's read scope, or every such scope for "*".
func ScopesFor(t string) domain.Scopes {
	if t != "*" {
		section, _, _ := strings.Cut(t, ".")
		return domain.Scopes{domain.ReadScope(section)}
	}
	out := domain.Scopes{domain.ReadScope("files")}
	for _, k := range domain.Kinds() {
		out = append(out, domain.ReadScope(k.Slug))
	}
	return out
}
