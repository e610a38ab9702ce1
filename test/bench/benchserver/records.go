package benchserver

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// NewCustomer creates a patient of company and answers its number.
func (s *Server) NewCustomer(company string) (int64, error) {
	var c struct {
		ID int64 `json:"customer_id"`
	}
	err := s.Admin(&c, "admin", "customer", "create", "--company", company, "--first-name", "Anna", "--last-name", "Berger", "--json")
	return c.ID, err
}

// LoadRecords inserts rows objects of kind, each with payload, for one
// customer of company straight into the records table, in 100
// transactions, each stamped by its own transaction id as the server's
// writes are; then it analyzes the table.
func LoadRecords(db *sql.DB, company string, customer int64, kind, payload string, rows int) error {
	const batches = 100
	for range batches {
		_, err := db.Exec(`INSERT INTO records (id, company_id, kind, customer_id, payload, change, created_at, updated_at)
			SELECT gen_random_uuid(), $1, $2, $3, $4::json, pg_current_xact_id()::text::bigint, now(), now()
			FROM generate_series(1, $5)`, company, kind, customer, payload, rows/batches)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	_, err := db.Exec("ANALYZE records")
	return err
}

// SyncPage is one page of a native sync as a client that only goes on
// reads it: the rows counted, not decoded (so the client costs about what
// COPY's does), the next cursor (escaped for a query) and whether more follow.
type SyncPage struct {
	Rows int
	Next string
	More bool
}

// FetchSyncPage fetches one page of section's list with query; buf is
// the client's one read buffer.
func FetchSyncPage(c *http.Client, buf *bytes.Buffer, base, token, section, query string) (SyncPage, error) {
	req, _ := http.NewRequest(http.MethodGet, base+"/api/oauth/v2/resource/"+section+"?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return SyncPage{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	raw := buf.Bytes()
	if err != nil {
		return SyncPage{}, fmt.Errorf("GET %s: %w", section, err)
	}
	if resp.StatusCode != http.StatusOK {
		return SyncPage{}, fmt.Errorf("GET %s: %d %s", section, resp.StatusCode, raw)
	}
	i := bytes.LastIndex(raw, []byte(`],"next_cursor":`))
	if i < 0 {
		return SyncPage{}, fmt.Errorf("GET %s: no next_cursor in %.200s", section, raw)
	}
	var tail struct {
		NextCursor string `json:"next_cursor"`
		HasMore    bool   `json:"has_more"`
	}
	if err := json.Unmarshal(append([]byte("{"), raw[i+2:]...), &tail); err != nil {
		return SyncPage{}, err
	}
	return SyncPage{Rows: bytes.Count(raw[:i], []byte(`{"id":"`)), Next: url.QueryEscape(tail.NextCursor), More: tail.HasMore}, nil
}

// FullSync pages section's list from its start to its end, 500 rows a
// page, and answers the rows received.
func FullSync(c *http.Client, base, token, section string) (int, error) {
	var buf bytes.Buffer
	synced, cursor := 0, ""
	for {
		p, err := FetchSyncPage(c, &buf, base, token, section, "limit=500"+cursor)
		if err != nil {
			return 0, err
		}
		synced += p.Rows
		cursor = "&cursor=" + p.Next
		if !p.More {
			return synced, nil
		}
	}
}
