package webhook_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
)

// TestSignaturesVerifyWithTheOfficialLibrary: what Sign writes, the
// Standard Webhooks library accepts — with either secret while a rotation
// overlaps — and refuses once a byte of the body or the id differs.
func TestSignaturesVerifyWithTheOfficialLibrary(t *testing.T) {
	t.Parallel()
	old, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := webhook.NewSecret()
	if !strings.HasPrefix(string(old), "whsec_") || old == fresh {
		t.Fatalf("secrets %q, %q", old, fresh)
	}
	customer := domain.CustomerID(1042)
	body, err := webhook.Body("notes.created", time.Now(), webhook.Data{Section: "notes", ID: "019cd6df-a538-78f7-9da1-494c73cf256d", CustomerID: &customer, Cursor: "eyJ2IjoxfQ"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := webhook.Sign("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", time.Now(), body, old, fresh)
	if err != nil {
		t.Fatal(err)
	}
	headers := func(id string) http.Header {
		return http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {h.Timestamp}, "Webhook-Signature": {h.Signature}}
	}
	for _, s := range []webhook.Secret{old, fresh} {
		receiver, err := standardwebhooks.NewWebhook(string(s))
		if err != nil {
			t.Fatal(err)
		}
		if err := receiver.Verify(body, headers(h.ID)); err != nil {
			t.Errorf("the receiver holding one of the two secrets refuses: %v", err)
		}
		tampered := []byte(strings.Replace(string(body), "notes.created", "notes.deleted", 1))
		if receiver.Verify(tampered, headers(h.ID)) == nil || receiver.Verify(body, headers("msg_other")) == nil {
			t.Error("a changed body or id still verifies")
		}
	}
	stranger, _ := webhook.NewSecret()
	receiver, _ := standardwebhooks.NewWebhook(string(stranger))
	if receiver.Verify(body, headers(h.ID)) == nil {
		t.Error("a receiver with another secret accepts")
	}
	if _, err := webhook.Sign("msg", time.Now(), body); err == nil {
		t.Error("signing with no secret")
	}
}

func TestEventBodyIsThin(t *testing.T) {
	t.Parallel()
	body, err := webhook.Body("customers.updated", time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC), webhook.Data{Section: "customers", ID: "1042", Cursor: "c"})
	if err != nil || string(body) != `{"type":"customers.updated","timestamp":"2026-11-24T09:00:00Z","data":{"section":"customers","id":"1042","cursor":"c"}}` {
		t.Errorf("%s %v", body, err)
	}
	if _, err := webhook.Body("notes.created", time.Now(), webhook.Data{Section: "notes", ID: strings.Repeat("x", 3000)}); err == nil {
		t.Error("an event over 2 KB")
	}
}

func TestEventTypes(t *testing.T) {
	t.Parallel()
	types, err := webhook.ParseEventTypes([]string{"notes.created", "customers.updated", "appointments.cancelled", "files.created"})
	if err != nil || !types.Wants("notes.created") || types.Wants("notes.deleted") {
		t.Errorf("%v %v", types, err)
	}
	if all, err := webhook.ParseEventTypes([]string{"*"}); err != nil || !all.Wants("invoices.deleted") {
		t.Errorf("* %v", err)
	}
	for _, bad := range [][]string{nil, {"notes.read"}, {"nothing.created"}, {"notes"}, {"*", "notes.created"}, {"notes.created", "notes.created"}} {
		if _, err := webhook.ParseEventTypes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestEndpointAddresses: https on the internet only, unless the operator
// allows plain and private targets; a resolved address is checked again.
func TestEndpointAddresses(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"https://hooks.example.com/praxis", "https://93.184.216.34:8443/x", "https://[2606:4700::1111]/x"} {
		if _, err := webhook.CheckURL(ok, false); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://hooks.example.com/", "https://user:pw@hooks.example.com/", "https://127.0.0.1/", "https://10.1.2.3/",
		"https://192.168.0.10/", "https://169.254.169.254/latest/meta-data", "https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://0.0.0.0/",
		"https://100.64.0.1/", "https://localhost/", "https://a.localhost/", "ftp://hooks.example.com/", "/relative", "https://hooks.example.com/#x"} {
		if _, err := webhook.CheckURL(bad, false); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := webhook.CheckURL("http://127.0.0.1:9999/hook", true); err != nil {
		t.Errorf("allowed by the operator: %v", err)
	}
	if webhook.CheckAddress(netip.MustParseAddr("10.0.0.7"), false) == nil || webhook.CheckAddress(netip.MustParseAddr("93.184.216.34"), false) != nil {
		t.Error("CheckAddress")
	}
}

func TestRetrySchedule(t *testing.T) {
	t.Parallel()
	for n, base := range webhook.Retries {
		d := webhook.NextDelay(n, 0)
		if d < base*9/10 || d > base*11/10 {
			t.Errorf("attempt %d: %s, want %s ± 10 %%", n, d, base)
		}
	}
	if d := webhook.NextDelay(40, 0); d < 21*time.Hour || d > 27*time.Hour {
		t.Errorf("after the schedule: %s", d)
	}
	if d := webhook.NextDelay(0, time.Hour); d != time.Hour {
		t.Errorf("Retry-After 1h: %s", d)
	}
	for status, want := range map[int]webhook.Outcome{200: webhook.Delivered, 204: webhook.Delivered, 0: webhook.Retry, 500: webhook.Retry,
		400: webhook.Retry, 410: webhook.Gone, 429: webhook.Throttled, 502: webhook.Throttled, 503: webhook.Throttled, 504: webhook.Throttled} {
		if got := webhook.OutcomeOf(status); got != want {
			t.Errorf("%d: %v, want %v", status, got, want)
		}
	}
}
