package webhook_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/webhook"
)

func TestKeyringSealsForOneEndpoint(t *testing.T) {
	key, err := webhook.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := webhook.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := webhook.NewSecret()
	id, other := uuid.New(), uuid.New()
	sealed, err := k.Seal(id, secret)
	if err != nil || string(sealed) == string(secret) {
		t.Fatalf("seal: %v", err)
	}
	if got, err := k.Open(id, sealed); err != nil || got != secret {
		t.Errorf("open: %q, %v", got, err)
	}
	if _, err := k.Open(other, sealed); err == nil {
		t.Error("a secret opens for another endpoint")
	}
	otherKey, _ := webhook.NewKey()
	k2, _ := webhook.NewKeyring(otherKey)
	if _, err := k2.Open(id, sealed); err == nil {
		t.Error("a secret opens with another key")
	}
	for _, bad := range []string{"", "c2hvcnQ=", "not base64!"} {
		if _, err := webhook.NewKeyring(bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}

func TestChangeTypeIDAndOrder(t *testing.T) {
	customer := domain.CustomerID(7)
	c := webhook.Change{Position: webhook.Position{Change: 10, Section: "appointments", ID: "a"}, CustomerID: &customer, At: time.Now()}
	for _, tc := range []struct {
		created, deleted, cancelled bool
		section, want               string
	}{
		{true, false, false, "appointments", "appointments.created"},
		{false, false, false, "appointments", "appointments.updated"},
		{false, false, true, "appointments", "appointments.cancelled"},
		{false, true, true, "appointments", "appointments.deleted"},
		{false, false, true, "notes", "notes.updated"},
	} {
		c.Created, c.Deleted, c.Cancelled, c.Section = tc.created, tc.deleted, tc.cancelled, tc.section
		if got := c.Type(); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc, got, tc.want)
		}
	}
	e1, e2 := uuid.New(), uuid.New()
	again := c // the same change read again, as a retry or a replay does
	if again.MessageID(e1) != c.MessageID(e1) || c.MessageID(e1) == c.MessageID(e2) {
		t.Error("a webhook-id is not stable per endpoint and change")
	}
	next := c
	next.Change = 11
	if next.MessageID(e1) == c.MessageID(e1) {
		t.Error("the object's next write has the same webhook-id")
	}
	body, err := c.Body()
	if err != nil || len(body) > webhook.MaxBody {
		t.Fatalf("body: %s, %v", body, err)
	}
	order := []webhook.Position{{Change: 1, Section: "~"}, {Change: 2, Section: "customers", ID: "10"}, {Change: 2, Section: "customers", ID: "9"},
		{Change: 2, Section: "notes", ID: "a"}, {Change: 3}}
	for i := 1; i < len(order); i++ {
		if !order[i-1].Less(order[i]) || order[i].Less(order[i-1]) {
			t.Errorf("%+v is not before %+v", order[i-1], order[i])
		}
	}
}

func TestSecretsDuringAnOverlap(t *testing.T) {
	now := time.Now()
	until := now.Add(time.Hour)
	e := webhook.Endpoint{Secret: webhook.Sealed("new"), Previous: webhook.Sealed("old"), PreviousUntil: &until}
	if got := e.Secrets(now); len(got) != 2 {
		t.Errorf("during the overlap: %d secrets", len(got))
	}
	if got := e.Secrets(until); len(got) != 1 || string(got[0]) != "new" {
		t.Errorf("after the overlap: %q", got)
	}
}
