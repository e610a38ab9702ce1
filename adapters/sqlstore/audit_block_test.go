package sqlstore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
)

// The block seal writes by hand is what json.Marshal of its entries would
// write, and reads back to the same payloads and hashes.
func TestSealWritesTheBlockAsJSONWould(t *testing.T) {
	company := domain.NewCompanyID()
	var events []audit.Event
	for i, name := range []string{"Kalender <Sync> & Co", "Praxis \"Huber\"", "Ärzte\u2028Zentrum"} {
		e := audit.New(time.Date(2026, 11, 25, 8, 0, i, 0, time.UTC))
		e.Agent = audit.Agent{Type: audit.AgentClient, ID: "pc_block", Name: name}
		e.Action, e.Section, e.ObjectID, e.Outcome = audit.ActionRead, "customers", "42", audit.Outcome{Status: 200}
		e.CustomerIDs = []domain.CustomerID{domain.CustomerID(42 + i), 42}
		events = append(events, e)
	}
	block, customers, last := seal(company, audit.Link{Seq: 7, Hash: bytes.Repeat([]byte{1}, 32)}, events)

	link := audit.Link{Seq: 7, Hash: bytes.Repeat([]byte{1}, 32)}
	var want []blockEntry
	for _, e := range events {
		sealed := audit.Seal(company, link, e.Canonical())
		link = sealed.Link()
		want = append(want, blockEntry{Hash: sealed.Hash, Event: sealed.Payload})
	}
	wantBytes, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(block.Events, wantBytes) {
		t.Errorf("block:\n%s\nwant:\n%s", block.Events, wantBytes)
	}
	var got []blockEntry
	if err := json.Unmarshal(block.Events, &got); err != nil || len(got) != len(events) {
		t.Fatalf("the block does not read back: %d entries, %v", len(got), err)
	}
	if block.FirstSeq != 8 || block.LastSeq != 10 || last.Seq != 10 || !bytes.Equal(last.Hash, want[2].Hash) {
		t.Errorf("block %d..%d, last link %v", block.FirstSeq, block.LastSeq, last)
	}
	if len(customers) != 3 || customers[0] != 42 || customers[2] != 44 {
		t.Errorf("customers %v, want 42, 43, 44 once each", customers)
	}
}
