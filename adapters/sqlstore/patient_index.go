package sqlstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/praxis-health/praxis/domain"
)

// The patient search's index (docs/contract.md §15, "Finding a patient"):
// columns beside each customer's payload and the words it is found by,
// written in the transaction of every write of a customer (Insert, Update,
// Put) and, for customers written before the index existed (or under older
// rules or layout), by IndexCustomers. A search is conditions on them
// (searchWhere).
//
// The words: on PostgreSQL a tsvector in the customer's own row
// (search_words), read through a GIN index of its lexemes. Each lexeme is
// "tag:field:word", the tag the company's (wordTag): the index's keys lead
// with the company, so a search reads the company's matches alone. With
// the company as a column of the index beside the lexemes (btree_gin, as
// before 2026-12-02) every search intersected the company's whole posting
// list: 0.75 ms for a last name among 100,000 patients against 0.06 with
// the tag. A prefix is tsquery's 'tag:field:word':*. A table of words
// beside the customers cost an import more than the customers themselves
// (a row, a key and the tenancy's foreign-key check per word: 4,100
// patients/s against 10,000 without it). On SQLite they are the rows of
// customer_words, a range of its key.

// indexVersion is what a customer's search_version says once it is indexed:
// the rules' version (domain.PatientIndexVersion) plus this store's layout
// of the index — one more since the words moved into the customer's row on
// PostgreSQL (migration 20261130000100), one more since they carry the
// company's tag (20261202000100). A row below it is indexed again by the
// backfill; a migration's partial index names the number.
const indexVersion = domain.PatientIndexVersion + 2

// indexColumns are the index's columns of a customer's row, by name.
func indexColumns(company domain.CompanyID, x domain.PatientIndex, pg bool) map[string]any {
	row := map[string]any{
		"search_family": x.Family, "search_given": x.Given, "birth_date": x.BirthDate, "kvnr": x.KVNR,
		"phone": x.Phone, "email": x.Email, "search_version": indexVersion,
	}
	if pg {
		row["search_words"] = lexemes(wordTag(company), x.Words)
	}
	return row
}

// setIndex sets a customer's index columns (and the svnr column behind its
// unique index) in the update that writes its payload, in a fixed order.
func setIndex(q *bun.UpdateQuery, company domain.CompanyID, x domain.PatientIndex) *bun.UpdateQuery {
	q = q.Set("svnr = ?", x.SVNR).Set("search_family = ?", x.Family).Set("search_given = ?", x.Given).
		Set("birth_date = ?", x.BirthDate).Set("kvnr = ?", x.KVNR).Set("phone = ?", x.Phone).Set("email = ?", x.Email).
		Set("search_version = ?", indexVersion)
	if q.Dialect().Name() == dialect.PG {
		q = q.Set("search_words = CAST(? AS tsvector)", lexemes(wordTag(company), x.Words))
	}
	return q
}

// lexemes is the text of a customer's search_words: each word a quoted
// lexeme "tag:field:word" (PostgreSQL's tsvector input; it sorts them and
// drops repeats). The words are folded letters and digits, quoted anyway;
// tag is the company's (wordTag), hashed once by a caller writing many.
func lexemes(tag string, words []domain.IndexWord) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(lexeme(tag, w.Field, w.Word))
	}
	return b.String()
}

// lexeme is one word of a field as a quoted lexeme of tsvector and tsquery.
func lexeme(tag string, f domain.SearchField, w string) string {
	return "'" + quoteLexeme.Replace(tag+":"+string(f)+":"+w) + "'"
}

// wordTag is the company's tag in its customers' lexemes: 48 bits of a
// hash of its id, enough that a search's index scan reads no other
// company's words in practice. It only narrows the scan: the search's
// company_id condition decides, so two companies sharing a tag would cost
// a few rows read and dropped, never an answer.
func wordTag(company domain.CompanyID) string {
	sum := sha256.Sum256(company[:])
	return hex.EncodeToString(sum[:6])
}

var quoteLexeme = strings.NewReplacer(`'`, `''`, `\`, `\\`)

// wordRow is one row of customer_words (SQLite).
type wordRow struct {
	bun.BaseModel `bun:"table:customer_words"`

	CompanyID  uuid.UUID `bun:"company_id"`
	Field      string    `bun:"field"`
	Word       string    `bun:"word"`
	CustomerID int64     `bun:"customer_id"`
}

// indexed is a customer's number and its index.
type indexed struct {
	id int64
	x  domain.PatientIndex
}

// writeWords writes the words of the customers cs on SQLite: their old
// words are replaced, unless fresh (customers just inserted, which have
// none yet). On PostgreSQL they were written with the row (search_words).
func writeWords(ctx context.Context, db bun.IDB, company domain.CompanyID, cs []indexed, fresh bool) error {
	if len(cs) == 0 || db.Dialect().Name() == dialect.PG {
		return nil
	}
	if !fresh {
		ids := make([]int64, len(cs))
		for i, c := range cs {
			ids[i] = c.id
		}
		if _, err := tenantOf(db, company).Delete("customer_words").Where("customer_id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
			return translate(err)
		}
	}
	var rows []wordRow
	for _, c := range cs {
		for _, w := range c.x.Words {
			rows = append(rows, wordRow{CompanyID: uuid.UUID(company), Field: string(w.Field), Word: w.Word, CustomerID: c.id})
		}
	}
	for len(rows) > 0 { // SQLite takes at most 32,766 values a statement: four a row
		n := min(len(rows), 5000)
		chunk := rows[:n]
		if _, err := db.NewInsert().Model(&chunk).Exec(ctx); err != nil {
			return translate(err)
		}
		rows = rows[n:]
	}
	return nil
}

// indexCustomer writes the index of one customer the backfill reads: its
// columns and its words.
func indexCustomer(ctx context.Context, db bun.IDB, company domain.CompanyID, id int64, payload []byte) error {
	x := domain.PatientIndexOf(payload)
	if _, err := setIndex(tenantOf(db, company).Update("customers").Where("id = ?", id), company, x).Exec(ctx); err != nil {
		return translate(err)
	}
	return writeWords(ctx, db, company, []indexed{{id, x}}, false)
}

// maxWordUpper ends a prefix's range of customer_words (SQLite): no folded
// word has a character past it (the words compare bytewise, BINARY).
const maxWordUpper = "\U0010FFFF"

// searchWhere narrows a select of the customers table to the customers that
// meet every condition.
func searchWhere(q *bun.SelectQuery, company domain.CompanyID, conds []domain.Condition) *bun.SelectQuery {
	for _, c := range conds {
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return condition(q, company, c)
		})
	}
	return q
}

// wordsOf is the customers among whose words of field one starts with
// (or, exact, is) each of words. On PostgreSQL one tsquery of the row's
// search_words; on SQLite a range of customer_words' key per word, whose
// company is a value, not the outer row's: an uncorrelated subquery the
// planner reads once (a correlated one is run for every customer).
func wordsOf(pg bool, company domain.CompanyID, field domain.SearchField, words []string, exact bool) (string, []any) {
	fields := []domain.SearchField{field}
	if field == domain.SearchName {
		fields = []domain.SearchField{domain.SearchFamily, domain.SearchGiven}
	}
	if pg {
		tag := wordTag(company)
		terms := make([]string, len(words))
		for i, w := range words {
			alt := make([]string, len(fields))
			for j, f := range fields {
				alt[j] = lexeme(tag, f, w)
				if !exact {
					alt[j] += ":*"
				}
			}
			terms[i] = "(" + strings.Join(alt, " | ") + ")"
		}
		return "customers.search_words @@ CAST(? AS tsquery)", []any{strings.Join(terms, " & ")}
	}
	names := make([]any, len(fields))
	for i, f := range fields {
		names[i] = string(f)
	}
	var text []string
	var args []any
	for _, w := range words {
		in := "customers.id IN (SELECT w.customer_id FROM customer_words AS w WHERE w.company_id = ? AND w.field IN (?)"
		if exact {
			text, args = append(text, in+" AND w.word = ?)"), append(args, uuid.UUID(company), bun.List(names), w)
		} else {
			text, args = append(text, in+" AND w.word >= ? AND w.word < ?)"), append(args, uuid.UUID(company), bun.List(names), w, w+maxWordUpper)
		}
	}
	return strings.Join(text, " AND "), args
}

// column is the customers' column a field is kept in.
var column = map[domain.SearchField]string{
	domain.SearchBirthDate: "customers.birth_date", domain.SearchSVNR: "customers.svnr", domain.SearchKVNR: "customers.kvnr",
	domain.SearchPhone: "customers.phone", domain.SearchEmail: "customers.email", domain.SearchID: "customers.id",
}

// condition is one condition: its values as alternatives (OR).
func condition(q *bun.SelectQuery, company domain.CompanyID, c domain.Condition) *bun.SelectQuery {
	pg := q.Dialect().Name() == dialect.PG
	switch {
	case c.Op == domain.OpRange:
		col := column[c.Field]
		for _, r := range c.Ranges {
			text, args := dateRange(col, r)
			q = q.WhereOr(text, args...)
		}
		return q
	case c.Field == domain.SearchPhonetic || c.Op == domain.OpPrefix:
		// A value's words all hold: each starts a word of the name (or is
		// the code of one, phonetic); the values are alternatives.
		exact := c.Field == domain.SearchPhonetic
		for _, v := range c.Values {
			text, args := wordsOf(pg, company, c.Field, strings.Fields(v), exact)
			q = q.WhereOr("("+text+")", args...)
		}
		return q
	case c.Op == domain.OpContains || c.Op == domain.OpExact:
		cols := nameColumns(c.Field, c.Op == domain.OpExact, pg)
		for _, v := range c.Values {
			for _, col := range cols {
				if c.Op == domain.OpExact {
					q = q.WhereOr(col+" = ?", v)
				} else {
					q = q.WhereOr(col+" LIKE ? ESCAPE '\\'", "%"+likeEscape(v)+"%")
				}
			}
		}
		return q
	case c.Field == domain.SearchSex:
		q = q.Where(jsonField(q.DB(), "sex")+" IN (?)", bun.List(c.Values))
		if slices.Contains(c.Values, "unknown") { // FHIR's unknown: also where none is held
			q = q.WhereOr(jsonField(q.DB(), "sex") + " IS NULL")
		}
		return q
	case c.Field == domain.SearchIdentifier:
		q = q.Where("customers.svnr IN (?)", bun.List(c.Values)).WhereOr("customers.kvnr IN (?)", bun.List(c.Values))
		if ids := numbers(c.Values); len(ids) > 0 {
			q = q.WhereOr("customers.id IN (?)", bun.List(ids))
		}
		return q
	case c.Field == domain.SearchID:
		ids := numbers(c.Values)
		if len(ids) == 0 {
			return q.Where("1 = 0")
		}
		return q.Where("customers.id IN (?)", bun.List(ids))
	}
	return q.Where(column[c.Field]+" IN (?)", bun.List(c.Values))
}

// numbers are the values that are customer numbers.
func numbers(values []string) []int64 {
	var out []int64
	for _, v := range values {
		if n, ok := domain.ParseCustomerPathID(v); ok {
			out = append(out, int64(n))
		}
	}
	return out
}

// nameColumns are the columns a name condition reads: the folded ones for
// a contains-search, the payload's own for an exact one.
func nameColumns(f domain.SearchField, exact bool, pg bool) []string {
	folded := map[domain.SearchField][]string{
		domain.SearchFamily: {"customers.search_family"}, domain.SearchGiven: {"customers.search_given"},
		domain.SearchName: {"customers.search_family", "customers.search_given"},
	}[f]
	if !exact {
		return folded
	}
	field := func(name string) string {
		if pg {
			return "customers.payload->>'" + name + "'"
		}
		return "json_extract(customers.payload, '$." + name + "')"
	}
	return map[domain.SearchField][]string{
		domain.SearchFamily: {field("last_name")}, domain.SearchGiven: {field("first_name")},
		domain.SearchName: {field("last_name"), field("first_name")},
	}[f]
}

// dateRange is a date column's test against a range of dates [From, To)
// by FHIR's date prefixes at day precision.
func dateRange(col string, r domain.DateRange) (string, []any) {
	return rangeTest(col, r.Prefix, r.From, r.To)
}

// rangeTest is a column's test against a search value's range [from, to)
// by FHIR's date prefixes, the column's value a point (a day, an instant:
// domain.InstantRange).
func rangeTest(col, prefix string, from, to any) (string, []any) {
	switch prefix {
	case "ne":
		return "(" + col + " < ? OR " + col + " >= ?)", []any{from, to}
	case "gt":
		return col + " >= ?", []any{to}
	case "ge":
		return col + " >= ?", []any{from}
	case "lt":
		return col + " < ?", []any{from}
	case "le":
		return col + " < ?", []any{to}
	}
	return "(" + col + " >= ? AND " + col + " < ?)", []any{from, to}
}

// likeEscape escapes LIKE's wildcards in a folded value.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// searchReady is domain.ErrSearchIndexing while some of the company's
// customers are not indexed by the rules of this build.
func (s *RecordStore) searchReady(ctx context.Context, company domain.CompanyID) error {
	var indexing bool
	db := conn(ctx, s.db)
	if err := tenantOf(db, company).Raw("SELECT EXISTS (?1)", unindexed(db, company)).Scan(ctx, &indexing); err != nil {
		return translate(err)
	}
	if indexing {
		return domain.ErrSearchIndexing
	}
	return nil
}

// unindexed selects one of the company's customers not indexed by the rules
// of this build, if there is one (the partial index customers_unindexed_idx);
// inside a select of customers its table shadows the outer one, so it is
// read once, not once a row.
func unindexed(db bun.IDB, company domain.CompanyID) *bun.SelectQuery {
	return tenantOf(db, company).Select("customers").ColumnExpr("1").Where("customers.search_version < ?", indexVersion).Limit(1)
}

// count is how many customers lq's filters keep (its cursor aside): counted,
// or with domain.TotalEstimate on PostgreSQL the planner's estimate.
func (s *RecordStore) count(ctx context.Context, company domain.CompanyID, lq domain.ListQuery) (int64, error) {
	db := conn(ctx, s.db)
	tn := tenantOf(db, company)
	q := searchWhere(tn.Select("customers"), company, lq.Search)
	if !lq.IncludeDeleted {
		q = q.Where("customers.deleted_at IS NULL")
	}
	if lq.UpdatedSince != nil {
		q = q.Where("customers.updated_at >= ?", lq.UpdatedSince.UTC())
	}
	if len(lq.Where) > 0 {
		var err error
		if q, err = recordWhere(q, tn, "customers", lq.Where); err != nil {
			return 0, err
		}
	}
	if lq.Total == domain.TotalEstimate && db.Dialect().Name() == dialect.PG {
		var plan []struct {
			Plan struct {
				Rows float64 `json:"Plan Rows"`
			} `json:"Plan"`
		}
		var text string
		if err := tn.Raw("EXPLAIN (FORMAT JSON) ?1", q.ColumnExpr("1")).Scan(ctx, &text); err != nil {
			return 0, translate(err)
		}
		if err := json.Unmarshal([]byte(text), &plan); err != nil || len(plan) == 0 {
			return 0, fmt.Errorf("reading the planner's estimate: %w", err)
		}
		return int64(plan[0].Plan.Rows), nil
	}
	n, err := q.Count(ctx)
	return int64(n), translate(err)
}

// IndexCustomers indexes up to batch customers written before the patient
// search's index existed (or by older rules), across companies, and tells
// how many it indexed: 0 when none is left. Each batch is one transaction,
// so a backfill that is stopped resumes where it was.
func (s *RecordStore) IndexCustomers(ctx context.Context, batch int64) (int, error) {
	var rows []struct {
		ID        int64     `bun:"id"`
		CompanyID uuid.UUID `bun:"company_id"`
		Payload   []byte    `bun:"payload"`
	}
	done := 0
	err := runInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		q := acrossCompanies(tx, "the search index's backfill reads every company's unindexed customers").NewSelect().
			TableExpr("customers").Column("id", "company_id", "payload").
			Where("search_version < ?", indexVersion).OrderExpr("company_id, id").Limit(batch)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE SKIP LOCKED")
		}
		if err := q.Scan(ctx, &rows); err != nil {
			return translate(err)
		}
		for _, r := range rows {
			if err := indexCustomer(ctx, tx, domain.CompanyID(r.CompanyID), r.ID, r.Payload); err != nil {
				return err
			}
		}
		done = len(rows)
		return nil
	})
	return done, err
}
