package fhir

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// reader is how the objects of a type's section are read, each as the
// native API answers it (JSON), with the token's grant: the records' port
// for the generic sections, the files' port for files. The door's
// handlers and the export read through it and nothing else.
type reader interface {
	// get answers one object and its version.
	get(ctx context.Context, grant domain.Grant, id string) (ports.Versioned, error)
	// batch answers the objects among ids as a JSON array, those not found left out.
	batch(ctx context.Context, grant domain.Grant, ids []string) ([]byte, error)
	// list answers a page of the section's feed.
	list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (ports.RenderedPage, error)
	// validID tells whether id has the form of the section's ids.
	validID(id string) bool
}

// readers are the driving ports the views read from.
type readers struct {
	records ports.Records
	files   ports.Files
}

// of is the reader of rt's section; a type that also views the GDT
// result files (DiagnosticReport) reads its section's feed, then theirs.
func (r readers) of(rt *resourceType) reader {
	if rt.section == "files" {
		return fileReader{r.files}
	}
	own := recordReader{r.records, domain.KindOf(rt.section)}
	if rt.gdtResults {
		return thenResults{own: own, files: fileReader{r.files}}
	}
	return own
}

type recordReader struct {
	records ports.Records
	kind    *domain.Kind
}

func (r recordReader) get(ctx context.Context, grant domain.Grant, id string) (ports.Versioned, error) {
	return r.records.Get(ctx, grant, r.kind, id)
}

func (r recordReader) batch(ctx context.Context, grant domain.Grant, ids []string) ([]byte, error) {
	b, err := r.records.Batch(ctx, grant, r.kind, domain.BatchQuery{IDs: ids})
	return b.Data, err
}

func (r recordReader) list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (ports.RenderedPage, error) {
	return r.records.List(ctx, grant, r.kind, q)
}

func (r recordReader) validID(id string) bool { return nativeID(r.kind, id) }

// fileReader reads the files section: each file as its native view.
type fileReader struct{ files ports.Files }

func (r fileReader) get(ctx context.Context, grant domain.Grant, id string) (ports.Versioned, error) {
	f, err := r.files.Get(ctx, grant, id)
	if err != nil {
		return ports.Versioned{}, err
	}
	return versioned(f)
}

// versioned is a file as its native view, with its version.
func versioned(f domain.File) (ports.Versioned, error) {
	b, err := json.Marshal(f.View())
	return ports.Versioned{Body: b, Version: f.Version}, err
}

func (r fileReader) batch(ctx context.Context, grant domain.Grant, ids []string) ([]byte, error) {
	files, _, err := r.files.Batch(ctx, grant, ids)
	if err != nil {
		return nil, err
	}
	return viewsOf(files)
}

func (r fileReader) list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (ports.RenderedPage, error) {
	page, err := r.files.List(ctx, grant, q)
	if err != nil {
		return ports.RenderedPage{}, err
	}
	data, err := viewsOf(page.Files)
	return ports.RenderedPage{Data: data, NextCursor: page.Next.Encode(), HasMore: page.HasMore}, err
}

func (fileReader) validID(id string) bool { return domain.ValidObjectID(id) }

func viewsOf(files []domain.File) ([]byte, error) {
	views := make([]domain.FileView, len(files))
	for i, f := range files {
		views[i] = f.View()
	}
	return json.Marshal(views)
}

// thenResults reads a section's feed, then the GDT result files' (files
// with an examination): one feed after the other, the position in the
// second one marked in the cursor's id, so that a client paging to the
// end reads both whole.
type thenResults struct {
	own   recordReader
	files fileReader
}

// resultsMark begins the id of a cursor in the files' feed.
const resultsMark = "gdt:"

// readsResults tells whether the grant may read the result files: one
// that may not sees the section's objects only.
func readsResults(grant domain.Grant) bool { return grant.Scopes.Contains(domain.ReadScope("files")) }

func (r thenResults) get(ctx context.Context, grant domain.Grant, id string) (ports.Versioned, error) {
	v, err := r.own.get(ctx, grant, id)
	if !errors.Is(err, domain.ErrNotFound) || !readsResults(grant) {
		return v, err
	}
	f, err := r.files.files.Get(ctx, grant, id)
	if err != nil {
		return ports.Versioned{}, err
	}
	if f.GDT == nil {
		return ports.Versioned{}, domain.ErrNotFound
	}
	return versioned(f)
}

func (r thenResults) batch(ctx context.Context, grant domain.Grant, ids []string) ([]byte, error) {
	own, err := r.own.batch(ctx, grant, ids)
	if err != nil || !readsResults(grant) {
		return own, err
	}
	files, _, err := r.files.files.Batch(ctx, grant, ids)
	if err != nil {
		return nil, err
	}
	results, err := viewsOf(gdtResults(files))
	if err != nil || len(results) <= 2 {
		return own, err
	}
	if len(own) <= 2 {
		return results, nil
	}
	return append(append(own[:len(own)-1:len(own)-1], ','), results[1:]...), nil
}

func (r thenResults) list(ctx context.Context, grant domain.Grant, q domain.ListQuery) (ports.RenderedPage, error) {
	if q.After == nil || !strings.HasPrefix(q.After.ID, resultsMark) {
		page, err := r.own.list(ctx, grant, q)
		if err != nil || page.HasMore || !readsResults(grant) {
			return page, err
		}
		// The section's feed is read: the files' follows, from its start.
		page.HasMore, page.NextCursor = true, domain.Cursor{ID: resultsMark}.Encode()
		return page, nil
	}
	if !readsResults(grant) {
		return ports.RenderedPage{Data: []byte("[]"), NextCursor: q.After.Encode()}, nil
	}
	at := *q.After
	at.ID = strings.TrimPrefix(at.ID, resultsMark)
	q.After = &at
	if at.ID == "" && at.Change == 0 {
		q.After = nil
	}
	page, err := r.files.files.List(ctx, grant, q)
	if err != nil {
		return ports.RenderedPage{}, err
	}
	data, err := viewsOf(gdtResults(page.Files))
	next := page.Next
	next.ID = resultsMark + next.ID
	return ports.RenderedPage{Data: data, NextCursor: next.Encode(), HasMore: page.HasMore}, err
}

func (r thenResults) validID(id string) bool { return domain.ValidObjectID(id) }

// gdtResults are the files among files that hold an examination.
func gdtResults(files []domain.File) []domain.File {
	return slices.DeleteFunc(files, func(f domain.File) bool { return f.GDT == nil })
}
