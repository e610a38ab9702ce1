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
// writes are; then it vacuums and analyzes the table. A transaction's rows
// are written in id order: the table's rows then lie in the feed's order
// (change, id), as those of a practice's many small transactions do. (In
// random id order, each row of a 10,000-row transaction on a heap page of
// its own, a feed's page read 500 heap pages for 500 rows: an artefact of
// loading in bulk that no practice's table has.)
func LoadRecords(db *sql.DB, company string, customer int64, kind, payload string, rows int) error {
	const batches = 100
	for range batches {
		_, err := db.Exec(`INSERT INTO records (id, company_id, kind, customer_id, payload, change, created_at, updated_at)
			SELECT id, $1, $2, $3, $4::json, pg_current_xact_id()::text::bigint, now(), now()
			FROM (SELECT gen_random_uuid() AS id FROM generate_series(1, $5)) AS fresh ORDER BY id`, company, kind, customer, payload, rows/batches)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	// VACUUM as autovacuum would soon: hint bits and the visibility map
	// set, so that neither the floor nor the sync pays for the first read.
	_, err := db.Exec("VACUUM ANALYZE records")
	return err
}

// SyncPage is one page of a native sync as a client reads it before it
// goes on: the rows counted, the next cursor (escaped for a query) and
// whether more follow (FetchSyncPage's buf keeps the page's body).
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
// page, and answers the rows received. With decode, it is a client that
// decodes every page, as an integrator's does: decode is given each page's
// body and answers the rows it decoded; it runs while the next page is
// fetched (the cursor is read from the page's tail first), as a client
// that stores one page while it asks for the next would.
func FullSync(c *http.Client, base, token, section string, decode func(page []byte) (int, error)) (int, error) {
	type page struct {
		buf  *bytes.Buffer
		rows int
	}
	pages, free, decoded := make(chan page, 1), make(chan *bytes.Buffer, 2), make(chan error, 1)
	free <- new(bytes.Buffer)
	free <- new(bytes.Buffer)
	synced := 0
	go func() {
		var err error
		for p := range pages {
			if err == nil && decode != nil {
				var n int
				if n, err = decode(p.buf.Bytes()); err == nil && n != p.rows {
					err = fmt.Errorf("decoded %d rows of a page of %d", n, p.rows)
				}
			}
			synced += p.rows
			free <- p.buf
		}
		decoded <- err
	}()
	cursor := ""
	for {
		buf := <-free
		p, err := FetchSyncPage(c, buf, base, token, section, "limit=500"+cursor)
		if err != nil {
			close(pages)
			<-decoded
			return 0, err
		}
		pages <- page{buf: buf, rows: p.Rows}
		cursor = "&cursor=" + p.Next
		if !p.More {
			close(pages)
			if err := <-decoded; err != nil {
				return 0, err
			}
			return synced, nil
		}
	}
}
