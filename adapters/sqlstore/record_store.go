package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// RecordStore keeps every generic section: customers in their table, the
// record kinds in one records table whose composite foreign key
// (company_id, customer_id) lets no record name another company's patient.
// Every write and delete runs the kind's declared hooks (hooks.go) in its transaction.
type RecordStore struct {
	db    *bun.DB
	hooks map[domain.StoreHook]Hook
}

var _ ports.RecordStore = (*RecordStore)(nil)

// NewRecordStore returns the store of db.
func NewRecordStore(db *bun.DB) *RecordStore { return &RecordStore{db: db, hooks: hooks} }

// objectRow is a row of either table as the feed reads it.
type objectRow struct {
	ID         string     `bun:"id"`
	CustomerID *int64     `bun:"customer_id"`
	Payload    []byte     `bun:"payload"`
	Version    int64      `bun:"version"`
	Change     int64      `bun:"change"`
	CreatedAt  time.Time  `bun:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at"`
	DeletedAt  *time.Time `bun:"deleted_at"`
}

func (r objectRow) toPort() ports.StoredObject {
	o := ports.StoredObject{ID: r.ID, Payload: r.Payload, Version: r.Version, Change: r.Change, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	o.Customer = (*domain.CustomerID)(r.CustomerID) // the row's own number: no allocation per row of a page
	o.DeletedAt = utcPtr(r.DeletedAt)
	return o
}

// table is where a kind's objects live and how its rows are read.
type table struct {
	name    string
	columns string
	kind    string // the records table's kind column value; "" for customers
}

// tableOf is the one place that maps a kind to its storage: the customers
// table for the customers' shape, the records table (by slug) for the rest.
func tableOf(k *domain.Kind) table {
	if k.NumericIDs() {
		return table{name: "customers", columns: "CAST(id AS TEXT) AS id, NULL AS customer_id, payload, version, change, created_at, updated_at, deleted_at"}
	}
	return table{name: "records", columns: "CAST(id AS TEXT) AS id, customer_id, payload, version, change, created_at, updated_at, deleted_at", kind: k.Slug}
}

// where is a query narrowed to t's kind, for the records table.
type where[Q any] interface {
	Where(query string, args ...any) Q
}

// ofKind narrows a query of the company's rows of t to t's kind.
func ofKind[Q where[Q]](t table, q Q) Q {
	if t.kind != "" {
		return q.Where(t.name+".kind = ?", t.kind)
	}
	return q
}

// selectIn reads the company's objects of t's kind.
func (t table) selectIn(tn tenant) *bun.SelectQuery {
	return ofKind(t, tn.Select(t.name).ColumnExpr(t.columns))
}

// idArg is an id as the table compares it: a number for customers.
func (t table) idArg(id string) (any, bool) {
	if t.kind == "" {
		n, ok := domain.ParseCustomerPathID(id)
		return int64(n), ok
	}
	return id, domain.ValidObjectID(id)
}

// idArgs are the keys among ids that can name an object of t, as idArg makes them.
func (t table) idArgs(ids []string) []any {
	args := make([]any, 0, len(ids))
	for _, id := range ids {
		if a, ok := t.idArg(id); ok {
			args = append(args, a)
		}
	}
	return args
}

func (s *RecordStore) Insert(ctx context.Context, company domain.CompanyID, kind *domain.Kind, obj ports.StoredObject) (ports.StoredObject, error) {
	db := conn(ctx, s.db)
	change, err := nextChange(ctx, db)
	if err != nil {
		return ports.StoredObject{}, err
	}
	now := obj.CreatedAt.UTC()
	t := tableOf(kind)
	if t.kind == "" {
		id, err := s.insertCustomer(ctx, db, company, obj, change)
		if err != nil {
			return ports.StoredObject{}, err
		}
		obj.ID = id
	} else {
		var customer *int64
		if obj.Customer != nil {
			customer = ptr(int64(*obj.Customer))
		}
		row := map[string]any{
			"id": uuid.MustParse(obj.ID), "company_id": uuid.UUID(company), "kind": t.kind, "customer_id": customer,
			"payload": string(obj.Payload), "change": change, "created_at": now, "updated_at": now,
		}
		_, err = db.NewInsert().Model(&row).TableExpr("records").Exec(ctx)
		if err != nil {
			return ports.StoredObject{}, translate(err)
		}
	}
	if err := s.written(ctx, db, company, kind, obj.ID, obj.Payload); err != nil {
		return ports.StoredObject{}, err
	}
	obj.Version, obj.Change, obj.CreatedAt, obj.UpdatedAt = 1, change, now, now
	return obj, nil
}

func (s *RecordStore) insertCustomer(ctx context.Context, db bun.IDB, company domain.CompanyID, obj ports.StoredObject, change int64) (string, error) {
	x := domain.PatientIndexOf(obj.Payload)
	row := indexColumns(company, x, db.Dialect().Name() == dialect.PG)
	for k, v := range map[string]any{
		"company_id": uuid.UUID(company), "payload": string(obj.Payload), "svnr": x.SVNR,
		"change": change, "created_at": obj.CreatedAt.UTC(), "updated_at": obj.CreatedAt.UTC(),
	} {
		row[k] = v
	}
	explicit := obj.ID != ""
	if explicit {
		row["id"], _ = strconv.ParseInt(obj.ID, 10, 64)
	}
	var id int64
	if err := db.NewInsert().Model(&row).TableExpr("customers").Returning("id").Scan(ctx, &id); err != nil {
		return "", translate(err)
	}
	if explicit && db.Dialect().Name() == dialect.PG {
		if err := keepSequencePast(ctx, db, id); err != nil {
			return "", err
		}
	}
	if err := writeWords(ctx, db, company, []indexed{{id, x}}, true); err != nil {
		return "", err
	}
	return strconv.FormatInt(id, 10), nil
}

// keepSequencePast moves PostgreSQL's customer id sequence past id, so that
// an id a client chose is not handed out again.
func keepSequencePast(ctx context.Context, db bun.IDB, id int64) error {
	_, err := acrossCompanies(db, "the customer id sequence is one for all companies").ExecContext(ctx,
		"SELECT setval(pg_get_serial_sequence('customers', 'id'), GREATEST(?, (SELECT last_value FROM customers_id_seq)))", id)
	return translate(err)
}

func (s *RecordStore) Update(ctx context.Context, company domain.CompanyID, kind *domain.Kind, id string, payload []byte, at time.Time) (ports.StoredObject, error) {
	db := conn(ctx, s.db)
	t := tableOf(kind)
	arg, ok := t.idArg(id)
	if !ok {
		return ports.StoredObject{}, domain.ErrNotFound
	}
	change, err := nextChange(ctx, db)
	if err != nil {
		return ports.StoredObject{}, err
	}
	q := ofKind(t, tenantOf(db, company).Update(t.name)).Set("payload = ?", string(payload)).Set("change = ?", change).
		Set("version = version + 1").Set("updated_at = ?", at.UTC()).Where("id = ?", arg).Where("deleted_at IS NULL")
	var x domain.PatientIndex
	if t.kind == "" {
		x = domain.PatientIndexOf(payload)
		q = setIndex(q, company, x)
	}
	if err := affectedOne(q.Exec(ctx)); err != nil {
		return ports.StoredObject{}, err
	}
	if t.kind == "" {
		if err := writeWords(ctx, db, company, []indexed{{arg.(int64), x}}, false); err != nil {
			return ports.StoredObject{}, err
		}
	}
	if err := s.written(ctx, db, company, kind, id, payload); err != nil {
		return ports.StoredObject{}, err
	}
	return s.Get(ctx, company, kind, id, false)
}

func (s *RecordStore) Delete(ctx context.Context, company domain.CompanyID, kind *domain.Kind, id string, at time.Time) error {
	db := conn(ctx, s.db)
	t := tableOf(kind)
	arg, ok := t.idArg(id)
	if !ok {
		return domain.ErrNotFound
	}
	change, err := nextChange(ctx, db)
	if err != nil {
		return err
	}
	q := ofKind(t, tenantOf(db, company).Update(t.name)).Set("change = ?", change).Set("version = version + 1").
		Set("updated_at = ?", at.UTC()).Set("deleted_at = ?", at.UTC()).Where("id = ?", arg).Where("deleted_at IS NULL")
	if err := affectedOne(q.Exec(ctx)); err != nil {
		return err
	}
	return s.deleted(ctx, db, company, kind, id)
}

func (s *RecordStore) Get(ctx context.Context, company domain.CompanyID, kind *domain.Kind, id string, forUpdate bool) (ports.StoredObject, error) {
	t := tableOf(kind)
	arg, ok := t.idArg(id)
	if !ok {
		return ports.StoredObject{}, domain.ErrNotFound
	}
	var row objectRow
	if !forUpdate && hot(s.db) {
		err := scanHot(ctx, s.db, "object:"+kind.Slug, func(tn tenant) hotQuery {
			return t.selectIn(tn).Where("id = ?", bun.Safe("$2")).Where("deleted_at IS NULL")
		}, company, []any{arg}, &row)
		if err != nil {
			return ports.StoredObject{}, translate(err)
		}
		return row.toPort(), nil
	}
	q := t.selectIn(tenantOf(conn(ctx, s.db), company)).Where("id = ?", arg).Where("deleted_at IS NULL")
	if forUpdate && s.db.Dialect().Name() == dialect.PG {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx, &row); err != nil {
		return ports.StoredObject{}, translate(err)
	}
	return row.toPort(), nil
}

func (s *RecordStore) List(ctx context.Context, company domain.CompanyID, kind *domain.Kind, lq domain.ListQuery) (ports.Page, error) {
	t := tableOf(kind)
	tn := tenantOf(conn(ctx, s.db), company)
	var args *feedArgs
	if preparedPage(ctx, s.db, lq) { // a hot statement (feed_rows.go): the company is $1
		tn, args = hotTenant(s.db), &feedArgs{}
	}
	if lq.Searches() && t.kind != "" {
		return ports.Page{}, errors.New("a search is of the customers' list only")
	}
	q, err := t.listQuery(tn, lq, args)
	if err != nil {
		return ports.Page{}, err
	}
	if lq.Searches() {
		// A search answers only once the company's customers are all
		// indexed: a page with rows shows it in its own statement, an
		// empty one asks (searchReady), so a search costs one round trip.
		q = q.Where("NOT EXISTS (?)", unindexed(tn.db, company))
	}
	// The page's rows and the one that tells whether there is more: bun
	// appends to the slice, which grows a page at a time otherwise.
	rows, err := scanObjectRows(ctx, s.db, q, company, args, lq.Limit+1, make([]objectRow, 0, lq.Limit+1))
	if err != nil {
		return ports.Page{}, translate(err)
	}
	var total *int64
	if lq.Searches() {
		if len(rows) == 0 {
			if err := s.searchReady(ctx, company); err != nil {
				return ports.Page{}, err
			}
		}
		if lq.Total != domain.TotalNone {
			n, err := s.count(ctx, company, lq)
			if err != nil {
				return ports.Page{}, err
			}
			total = &n
		}
	}
	rows, next, more := trimPage(rows, lq, func(r objectRow) domain.Cursor {
		if len(lq.Sort) > 0 {
			return domain.Cursor{ID: r.ID, Order: domain.OrderOf(lq.Sort), Keys: domain.SortKeysOf(lq.Sort, r.Payload, r.Change)}
		}
		return domain.Cursor{Change: r.Change, ID: r.ID}
	})
	page := ports.Page{Items: make([]ports.StoredObject, len(rows)), Next: next, HasMore: more, Total: total}
	for i, r := range rows {
		page.Items[i] = r.toPort()
	}
	return page, nil
}

// listQuery is the select of one page of t's list in tn: its filters, a
// search's conditions, the feed's keyset or a sort's (feedQuery).
func (t table) listQuery(tn tenant, lq domain.ListQuery, args *feedArgs) (*bun.SelectQuery, error) {
	base := t.selectIn(tn)
	if lq.Calendar.Any() { // only calendar kinds' lists take these filters
		base = calendarFilter(base, tn, lq.Calendar)
	}
	if len(lq.Search) > 0 {
		base = searchWhere(base, domain.CompanyID(tn.id), lq.Search) // never a hot statement (preparedPage)
	}
	if len(lq.Where) > 0 { // the use case lets each list take only its own
		var err error
		if base, err = recordWhere(base, tn, t.name, lq.Where); err != nil {
			return nil, err
		}
	}
	return feedQuery(base, t.name, lq, t.idArg, args)
}

func (s *RecordStore) Lookup(ctx context.Context, company domain.CompanyID, section string, ids []string) (map[string]domain.RefTarget, error) {
	found := map[string]domain.RefTarget{}
	if len(ids) == 0 {
		return found, nil
	}
	db := conn(ctx, s.db)
	switch section {
	case "customers":
		nums := make([]int64, 0, len(ids))
		for _, id := range ids {
			if n, ok := domain.ParseCustomerPathID(id); ok {
				nums = append(nums, int64(n))
			}
		}
		if len(nums) == 0 {
			return found, nil
		}
		var live []int64
		err := tenantOf(db, company).Select("customers").Column("id").Where("id IN (?)", bun.List(nums)).Where("deleted_at IS NULL").Scan(ctx, &live)
		for _, id := range live {
			found[strconv.FormatInt(id, 10)] = domain.RefTarget{}
		}
		return found, translate(err)
	case "files":
		var rows []struct {
			ID          string `bun:"id"`
			CustomerID  int64  `bun:"customer_id"`
			ContentType string `bun:"content_type"`
		}
		err := tenantOf(db, company).Select("files").ColumnExpr("CAST(id AS TEXT) AS id, customer_id, content_type").
			Where("id IN (?)", bun.List(validIDs(ids))).Scan(ctx, &rows)
		for _, r := range rows {
			c := domain.CustomerID(r.CustomerID)
			found[r.ID] = domain.RefTarget{Customer: &c, Attrs: map[string]any{"content_type": r.ContentType}}
		}
		return found, translate(err)
	}
	var rows []objectRow
	err := tenantOf(db, company).Select("records").ColumnExpr("CAST(id AS TEXT) AS id, customer_id, payload").
		Where("kind = ?", section).Where("id IN (?)", bun.List(validIDs(ids))).
		Where("deleted_at IS NULL").Scan(ctx, &rows)
	if err := translate(err); err != nil {
		return nil, err
	}
	for _, r := range rows {
		var attrs map[string]any
		if err := json.Unmarshal(r.Payload, &attrs); err != nil {
			return nil, err
		}
		found[r.ID] = domain.RefTarget{Customer: r.toPort().Customer, Attrs: attrs}
	}
	return found, nil
}

// validIDs keeps the ids that can name an object at all (a malformed one
// would be a type error on PostgreSQL's uuid column, not a miss).
func validIDs(ids []string) []string {
	out := []string{}
	for _, id := range ids {
		if domain.ValidObjectID(id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return []string{uuid.Nil.String()}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func (s *RecordStore) Existing(ctx context.Context, company domain.CompanyID, kind *domain.Kind, ids []string) (map[string]ports.StoredObject, error) {
	t := tableOf(kind)
	out := map[string]ports.StoredObject{}
	args := t.idArgs(ids)
	if len(args) == 0 {
		return out, nil
	}
	db := conn(ctx, s.db)
	var rows []objectRow
	var err error
	if db.Dialect().Name() == dialect.PG {
		err = existingByKey(db, company, t, args).Scan(ctx, &rows)
	} else {
		err = ofKind(t, tenantOf(db, company).SelectByKey(t.name)).ColumnExpr(t.columns).Where(t.name+".id IN (?)", bun.List(args)).Scan(ctx, &rows)
	}
	if err != nil {
		return nil, translate(err)
	}
	for _, r := range rows {
		out[r.ID] = r.toPort()
	}
	return out, nil
}

// existingByKey reads the company's objects of t among keys (an array) on PostgreSQL,
// one probe of the primary key per key. An import asks this for every batch
// inside its one transaction, where the table grows far past its statistics.
// Asked as "company as text, kind and id IN (…)" once the records' key
// became (company_id, id), the planner scanned the whole table for every
// batch (quadratic: the import fell by half, about 11,500 lines/s to 6,500
// at 200,000 notes); with the company compared plainly it may still take an
// index led by the company and the kind, the feed's. Each key's lookup is a
// subquery of its own that names the whole primary key — (company_id, id)
// for records, id for customers (the company then compared as text, as
// SelectByKey does) — and its LIMIT keeps the planner from turning the
// probes back into one scan and a hash join.
//
// args are the keys as t.idArg makes them: uuid strings for records, int64
// numbers for customers.
func existingByKey(db bun.IDB, company domain.CompanyID, t table, args []any) *bun.RawQuery {
	if t.kind == "" {
		numbers := make([]int64, len(args))
		for i, a := range args {
			numbers[i], _ = a.(int64)
		}
		// The customers' key is id alone: compared as text, the company
		// cannot lead the planner to the feed's (company_id, change, id).
		return tenantOf(db, company).Raw(keyProbes(t, "bigint[]", "CAST("+t.name+".company_id AS TEXT) = CAST(?0 AS TEXT)"), pgdialect.Array(numbers))
	}
	ids := make([]string, len(args))
	for i, a := range args {
		ids[i], _ = a.(string)
	}
	// The records' key leads with the company.
	q := keyProbes(t, "uuid[]", t.name+".company_id = ?0") + " WHERE " + t.name + ".kind = ?2"
	return tenantOf(db, company).Raw(q, pgdialect.Array(ids), t.kind)
}

// keyProbes is the statement of existingByKey: the keys ?1 (an array of
// keyType) unnested, each probing t by id and ours, the company's condition.
func keyProbes(t table, keyType, ours string) string {
	probe := "SELECT * FROM " + t.name + " WHERE " + t.name + ".id = k.key AND " + ours + " LIMIT 1"
	return "SELECT " + t.columns + " FROM unnest(CAST(?1 AS " + keyType + ")) AS k(key) CROSS JOIN LATERAL (" + probe + ") AS " + t.name
}

// recordRow and customerRow are rows as Put writes them, many to a statement.
type recordRow struct {
	bun.BaseModel `bun:"table:records"`

	ID         uuid.UUID  `bun:"id,pk"`
	CompanyID  uuid.UUID  `bun:"company_id"`
	Kind       string     `bun:"kind"`
	CustomerID *int64     `bun:"customer_id"`
	Payload    string     `bun:"payload"`
	Version    int64      `bun:"version"`
	Change     int64      `bun:"change"`
	CreatedAt  time.Time  `bun:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at"`
	DeletedAt  *time.Time `bun:"deleted_at"`
}

type customerRow struct {
	bun.BaseModel `bun:"table:customers"`

	ID        int64     `bun:"id,pk"`
	CompanyID uuid.UUID `bun:"company_id"`
	Payload   string    `bun:"payload"`
	SVNR      *string   `bun:"svnr"`
	// The patient search's index (patient_index.go).
	SearchFamily  string     `bun:"search_family"`
	SearchGiven   string     `bun:"search_given"`
	BirthDate     *string    `bun:"birth_date"`
	KVNR          *string    `bun:"kvnr"`
	Phone         *string    `bun:"phone"`
	Email         *string    `bun:"email"`
	SearchVersion int        `bun:"search_version"`
	SearchWords   string     `bun:"search_words"` // PostgreSQL's tsvector; SQLite keeps customer_words
	Version       int64      `bun:"version"`
	Change        int64      `bun:"change"`
	CreatedAt     time.Time  `bun:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
	DeletedAt     *time.Time `bun:"deleted_at"`
}

func (s *RecordStore) Put(ctx context.Context, company domain.CompanyID, kind *domain.Kind, objs []ports.StoredObject, existing map[string]ports.StoredObject, at time.Time) error {
	if len(objs) == 0 {
		return nil
	}
	db := conn(ctx, s.db)
	change, err := nextChange(ctx, db)
	if err != nil {
		return err
	}
	at = at.UTC()
	var fresh, replaced []ports.StoredObject
	for _, o := range objs {
		if _, ok := existing[o.ID]; ok {
			replaced = append(replaced, o)
		} else {
			fresh = append(fresh, o)
		}
	}
	if err := s.replaceAll(ctx, db, company, kind, replaced, change, at); err != nil {
		return err
	}
	if len(fresh) == 0 {
		return nil
	}
	if tableOf(kind).kind == "" { // the customers table
		pg := db.Dialect().Name() == dialect.PG
		rows := make([]customerRow, len(fresh))
		var words []indexed // SQLite's, for customer_words; PostgreSQL's go in the rows
		tag := wordTag(company)
		var top int64
		for i, o := range fresh {
			id, _ := strconv.ParseInt(o.ID, 10, 64)
			top = max(top, id)
			x := domain.PatientIndexOf(o.Payload)
			rows[i] = customerRow{ID: id, CompanyID: uuid.UUID(company), Payload: string(o.Payload), SVNR: x.SVNR,
				Version: 1, Change: change, CreatedAt: at, UpdatedAt: at,
				SearchFamily: x.Family, SearchGiven: x.Given, BirthDate: x.BirthDate, KVNR: x.KVNR, Phone: x.Phone, Email: x.Email,
				SearchVersion: indexVersion}
			if pg {
				rows[i].SearchWords = lexemes(tag, x.Words)
			} else {
				words = append(words, indexed{id, x})
			}
		}
		insert := db.NewInsert().Model(&rows)
		if !pg {
			insert = insert.ExcludeColumn("search_words")
		}
		if _, err := insert.Exec(ctx); err != nil {
			return translate(err)
		}
		if err := writeWords(ctx, db, company, words, true); err != nil {
			return err
		}
		if pg {
			if err := keepSequencePast(ctx, db, top); err != nil {
				return err
			}
		}
		return s.writtenAll(ctx, db, company, kind, fresh)
	}
	rows := make([]recordRow, len(fresh))
	for i, o := range fresh {
		var customer *int64
		if o.Customer != nil {
			customer = ptr(int64(*o.Customer))
		}
		rows[i] = recordRow{ID: uuid.MustParse(o.ID), CompanyID: uuid.UUID(company), Kind: kind.Slug, CustomerID: customer,
			Payload: string(o.Payload), Version: 1, Change: change, CreatedAt: at, UpdatedAt: at}
	}
	if _, err = db.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return translate(err)
	}
	return s.writtenAll(ctx, db, company, kind, fresh)
}

// writtenAll runs the kind's hooks for a batch of objects just inserted: a
// hook that takes a batch once, any other once per object.
func (s *RecordStore) writtenAll(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, objs []ports.StoredObject) error {
	return s.eachHook(kind, func(h Hook) error {
		if b, ok := h.(batchHook); ok {
			return b.InsertedAll(ctx, db, company, kind, objs)
		}
		for _, o := range objs {
			if err := h.Written(ctx, db, company, kind, o.ID, o.Payload); err != nil {
				return err
			}
		}
		return nil
	})
}

// Analyze runs PostgreSQL's ANALYZE on the kinds' tables: right after a
// bulk write their statistics still describe the table before it, and the
// planner may then read an object by id through the feed's index (all of
// the company's objects of the kind) instead of the primary key. SQLite's
// planner needs none: a no-op there.
func (s *RecordStore) Analyze(ctx context.Context, kinds ...*domain.Kind) error {
	db := conn(ctx, s.db)
	if db.Dialect().Name() != dialect.PG {
		return nil
	}
	var tables []string
	for _, k := range kinds {
		if t := tableOf(k).name; !slices.Contains(tables, t) {
			tables = append(tables, t)
		}
	}
	for _, t := range tables {
		if _, err := acrossCompanies(db, "the planner's statistics are one for all companies").ExecContext(ctx, "ANALYZE "+t); err != nil {
			return translate(err)
		}
	}
	return nil
}

// replaceAll writes new payloads over objects of the company, live or
// deleted, and makes them live: the records of a batch in one statement
// (an UPDATE joined to their values: one statement per object made an
// import of changes four times slower than one of new objects), customers
// one by one with their search index.
func (s *RecordStore) replaceAll(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, objs []ports.StoredObject, change int64, at time.Time) error {
	t := tableOf(kind)
	if t.kind == "" || len(objs) < 2 {
		for _, o := range objs {
			if err := s.replace(ctx, db, company, kind, o, change, at); err != nil {
				return err
			}
		}
		return nil
	}
	res, err := replaceBatch(db, company, kind, objs, change, at).Exec(ctx)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return translate(err)
	} else if n != int64(len(objs)) {
		return fmt.Errorf("replace %d %s: %d rows changed", len(objs), kind.Slug, n)
	}
	for _, o := range objs {
		if err := s.written(ctx, db, company, kind, o.ID, o.Payload); err != nil {
			return err
		}
	}
	return nil
}

// replaceBatch is the UPDATE of replaceAll: the objects' values a table
// joined to the company's records by id.
func replaceBatch(db bun.IDB, company domain.CompanyID, kind *domain.Kind, objs []ports.StoredObject, change int64, at time.Time) *bun.UpdateQuery {
	cast := func(expr, typ string) string {
		if db.Dialect().Name() == dialect.PG {
			return expr + "::" + typ
		}
		return expr
	}
	var values strings.Builder
	args := make([]any, 0, 3*len(objs))
	for i, o := range objs {
		if i > 0 {
			values.WriteString(", ")
		}
		values.WriteString("(?, ?, ?)")
		var customer *int64
		if o.Customer != nil {
			customer = ptr(int64(*o.Customer))
		}
		args = append(args, uuid.MustParse(o.ID).String(), string(o.Payload), customer)
	}
	return tenantOf(db, company).Update("records").TableExpr("(SELECT column1 AS id, column2 AS payload, column3 AS customer_id FROM (VALUES "+values.String()+") AS x) AS v", args...).
		Set("payload = "+cast("v.payload", "json")).Set("change = ?", change).Set("version = records.version + 1").
		Set("updated_at = ?", at).Set("deleted_at = NULL").Set("customer_id = "+cast("v.customer_id", "bigint")).
		Where("records.kind = ?", kind.Slug).Where("records.id = " + cast("v.id", "uuid"))
}

// replace writes a new payload over an object of the company, live or deleted, and makes it live.
func (s *RecordStore) replace(ctx context.Context, db bun.IDB, company domain.CompanyID, kind *domain.Kind, o ports.StoredObject, change int64, at time.Time) error {
	t := tableOf(kind)
	arg, _ := t.idArg(o.ID)
	q := ofKind(t, tenantOf(db, company).Update(t.name)).Set("payload = ?", string(o.Payload)).Set("change = ?", change).
		Set("version = version + 1").Set("updated_at = ?", at).Set("deleted_at = NULL").Where("id = ?", arg)
	var x domain.PatientIndex
	if t.kind == "" {
		x = domain.PatientIndexOf(o.Payload)
		q = setIndex(q, company, x)
	} else {
		var customer *int64
		if o.Customer != nil {
			customer = ptr(int64(*o.Customer))
		}
		q = q.Set("customer_id = ?", customer)
	}
	if err := affectedOne(q.Exec(ctx)); err != nil {
		return err
	}
	if t.kind == "" {
		if err := writeWords(ctx, db, company, []indexed{{arg.(int64), x}}, false); err != nil {
			return err
		}
	}
	return s.written(ctx, db, company, kind, o.ID, o.Payload)
}

// jsonField is a top-level payload field as text; name is ours, never a client's.
func jsonField(db bun.IDB, name string) string {
	if db.Dialect().Name() == dialect.PG {
		return "payload->>'" + name + "'"
	}
	return "json_extract(payload, '$." + name + "')"
}

func (s *RecordStore) Values(ctx context.Context, company domain.CompanyID, kind *domain.Kind, match, value, field string) ([]string, error) {
	db := conn(ctx, s.db)
	var out []string
	err := tenantOf(db, company).Select("records").ColumnExpr(jsonField(db, field)).
		Where("kind = ?", kind.Slug).Where("deleted_at IS NULL").Where(jsonField(db, match)+" = ?", value).Scan(ctx, &out)
	return out, translate(err)
}

func (s *RecordStore) All(ctx context.Context, company domain.CompanyID, kinds ...*domain.Kind) ([][]ports.StoredObject, error) {
	slugs := make([]string, len(kinds))
	for i, k := range kinds {
		if tableOf(k).kind == "" {
			return nil, errors.New("All reads company-wide kinds of the records table")
		}
		slugs[i] = k.Slug
	}
	var rows []struct {
		objectRow
		Kind string `bun:"kind"`
	}
	err := tenantOf(conn(ctx, s.db), company).Select("records").ColumnExpr(tableOf(kinds[0]).columns+", kind").
		Where("kind IN (?)", bun.List(slugs)).Where("deleted_at IS NULL").
		OrderExpr("id").Scan(ctx, &rows)
	if err != nil {
		return nil, translate(err)
	}
	out := make([][]ports.StoredObject, len(kinds))
	for _, r := range rows {
		i := slices.Index(slugs, r.Kind)
		out[i] = append(out[i], r.toPort())
	}
	return out, nil
}
