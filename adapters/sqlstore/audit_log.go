package sqlstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// AuditLog keeps the audit chains (docs/contract.md §11) in blocks: one
// row per append, holding its events in chain order with their hashes and
// the customers they reached. A group commit of twenty reads is then one
// row, not twenty rows with their indexes. Which customers a company's
// events reached is indexed per segment of its chain (segmentSize events):
// a customer costs the index one row per segment, not one per block.
type AuditLog struct {
	db *bun.DB
	mu sync.Mutex
	// known is what this process last wrote, by company.
	known map[domain.CompanyID]*written
}

// written is what a process knows of a company's chain from its own
// appends: the head it last wrote, and customers whose rows in the index of
// that head's segment are committed.
type written struct {
	head    audit.Link
	segment int64
	indexed map[int64]struct{}
}

var _ ports.AuditLog = (*AuditLog)(nil)

// NewAuditLog returns the audit log of db.
func NewAuditLog(db *bun.DB) *AuditLog {
	return &AuditLog{db: db, known: map[domain.CompanyID]*written{}}
}

// segmentSize is how many seqs of a chain one segment spans: a block
// belongs to segment first_seq / segmentSize. The migration
// 20261125000200_audit_segments and audit_append say 1024 too.
const segmentSize = 1024

func segmentOf(firstSeq int64) int64 { return firstSeq / segmentSize }

type auditHeadRow struct {
	bun.BaseModel `bun:"table:audit_heads,alias:audit_heads"`

	CompanyID uuid.UUID `bun:"company_id,pk"`
	Seq       int64     `bun:"seq"`
	Hash      []byte    `bun:"hash"`
	FloorSeq  int64     `bun:"floor_seq"`
	FloorHash []byte    `bun:"floor_hash"`
}

type auditBlockRow struct {
	bun.BaseModel `bun:"table:audit_blocks,alias:audit_blocks"`

	CompanyID uuid.UUID `bun:"company_id,pk"`
	FirstSeq  int64     `bun:"first_seq,pk"`
	LastSeq   int64     `bun:"last_seq"`
	FirstAt   time.Time `bun:"first_at"`
	LastAt    time.Time `bun:"last_at"`
	PrevHash  []byte    `bun:"prev_hash"`
	Events    []byte    `bun:"events"`
}

// blockEntry is one event of a block: its canonical payload, byte for
// byte as it was hashed, and its hash.
type blockEntry struct {
	Hash  []byte          `json:"h"`
	Event json.RawMessage `json:"e"`
}

// auditSegmentRow says that events of a segment of the company's chain
// reached the customer.
type auditSegmentRow struct {
	bun.BaseModel `bun:"table:audit_customer_segments"`

	CompanyID  uuid.UUID `bun:"company_id,pk"`
	CustomerID int64     `bun:"customer_id,pk"`
	Segment    int64     `bun:"segment,pk"`
}

// Append seals events after the company's head into one block and moves
// the head. In a transaction (a write's event) it locks the head first:
// concurrent appends of one company wait for each other, so its chain has
// no fork; other companies' do not wait. Outside one (the group commit of
// reads) it is atomic on its own: on PostgreSQL one statement, sealed after
// the head this process last wrote, that moves the head only if it is still
// that one — else (another replica wrote, or the first append of this
// process) it locks the head in a transaction of its own.
func (l *AuditLog) Append(ctx context.Context, company domain.CompanyID, events []audit.Event) error {
	if len(events) == 0 {
		return nil
	}
	if _, ok := conn(ctx, l.db).(bun.Tx); ok {
		return l.appendLocked(ctx, company, events)
	}
	if l.db.Dialect().Name() == dialect.PG {
		if head, ok := l.knownHead(company); ok {
			if moved, err := l.appendAfter(ctx, company, head, events); err != nil || moved {
				return err
			}
		}
	}
	return NewTransactor(l.db).InTx(ctx, func(ctx context.Context) error { return l.appendLocked(ctx, company, events) })
}

func (l *AuditLog) appendLocked(ctx context.Context, company domain.CompanyID, events []audit.Event) error {
	db := conn(ctx, l.db)
	tn := tenantOf(db, company)
	head := auditHeadRow{CompanyID: uuid.UUID(company), Hash: []byte{}, FloorHash: []byte{}}
	lockHead := func() error {
		q := tn.SelectModel(&head)
		if db.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		return translate(q.Scan(ctx))
	}
	err := lockHead()
	if errors.Is(err, domain.ErrNotFound) { // the company's first event: its head begins
		if _, err := db.NewInsert().Model(&head).On("CONFLICT (company_id) DO NOTHING").Exec(ctx); err != nil {
			return translate(err)
		}
		err = lockHead()
	}
	if err != nil {
		return err
	}
	block, customers, link := seal(company, audit.Link{Seq: head.Seq, Hash: nilIfEmpty(head.Hash)}, events)
	if _, err := db.NewInsert().Model(&block).Value("customers", "?", customerColumn(db, customers)).Exec(ctx); err != nil {
		return translate(err)
	}
	segment := segmentOf(block.FirstSeq)
	if indexed := l.unindexed(company, segment, customers); len(indexed) > 0 {
		rows := make([]auditSegmentRow, len(indexed))
		for i, c := range indexed {
			rows[i] = auditSegmentRow{CompanyID: uuid.UUID(company), CustomerID: c, Segment: segment}
		}
		if _, err := db.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
			return translate(err)
		}
	}
	if _, err = tn.UpdateModel((*auditHeadRow)(nil)).Set("seq = ?", link.Seq).Set("hash = ?", link.Hash).Exec(ctx); err != nil {
		return translate(err)
	}
	// The head is remembered before the commit: should it not come, the
	// next append's statement finds the head elsewhere and takes this path
	// again. The index rows are not: they are known only once committed.
	l.remember(company, link, segment, nil)
	return nil
}

// appendAfter is the one-statement append after a head this process knows
// (the function audit_append of the migrations): the block and its
// customers are written only if the head row still is that head, and it
// moves in the same statement. A concurrent append waits for the head's row
// lock, then finds it moved and writes nothing.
func (l *AuditLog) appendAfter(ctx context.Context, company domain.CompanyID, head audit.Link, events []audit.Event) (bool, error) {
	block, customers, link := seal(company, head, events)
	segment := segmentOf(block.FirstSeq)
	indexed := l.unindexed(company, segment, customers)
	var moved bool
	var err error
	if hot(l.db) {
		err = scanHot(ctx, l.db, "audit append", func(tn tenant) hotQuery {
			return tn.Raw("SELECT audit_append(?0, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
		}, company, []any{head.Seq, orEmpty(head.Hash), link.Seq, link.Hash, block.FirstAt, block.LastAt, block.Events,
			nonNil(customers), nonNil(indexed)}, &moved)
	} else {
		err = tenantOf(l.db, company).Raw("SELECT audit_append(?0, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", head.Seq, orEmpty(head.Hash), link.Seq, link.Hash,
			block.FirstAt, block.LastAt, block.Events, pgdialect.Array(customers), pgdialect.Array(indexed)).Scan(ctx, &moved)
	}
	if err != nil {
		return false, translate(err)
	}
	if !moved {
		l.forget(company)
		return false, nil
	}
	l.remember(company, link, segment, indexed) // one statement, committed
	return true, nil
}

// nonNil is ids as an array argument: empty, not NULL, when there are none.
func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// customerColumn is a block's customers as its column holds them: an array
// on PostgreSQL, a JSON array on SQLite.
func customerColumn(db bun.IDB, customers []int64) any {
	if db.Dialect().Name() == dialect.PG {
		return pgdialect.Array(customers)
	}
	out := []byte{'['}
	for i, c := range customers {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendInt(out, c, 10)
	}
	return string(append(out, ']'))
}

// reaches narrows a select of blocks to those whose events reached customer.
func reaches(db bun.IDB, s *bun.SelectQuery, customer int64) *bun.SelectQuery {
	if db.Dialect().Name() == dialect.PG {
		return s.Where("customers @> ARRAY[?::bigint]", customer)
	}
	return s.Where("EXISTS (SELECT 1 FROM json_each(customers) WHERE value = ?)", customer)
}

// seal chains events after link into one block; it answers the block, the
// distinct customers its events name, and the block's last link.
func seal(company domain.CompanyID, link audit.Link, events []audit.Event) (auditBlockRow, []int64, audit.Link) {
	// first_at and last_at bound every event's time (a batch need not be
	// in time order): a query by time finds the block by them.
	block := auditBlockRow{CompanyID: uuid.UUID(company), FirstSeq: link.Seq + 1, PrevHash: orEmpty(link.Hash),
		FirstAt: events[0].Time.UTC(), LastAt: events[0].Time.UTC()}
	for _, e := range events[1:] {
		if e.Time.Before(block.FirstAt) {
			block.FirstAt = e.Time.UTC()
		}
		if e.Time.After(block.LastAt) {
			block.LastAt = e.Time.UTC()
		}
	}
	// The block is written out by hand, as json.Marshal of []blockEntry
	// would spell it: the payloads are canonical JSON already, and
	// json.Marshal would scan each of them again.
	out := append(make([]byte, 0, 64*len(events)+len(events)*512), '[')
	customers := []int64{}
	var payload []byte // each event's canonical spelling in turn, copied into out
	for i, e := range events {
		payload = e.AppendCanonical(payload[:0])
		sealed := audit.Seal(company, link, payload)
		link = sealed.Link()
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"h":"`...)
		out = base64.StdEncoding.AppendEncode(out, sealed.Hash)
		out = append(out, `","e":`...)
		out = append(out, sealed.Payload...)
		out = append(out, '}')
		for _, c := range e.CustomerIDs {
			customers = append(customers, int64(c))
		}
	}
	block.LastSeq = link.Seq
	block.Events = append(out, ']')
	slices.Sort(customers)
	return block, slices.Compact(customers), link
}

func (l *AuditLog) knownHead(company domain.CompanyID) (audit.Link, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.known[company]; ok {
		return w.head, true
	}
	return audit.Link{}, false
}

// unindexed answers those of customers that segment's index may not have
// yet: all but those this process committed itself. Another process's rows
// are not known here; ON CONFLICT DO NOTHING passes over them.
func (l *AuditLog) unindexed(company domain.CompanyID, segment int64, customers []int64) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := l.known[company]
	if !ok || w.segment != segment {
		return customers
	}
	out := []int64{}
	for _, c := range customers {
		if _, ok := w.indexed[c]; !ok {
			out = append(out, c)
		}
	}
	return out
}

// remember records company's head after an append of this process, in
// segment, and customers whose index rows in it are committed.
func (l *AuditLog) remember(company domain.CompanyID, link audit.Link, segment int64, indexed []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := l.known[company]
	if !ok {
		if len(l.known) >= maxKnownHeads {
			clear(l.known)
		}
		w = &written{}
		l.known[company] = w
	}
	if !ok || w.segment != segment {
		w.segment, w.indexed = segment, map[int64]struct{}{}
	}
	w.head = link
	for _, c := range indexed {
		if len(w.indexed) == maxKnownIndexed {
			break
		}
		w.indexed[c] = struct{}{}
	}
}

func (l *AuditLog) forget(company domain.CompanyID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.known, company)
}

// maxKnownHeads bounds the companies a process remembers: past it they are
// forgotten, and the next append of each locks its head once.
const maxKnownHeads = 100_000

// maxKnownIndexed bounds the customers a process remembers of one
// company's segment; those past it are offered to the index again.
const maxKnownIndexed = 4_096

func orEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// blocksPerRead is how many blocks one query reads.
const blocksPerRead = 100

// eachBlock hands fn company's blocks in chain order, after seq after,
// narrowed by where; fn answers false to stop.
func (l *AuditLog) eachBlock(ctx context.Context, company domain.CompanyID, after int64,
	where func(*bun.SelectQuery) *bun.SelectQuery, fn func(auditBlockRow) (bool, error)) error {
	from := int64(-1)
	for {
		var rows []auditBlockRow
		q := tenantOf(conn(ctx, l.db), company).SelectModel(&rows).Where("last_seq > ?", after).Where("first_seq > ?", from)
		if err := where(q).OrderExpr("first_seq").Limit(blocksPerRead).Scan(ctx); err != nil {
			return translate(err)
		}
		for _, r := range rows {
			more, err := fn(r)
			if err != nil || !more {
				return err
			}
			from = r.FirstSeq
		}
		if len(rows) < blocksPerRead {
			return nil
		}
	}
}

// entries reads a block's events: each with its sequence number and the
// hash of the one before it.
func (r auditBlockRow) entries() ([]audit.Sealed, error) {
	var entries []blockEntry
	if err := json.Unmarshal(r.Events, &entries); err != nil {
		return nil, err
	}
	out := make([]audit.Sealed, len(entries))
	prev := nilIfEmpty(r.PrevHash)
	for i, e := range entries {
		out[i] = audit.Sealed{Company: domain.CompanyID(r.CompanyID), Seq: r.FirstSeq + int64(i), Payload: e.Event, PrevHash: prev, Hash: e.Hash}
		prev = e.Hash
	}
	return out, nil
}

func (l *AuditLog) List(ctx context.Context, company domain.CompanyID, q audit.Query) (audit.Page, error) {
	db := conn(ctx, l.db)
	where := func(s *bun.SelectQuery) *bun.SelectQuery {
		if q.Customer != nil {
			s = reaches(db, s, int64(*q.Customer))
		}
		if q.From != nil {
			s = s.Where("last_at >= ?", q.From.UTC())
		}
		if q.To != nil {
			s = s.Where("first_at < ?", q.To.UTC())
		}
		return s
	}
	page := audit.Page{Last: q.After}
	collect := func(b auditBlockRow) (bool, error) {
		entries, err := b.entries()
		if err != nil {
			return false, err
		}
		for _, s := range entries {
			if s.Seq <= q.After || !matches(s.Payload, q) {
				continue
			}
			if len(page.Events) == q.Limit {
				page.HasMore = true
				return false, nil
			}
			page.Events = append(page.Events, s.Payload)
			page.Last = s.Seq
		}
		return true, nil
	}
	if q.Customer == nil {
		return page, l.eachBlock(ctx, company, q.After, where, collect)
	}
	// By customer: the blocks of the segments the customer's index names,
	// a batch of segments a query.
	err := l.eachSegments(ctx, company, int64(*q.Customer), q.After, func(segments []int64) (bool, error) {
		inSegments := func(s *bun.SelectQuery) *bun.SelectQuery {
			return where(s).WhereGroup(" AND ", func(s *bun.SelectQuery) *bun.SelectQuery {
				for _, segment := range segments {
					s = s.WhereOr("first_seq >= ? AND first_seq < ?", segment*segmentSize, (segment+1)*segmentSize)
				}
				return s
			})
		}
		err := l.eachBlock(ctx, company, q.After, inSegments, collect)
		return !page.HasMore, err
	})
	return page, err
}

// A query by customer reads the blocks of firstSegments segments, then of
// four times as many each time, up to maxSegments: a customer met in every
// block fills a page from the first few, a rare one needs many.
const (
	firstSegments = 4
	maxSegments   = 64
)

// eachSegments hands fn, in order and in growing batches, the
// segments of company's chain whose events reached customer, from the one
// holding seq after on; fn answers false to stop.
func (l *AuditLog) eachSegments(ctx context.Context, company domain.CompanyID, customer, after int64, fn func([]int64) (bool, error)) error {
	tn := tenantOf(conn(ctx, l.db), company)
	from := int64(0)
	if after > 0 {
		// The block holding seq after may begin in an earlier segment
		// than after's own, and still hold events after it.
		var first int64
		err := translate(tn.SelectModel((*auditBlockRow)(nil)).Column("first_seq").Where("first_seq <= ?", after).
			OrderExpr("first_seq DESC").Limit(1).Scan(ctx, &first))
		switch {
		case err == nil:
			from = segmentOf(first)
		case !errors.Is(err, domain.ErrNotFound):
			return err
		}
	}
	for batch := int64(firstSegments); ; batch = min(4*batch, maxSegments) {
		var segments []int64
		if err := tn.Select("audit_customer_segments").Column("segment").Where("customer_id = ?", customer).
			Where("segment >= ?", from).OrderExpr("segment").Limit(batch).Scan(ctx, &segments); err != nil {
			return translate(err)
		}
		if len(segments) == 0 {
			return nil
		}
		if more, err := fn(segments); err != nil || !more {
			return err
		}
		if int64(len(segments)) < batch {
			return nil
		}
		from = segments[len(segments)-1] + 1
	}
}

// matches tells whether an event answers the query's filters.
func matches(payload []byte, q audit.Query) bool {
	if q.Customer != nil {
		if reaches, ok := audit.Reaches(payload, *q.Customer); ok && !reaches {
			return false
		}
	}
	if q.Customer == nil && q.Agent == "" && q.From == nil && q.To == nil {
		return true
	}
	var e struct {
		Time  time.Time `json:"time"`
		Agent struct {
			ID string `json:"id"`
		} `json:"agent"`
		CustomerIDs []domain.CustomerID `json:"customer_ids"`
	}
	if json.Unmarshal(payload, &e) != nil {
		return false
	}
	return (q.Customer == nil || slices.Contains(e.CustomerIDs, *q.Customer)) && (q.Agent == "" || e.Agent.ID == q.Agent) &&
		(q.From == nil || !e.Time.Before(*q.From)) && (q.To == nil || e.Time.Before(*q.To))
}

func (l *AuditLog) Chain(ctx context.Context, company domain.CompanyID) (audit.Link, audit.Link, error) {
	var head auditHeadRow
	if err := tenantOf(conn(ctx, l.db), company).SelectModel(&head).Scan(ctx); err != nil {
		if errors.Is(translate(err), domain.ErrNotFound) {
			return audit.Link{}, audit.Link{}, nil // nothing recorded yet
		}
		return audit.Link{}, audit.Link{}, translate(err)
	}
	return audit.Link{Seq: head.FloorSeq, Hash: nilIfEmpty(head.FloorHash)}, audit.Link{Seq: head.Seq, Hash: nilIfEmpty(head.Hash)}, nil
}

// Walk hands fn each event with what the index says of it (audit.Index):
// its block's time range, and the customers a query by customer finds the
// block under — those of the block's column that its segment's rows name.
func (l *AuditLog) Walk(ctx context.Context, company domain.CompanyID, upTo int64, fn func(audit.Sealed) error) error {
	index := segmentIndex{log: l, company: company}
	return l.eachBlock(ctx, company, -1, func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("first_seq <= ?", upTo) },
		func(b auditBlockRow) (bool, error) {
			entries, err := b.entries()
			if err != nil {
				return false, err
			}
			idx, err := index.of(ctx, b)
			if err != nil {
				return false, err
			}
			for _, s := range entries {
				if s.Seq > upTo {
					return false, nil
				}
				s.Index = idx
				if err := fn(s); err != nil {
					return false, err
				}
			}
			return true, nil
		})
}

// segmentIndex reads the customer index of a walk's blocks, a window of
// segments at a time: each block's customers column and its segments' rows.
type segmentIndex struct {
	log       *AuditLog
	company   domain.CompanyID
	from      int64 // the window's first segment
	until     int64 // past its last
	loaded    bool
	segments  map[int64]map[domain.CustomerID]bool
	customers map[int64]blockCustomers // by the block's first seq
}

// segmentWindow is how many segments one read of the index spans.
const segmentWindow = 64

// of is what the index says of block b: its times, and the customers of
// its column that its segment's rows name.
func (x *segmentIndex) of(ctx context.Context, b auditBlockRow) (*audit.Index, error) {
	segment := segmentOf(b.FirstSeq)
	if !x.loaded || segment < x.from || segment >= x.until {
		if err := x.load(ctx, segment); err != nil {
			return nil, err
		}
	}
	idx := &audit.Index{From: b.FirstAt, To: b.LastAt, Customers: map[domain.CustomerID]bool{}}
	for _, c := range x.customers[b.FirstSeq] {
		if x.segments[segment][domain.CustomerID(c)] {
			idx.Customers[domain.CustomerID(c)] = true
		}
	}
	return idx, nil
}

func (x *segmentIndex) load(ctx context.Context, segment int64) error {
	x.from, x.until, x.loaded = segment, segment+segmentWindow, true
	tn := tenantOf(conn(ctx, x.log.db), x.company)
	var rows []auditSegmentRow
	if err := tn.SelectModel(&rows).Where("segment >= ?", x.from).Where("segment < ?", x.until).Scan(ctx); err != nil {
		return translate(err)
	}
	x.segments = map[int64]map[domain.CustomerID]bool{}
	for _, r := range rows {
		if x.segments[r.Segment] == nil {
			x.segments[r.Segment] = map[domain.CustomerID]bool{}
		}
		x.segments[r.Segment][domain.CustomerID(r.CustomerID)] = true
	}
	var blocks []struct {
		FirstSeq  int64          `bun:"first_seq"`
		Customers blockCustomers `bun:"customers"`
	}
	if err := tn.SelectModel((*auditBlockRow)(nil)).ColumnExpr("first_seq, CAST(customers AS TEXT) AS customers").
		Where("first_seq >= ?", x.from*segmentSize).Where("first_seq < ?", x.until*segmentSize).Scan(ctx, &blocks); err != nil {
		return translate(err)
	}
	x.customers = make(map[int64]blockCustomers, len(blocks))
	for _, b := range blocks {
		x.customers[b.FirstSeq] = b.Customers
	}
	return nil
}

// blockCustomers reads a block's customers column: an array on PostgreSQL
// ({1,2}), a JSON array on SQLite ([1,2]). Blocks are written with
// customerColumn; this side only reads.
type blockCustomers []int64

func (c *blockCustomers) Scan(src any) error {
	var text string
	switch s := src.(type) {
	case nil:
		*c = nil
		return nil
	case string:
		text = s
	case []byte:
		text = string(s)
	default:
		return errors.New("audit block customers: an unexpected column type")
	}
	text = strings.Trim(strings.TrimSpace(text), "{}[]")
	*c = (*c)[:0]
	for _, f := range strings.Split(text, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return fmt.Errorf("audit block customers: %w", err)
		}
		*c = append(*c, n)
	}
	return nil
}

// Sweep deletes the leading blocks whose events are all older than before
// and leaves, in the head, the last deleted event's link as the checkpoint
// verification starts from.
func (l *AuditLog) Sweep(ctx context.Context, company domain.CompanyID, before time.Time) (int64, error) {
	db := conn(ctx, l.db)
	tn := tenantOf(db, company)
	var last auditBlockRow
	// Events are sealed in time order: the newest block wholly older than
	// before ends the part that goes.
	err := tn.SelectModel(&last).Where("last_at < ?", before.UTC()).OrderExpr("first_seq DESC").Limit(1).Scan(ctx)
	if errors.Is(translate(err), domain.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, translate(err)
	}
	entries, err := last.entries()
	if err != nil {
		return 0, err
	}
	var n int64
	if err := tn.SelectModel((*auditBlockRow)(nil)).ColumnExpr("COALESCE(SUM(last_seq - first_seq + 1), 0)").
		Where("first_seq <= ?", last.FirstSeq).Scan(ctx, &n); err != nil {
		return 0, translate(err)
	}
	// A segment's index goes once all its blocks have: the segment of the
	// last block that goes may hold blocks that stay.
	if _, err := tn.Delete("audit_customer_segments").Where("segment < ?", segmentOf(last.FirstSeq)).Exec(ctx); err != nil {
		return 0, translate(err)
	}
	if _, err := tn.DeleteModel((*auditBlockRow)(nil)).Where("first_seq <= ?", last.FirstSeq).Exec(ctx); err != nil {
		return 0, translate(err)
	}
	floor := entries[len(entries)-1]
	if _, err := tn.UpdateModel((*auditHeadRow)(nil)).Set("floor_seq = ?", floor.Seq).Set("floor_hash = ?", floor.Hash).Exec(ctx); err != nil {
		return 0, translate(err)
	}
	return n, nil
}
