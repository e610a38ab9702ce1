package fhir

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// reader is how the objects of a type's section are read, as items (the
// section's own typed values), with the token's grant: the records' port
// for the generic sections, the files' port for files. The door's handlers
// and the export read through it and nothing else.
type reader interface {
	// get answers one object.
	get(ctx context.Context, grant domain.Grant, id string) (item, error)
	// batch answers the objects among ids, those not found left out.
	batch(ctx context.Context, grant domain.Grant, ids []string) ([]item, error)
	// list answers a page of the section's feed.
	list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (page, error)
	// validID tells whether id has the form of the section's ids.
	validID(id string) bool
}

// page is a page of a feed: its objects (not decoded yet: decodeAll),
// where it ended, whether more follow, and the total when it was asked for.
type page struct {
	items   []item
	next    string
	hasMore bool
	total   *int64
}

// readers are the driving ports the views read from.
type readers struct {
	records ports.Records
	files   ports.Files
}

// feed is a feed a type reads after its section's.
type feed int

const (
	gdtResultFiles feed = iota // the GDT result files (DiagnosticReport)
	labResultRows              // the lab results' rows (Observation)
	gdtResultTests             // the GDT results' tests (Observation)
)

// of is the reader of rt's section; a type that reads more feeds than its
// section's reads a chain of them (DiagnosticReport: the lab results, then
// the GDT result files; Observation: the measurements, then the lab
// results' rows, then the GDT results' tests).
func (r readers) of(rt *resourceType) reader {
	if rt.section == "files" {
		return fileReader{files: r.files}
	}
	own := recordReader{r.records, domain.KindOf(rt.section)}
	if len(rt.then) == 0 {
		return own
	}
	c := chain{{read: own}}
	for _, f := range rt.then {
		switch f {
		case gdtResultFiles:
			c = append(c, link{mark: "gdt:", read: fileReader{r.files, true}, may: readsScope("files")})
		case labResultRows:
			c = append(c, link{mark: "lab:", read: rowsReader{recordReader{r.records, domain.KindOf("lab-results")}, labRowLetter}, may: readsScope("lab-results")})
		case gdtResultTests:
			c = append(c, link{mark: "gdt:", read: rowsReader{fileReader{r.files, true}, gdtTestLetter}, may: readsScope("files")})
		}
	}
	return c
}

type recordReader struct {
	records ports.Records
	kind    *domain.Kind
}

func (r recordReader) get(ctx context.Context, grant domain.Grant, id string) (item, error) {
	o, err := r.records.Get(ctx, grant, r.kind, id)
	if err != nil {
		return item{}, err
	}
	return itemOf(r.kind, o)
}

func (r recordReader) batch(ctx context.Context, grant domain.Grant, ids []string) ([]item, error) {
	b, err := r.records.Batch(ctx, grant, r.kind, domain.BatchQuery{IDs: ids})
	if err != nil {
		return nil, err
	}
	return itemsOf(r.kind, b.Items)
}

func (r recordReader) list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (page, error) {
	p, err := r.records.List(ctx, grant, r.kind, q)
	if err != nil {
		return page{}, err
	}
	return page{items: lazyItems(r.kind, p.Items), next: p.Next.Encode(), hasMore: p.HasMore, total: p.Total}, nil
}

func (r recordReader) validID(id string) bool { return nativeID(r.kind, id) }

// fileReader reads the files section, each file as its native view; with
// results, only the GDT result files (the files that hold an examination).
type fileReader struct {
	files   ports.Files
	results bool
}

// reads tells whether the reader reads f.
func (r fileReader) reads(f domain.File) bool { return !r.results || f.GDT != nil }

// kept are the files among files the reader reads, as items.
func (r fileReader) kept(files []domain.File) []item {
	out := make([]item, 0, len(files))
	for _, f := range files {
		if r.reads(f) {
			out = append(out, fileItem(f))
		}
	}
	return out
}

func (r fileReader) get(ctx context.Context, grant domain.Grant, id string) (item, error) {
	f, err := r.files.Get(ctx, grant, id)
	if err == nil && !r.reads(f) {
		err = domain.ErrNotFound
	}
	if err != nil {
		return item{}, err
	}
	return fileItem(f), nil
}

func (r fileReader) batch(ctx context.Context, grant domain.Grant, ids []string) ([]item, error) {
	files, _, err := r.files.Batch(ctx, grant, ids)
	if err != nil {
		return nil, err
	}
	return r.kept(files), nil
}

func (r fileReader) list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (page, error) {
	if r.results { // the GDT results alone, chosen by the query: every page full
		q.Where = append(asResults(q.Where), domain.Condition{Field: domain.SearchExamination, Op: domain.OpPresent})
	}
	p, err := r.files.List(ctx, grant, q)
	if err != nil {
		return page{}, err
	}
	return page{items: r.kept(p.Files), next: p.Next.Encode(), hasMore: p.HasMore}, nil
}

func (fileReader) validID(id string) bool { return domain.ValidObjectID(id) }

// asResults are a DiagnosticReport search's conditions on a lab result as
// they read on a device's GDT result: issued (reported_at) is when the
// file was stored, the status is final. The others stay (the observed
// date is the examination's, a code is no test's).
func asResults(where []domain.Condition) []domain.Condition {
	out := make([]domain.Condition, 0, len(where)+1)
	for _, c := range where {
		switch {
		case c.Field == domain.SearchPayload && c.Path == "reported_at":
			c = domain.Condition{Field: domain.SearchStored, Op: domain.OpInstants, Instants: c.Instants}
		case c.Field == domain.SearchPayload && c.Path == "status":
			if slices.Contains(c.Values, "final") {
				continue
			}
			c = domain.Condition{Field: domain.SearchID, Op: domain.OpEqual} // no status but final: none
		}
		out = append(out, c)
	}
	return out
}

// link is one feed of a chain: its reader, the mark that begins the id of
// a cursor in it ("" for the first), and whether a grant may read it (nil:
// any that may read the type; one that may not sees the other feeds only).
type link struct {
	mark string
	read reader
	may  func(domain.Grant) bool
}

// readsScope: the grant may read the section.
func readsScope(section string) func(domain.Grant) bool {
	return func(g domain.Grant) bool { return g.Scopes.Contains(domain.ReadScope(section)) }
}

func (l link) readable(g domain.Grant) bool { return l.may == nil || l.may(g) }

// chain reads its feeds one after the other, the position in a later one
// marked in the cursor's id, so that a client paging to the end reads all
// of them whole. Each id names an object of one feed only.
type chain []link

// at is the link a cursor is in, and the cursor within it (nil: its start).
func (c chain) at(cursor *domain.Cursor) (int, *domain.Cursor) {
	if cursor == nil {
		return 0, nil
	}
	for i := len(c) - 1; i > 0; i-- {
		if id, ok := strings.CutPrefix(cursor.ID, c[i].mark); ok {
			if id == "" && cursor.Change == 0 {
				return i, nil
			}
			within := *cursor
			within.ID = id
			return i, &within
		}
	}
	return 0, cursor
}

func (c chain) list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (page, error) {
	i, within := c.at(q.After)
	for i < len(c) && !c[i].readable(grant) {
		i, within = i+1, nil
	}
	if i == len(c) { // nothing more the grant may read
		return page{next: q.After.Encode()}, nil
	}
	q.After = within
	p, err := c[i].read.list(ctx, grant, q)
	if err != nil {
		return page{}, err
	}
	if p.hasMore {
		next, err := domain.ParseCursor(p.next)
		if err != nil {
			return page{}, err
		}
		next.ID = c[i].mark + next.ID
		p.next = next.Encode()
		return p, nil
	}
	// This feed is read: the next one the grant may read that holds
	// anything the query keeps follows, from its start. Each is asked for
	// one object first, so that no next link leads past the last match.
	for j := i + 1; j < len(c); j++ {
		if !c[j].readable(grant) {
			continue
		}
		peek := q
		peek.After, peek.Limit, peek.Total = nil, 1, domain.TotalNone
		first, err := c[j].read.list(ctx, grant, peek)
		if err != nil {
			return page{}, err
		}
		if len(first.items) > 0 || first.hasMore {
			p.hasMore, p.next = true, domain.Cursor{ID: c[j].mark}.Encode()
			break
		}
	}
	return p, nil
}

func (c chain) get(ctx context.Context, grant domain.Grant, id string) (item, error) {
	for _, l := range c {
		if l.read.validID(id) && l.readable(grant) {
			it, err := l.read.get(ctx, grant, id)
			if !errors.Is(err, domain.ErrNotFound) {
				return it, err
			}
		}
	}
	return item{}, domain.ErrNotFound
}

func (c chain) batch(ctx context.Context, grant domain.Grant, ids []string) ([]item, error) {
	var out []item
	for _, l := range c {
		if !l.readable(grant) {
			continue
		}
		mine := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !l.read.validID(id) })
		if len(mine) == 0 {
			continue
		}
		items, err := l.read.batch(ctx, grant, mine)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func (c chain) validID(id string) bool {
	return slices.ContainsFunc(c, func(l link) bool { return l.read.validID(id) })
}
