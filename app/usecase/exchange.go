package usecase

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// Exchange is the operator's door for data without a write endpoint
// (docs/contract.md §6): NDJSON import and export of every generic section.
type Exchange struct {
	store     ports.RecordStore
	files     ports.FileRepository
	tx        ports.Transactor
	companies ports.CompanyRepository
	leases    ports.CompanyLeases
	audits    *Auditor
	now       func() time.Time
}

// NewExchange wires import and export.
func NewExchange(store ports.RecordStore, files ports.FileRepository, tx ports.Transactor, companies ports.CompanyRepository,
	leases ports.CompanyLeases, audits *Auditor) *Exchange {
	return &Exchange{store: store, files: files, tx: tx, companies: companies, leases: leases, audits: audits, now: time.Now}
}

// operatorAccess starts the audit event of an import or an export: the
// operator's, of every section it names.
func (e *Exchange) operatorAccess(ctx context.Context, action string, sections []string) context.Context {
	ev := audit.New(e.now())
	ev.Agent = audit.Agent{Type: audit.AgentOperator, ID: "praxis admin", Name: "operator"}
	ev.Action, ev.Section = action, strings.Join(sections, ",")
	return audit.With(ctx, audit.NewAccess(ev, nil))
}

// ImportReport counts what an import did, by section.
type ImportReport struct {
	Created   map[string]int `json:"created"`
	Updated   map[string]int `json:"updated"`
	Deleted   map[string]int `json:"deleted"`
	Unchanged int            `json:"unchanged"`
	// SkippedFiles counts files lines: an export lists files as metadata,
	// their bytes travel with the blob store, so the import passes over them.
	SkippedFiles int `json:"skipped_files,omitempty"`
}

// LineError is one refused line of an import file.
type LineError struct {
	Line    int
	Field   string
	Message string
	// Span counts the lines after Line the error is about too (a batch
	// refused as one); 0 for one line's.
	Span int
}

func (e LineError) String() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Message)
}

// ImportErrors refuses a whole import: nothing was written.
type ImportErrors struct {
	Lines []LineError
	// More counts refused lines beyond those listed.
	More int
}

func (e *ImportErrors) Error() string {
	parts := make([]string, len(e.Lines))
	for i, l := range e.Lines {
		parts[i] = l.String()
	}
	if e.More > 0 {
		parts = append(parts, fmt.Sprintf("… and %d more", e.More))
	}
	return strings.Join(parts, "\n")
}

// maxReportedLines bounds the errors kept of one import; the rest are counted.
const maxReportedLines = 1000

// importBatch is how many lines are checked, looked up and written together.
const importBatch = 500

// maxImportLine bounds one line (a request body's limit, and some room).
const maxImportLine = 2 << 20

type importLine struct {
	Section string          `json:"section"`
	ID      json.RawMessage `json:"id"`
	Data    json.RawMessage `json:"data"`
	Deleted bool            `json:"deleted"`
	// Version is what an export says of the object: information only, the
	// import neither checks nor keeps it (the store counts its own).
	Version json.RawMessage `json:"version"`
}

// declared is what the file says of one object, for references between its lines.
type declared struct {
	line     int
	deleted  bool
	customer int64
}

// declKey is an id in 16 bytes (a UUID's, or a customer number's text): a
// million declared objects stay a few dozen MB.
type declKey [16]byte

func keyOf(id string) declKey {
	var k declKey
	if u, err := uuid.Parse(id); err == nil {
		return declKey(u)
	}
	copy(k[:], id) // a customer number: at most 10 digits
	return k
}

// attrSections are the sections whose referenced objects are judged by their fields.
var attrSections = []string{"users", "locations", "services", "illness-notifications", "devices"}

// Import reads src (NDJSON, read twice: it must be seekable) and validates
// every line with the API's rules before anything is written; then applies
// every line in one transaction. A line that changes nothing writes nothing.
// With dryRun the transaction is rolled back: the report says what would happen.
// Imports and restores of one company run one at a time (a company's
// lease); a dry run writes nothing and needs none.
func (e *Exchange) Import(ctx context.Context, company domain.CompanyID, src io.ReadSeeker, dryRun bool) (ImportReport, error) {
	if dryRun {
		return e.importAs(ctx, company, src, dryRun, audit.ActionImport, nil)
	}
	var report ImportReport
	err := e.leased(ctx, company, "import", func(ctx context.Context) (err error) {
		report, err = e.importAs(ctx, company, src, dryRun, audit.ActionImport, nil)
		return err
	})
	return report, err
}

// leased runs fn under the company's lease (an unknown company is
// domain.ErrNotFound, before a lease names it).
func (e *Exchange) leased(ctx context.Context, company domain.CompanyID, purpose string, fn func(ctx context.Context) error) error {
	if _, err := e.companies.Get(ctx, company); err != nil {
		return err
	}
	return underLease(ctx, e.leases, e.now, company, purpose, fn)
}

// importAs is Import, audited as action of sections.
func (e *Exchange) importAs(ctx context.Context, company domain.CompanyID, src io.ReadSeeker, dryRun bool, action string, sections []string) (ImportReport, error) {
	rc, err := ruleContextOf(ctx, e.companies, company, e.now)
	if err != nil {
		return ImportReport{}, err
	}
	v := &validation{store: e.store, company: company, rc: rc, declared: map[string]map[declKey]declared{}, attrs: map[string]map[string]map[string]any{}}
	if _, err := src.Seek(0, io.SeekStart); err != nil { // wherever the caller left it, the whole input counts
		return ImportReport{}, err
	}
	if err := v.declare(src); err != nil {
		return ImportReport{}, err
	}
	var spools spools
	defer spools.remove()
	for i := range spools {
		if spools[i], err = os.CreateTemp("", "praxis-import-"); err != nil {
			return ImportReport{}, err
		}
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return ImportReport{}, err
	}
	if err := v.validate(ctx, src, spools); err != nil {
		return ImportReport{}, err
	}
	if len(v.errs.Lines) > 0 {
		return ImportReport{}, &v.errs
	}
	report := ImportReport{Created: map[string]int{}, Updated: map[string]int{}, Deleted: map[string]int{}, SkippedFiles: v.skippedFiles}
	errDryRun := errors.New("dry run")
	ctx = e.operatorAccess(ctx, action, sections)
	err = e.tx.InTx(ctx, func(ctx context.Context) error {
		// Customers first, then the rest in file order, then what the written
		// objects do to others (a health notification ends its illness
		// notification, an invoice bills its fee services), deletions last:
		// a record's customer exists before the record, whatever the order of lines.
		var effects []domain.Effect
		registers := map[string]int{} // register → a line that wrote one of its receipts
		for _, phase := range []int{spoolCustomers, spoolRest} {
			if err := e.apply(ctx, company, spools[phase], rc, &report, &effects, registers); err != nil {
				return err
			}
		}
		if err := applyEffects(ctx, e.store, company, effects, rc.Now); err != nil {
			return err
		}
		if err := e.apply(ctx, company, spools[spoolDeletions], rc, &report, nil, registers); err != nil {
			return err
		}
		if err := e.checkRegisters(ctx, company, registers); err != nil {
			return err
		}
		if dryRun {
			return errDryRun
		}
		return e.audits.inTx(ctx, company, domain.OutcomeOK)
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return ImportReport{}, err
	}
	if !dryRun {
		e.analyzeAfter(ctx, report)
	}
	return report, nil
}

// analyzeThreshold is how many objects of one section an import writes
// before it refreshes the planner's statistics of their table.
const analyzeThreshold = 10_000

// analyzeAfter refreshes the statistics of the tables a large import
// wrote, so that the next writes and reads of the same objects (another
// import, a restore, the API) are planned by their key. A failure is
// logged, not answered: the import is committed.
func (e *Exchange) analyzeAfter(ctx context.Context, report ImportReport) {
	var kinds []*domain.Kind
	for _, counts := range []map[string]int{report.Created, report.Updated} {
		for section, n := range counts {
			if k := domain.KindOf(section); n >= analyzeThreshold && k != nil {
				kinds = append(kinds, k)
			}
		}
	}
	if len(kinds) == 0 {
		return
	}
	if err := e.store.Analyze(context.WithoutCancel(ctx), kinds...); err != nil {
		slog.WarnContext(ctx, "the import's tables were not analyzed", "error", err)
	}
}

// spools hold the validated lines by the phase that applies them, each in
// file order: the apply reads each once, not the whole input per phase.
type spools [3]*os.File

// remove deletes the spools made so far.
func (s *spools) remove() {
	for _, f := range s {
		if f != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}
}

const (
	spoolCustomers = iota // live customers, applied first
	spoolRest             // every other live object, in file order
	spoolDeletions        // deletions, applied last
)

// phaseOf is the spool a validated line goes to.
func phaseOf(s spooled) int {
	switch {
	case s.Deleted:
		return spoolDeletions
	case s.Section == "customers":
		return spoolCustomers
	}
	return spoolRest
}

// spooled is a validated line as the apply pass reads it back.
type spooled struct {
	Line     int             `json:"l"`
	Section  string          `json:"s"`
	ID       string          `json:"i"`
	Customer *int64          `json:"c,omitempty"`
	Payload  json.RawMessage `json:"p,omitempty"`
	Deleted  bool            `json:"d,omitempty"`
}

type validation struct {
	store    ports.RecordStore
	company  domain.CompanyID
	rc       domain.RuleContext
	declared map[string]map[declKey]declared
	attrs    map[string]map[string]map[string]any
	errs     ImportErrors
	// skippedFiles counts the files lines passed over.
	skippedFiles int
}

func (v *validation) fail(line int, field, message string) {
	if len(v.errs.Lines) >= maxReportedLines {
		v.errs.More++
		return
	}
	v.errs.Lines = append(v.errs.Lines, LineError{Line: line, Field: field, Message: message})
}

// failFields reports a validation error's fields under the line's data;
// false when err is no validation error.
func (v *validation) failFields(line int, err error) bool {
	var ve *domain.ValidationErrors
	if !errors.As(err, &ve) {
		return false
	}
	for _, f := range ve.Errors {
		field := "data"
		if f.Field != "" {
			field += "." + f.Field
		}
		v.fail(line, field, f.Message)
	}
	return true
}

// eachLine calls fn with the number and the text of every non-blank line of r.
func eachLine(r io.Reader, fn func(n int, raw []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxImportLine)
	for n := 1; sc.Scan(); n++ {
		if raw := bytes.TrimSpace(sc.Bytes()); len(raw) > 0 {
			if err := fn(n, raw); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the import file: %w", err)
	}
	return nil
}

// declare is the first pass: which objects the file names, so that its
// lines may reference each other in any order.
func (v *validation) declare(src io.Reader) error {
	return eachLine(src, func(n int, raw []byte) error {
		var l importLine
		if json.Unmarshal(raw, &l) != nil {
			return nil // reported by the second pass
		}
		k := domain.KindOf(l.Section)
		if k == nil {
			return nil
		}
		id, ok := k.IDFromJSON(l.ID)
		if !ok {
			return nil
		}
		if v.declared[l.Section] == nil {
			v.declared[l.Section] = map[declKey]declared{}
		}
		if first, dup := v.declared[l.Section][keyOf(id)]; dup {
			v.fail(n, "id", fmt.Sprintf("is given twice (first on line %d)", first.line))
			return nil
		}
		d := declared{line: n, deleted: l.Deleted}
		if !l.Deleted {
			var fields map[string]any
			if json.Unmarshal(l.Data, &fields) == nil {
				if c, ok := fields["customer_id"].(float64); ok {
					d.customer = int64(c)
				}
				if slices.Contains(attrSections, l.Section) {
					if v.attrs[l.Section] == nil {
						v.attrs[l.Section] = map[string]map[string]any{}
					}
					v.attrs[l.Section][id] = fields
				}
			}
		}
		v.declared[l.Section][keyOf(id)] = d
		return nil
	})
}

type pending struct {
	line int
	obj  domain.Object
}

// validate is the second pass: every line with the API's rules, references
// checked against the file and the database batch by batch; valid lines are
// spooled normalized.
func (v *validation) validate(ctx context.Context, src io.Reader, to spools) error {
	var outs [len(spools{})]*bufio.Writer
	var encs [len(spools{})]*json.Encoder
	for i, f := range to {
		outs[i] = bufio.NewWriter(f)
		encs[i] = json.NewEncoder(outs[i])
	}
	spool := func(s spooled) error { return encs[phaseOf(s)].Encode(s) }
	var batch []pending
	flush := func() error {
		err := v.checkRefs(ctx, batch)
		batch = batch[:0]
		return err
	}
	err := eachLine(src, func(n int, raw []byte) error {
		var l importLine
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			v.fail(n, "", "is not one JSON object of section, id and data (or deleted)")
			return nil
		}
		if l.Section == "files" {
			v.skippedFiles++
			return nil
		}
		k := domain.KindOf(l.Section)
		if k == nil {
			v.fail(n, "section", "names no section that can be imported")
			return nil
		}
		id, ok := k.IDFromJSON(l.ID)
		if !ok {
			v.fail(n, "id", "must be "+k.IDForm())
			return nil
		}
		if l.Deleted {
			if len(l.Data) > 0 {
				v.fail(n, "data", "a deletion carries no data")
				return nil
			}
			return spool(spooled{Line: n, Section: l.Section, ID: id, Deleted: true})
		}
		obj, err := k.DecodeImport(l.Data, v.rc)
		if err != nil {
			if v.failFields(n, err) {
				return nil
			}
			return err
		}
		batch = append(batch, pending{line: n, obj: obj})
		s := spooled{Line: n, Section: l.Section, ID: id, Payload: obj.JSON}
		if obj.Customer != nil {
			s.Customer = ptrTo(int64(*obj.Customer))
		}
		if err := spool(s); err != nil {
			return err
		}
		if len(batch) == importBatch {
			if err := flush(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	for _, out := range outs {
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// checkRefs resolves the batch's references: objects the file declares
// live count as found (with the customer and fields the file gives them),
// objects it deletes as missing, the rest are looked up in the company.
func (v *validation) checkRefs(ctx context.Context, batch []pending) error {
	lookup := map[string][]string{}
	for _, p := range batch {
		for _, r := range p.obj.Refs {
			if _, inFile := v.declared[r.Section][keyOf(r.ID)]; !inFile && !slices.Contains(lookup[r.Section], r.ID) {
				lookup[r.Section] = append(lookup[r.Section], r.ID)
			}
		}
	}
	found := map[string]map[string]domain.RefTarget{}
	for section, ids := range lookup {
		targets, err := v.store.Lookup(ctx, v.company, section, ids)
		if err != nil {
			return err
		}
		found[section] = targets
	}
	for section, objs := range v.declared {
		if found[section] == nil {
			found[section] = map[string]domain.RefTarget{}
		}
		for _, p := range batch {
			for _, r := range p.obj.Refs {
				if r.Section != section {
					continue
				}
				d, ok := objs[keyOf(r.ID)]
				if !ok || d.deleted {
					continue
				}
				t := domain.RefTarget{Attrs: v.attrs[section][r.ID]}
				if d.customer != 0 {
					c := domain.CustomerID(d.customer)
					t.Customer = &c
				}
				found[section][r.ID] = t
			}
		}
	}
	for _, p := range batch {
		if err := domain.CheckRefs(p.obj.Refs, p.obj.Customer, found); err != nil && !v.failFields(p.line, err) {
			return err
		}
	}
	return nil
}

// apply is the third pass, over one phase's spool: in batches of one
// section, unchanged objects are left alone (no updated_at, no change
// stamp), the others put, deletions made tombstones.
func (e *Exchange) apply(ctx context.Context, company domain.CompanyID, spool *os.File, rc domain.RuleContext,
	report *ImportReport, effects *[]domain.Effect, registers map[string]int) error {
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	var batch []spooled
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := e.applyBatch(ctx, company, batch, rc, report, effects, registers)
		batch = batch[:0]
		return err
	}
	dec := json.NewDecoder(bufio.NewReader(spool))
	for {
		var s spooled
		if err := dec.Decode(&s); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		if len(batch) > 0 && (batch[0].Section != s.Section || len(batch) == importBatch) {
			if err := flush(); err != nil {
				return err
			}
		}
		batch = append(batch, s)
	}
	return flush()
}

func (e *Exchange) applyBatch(ctx context.Context, company domain.CompanyID, batch []spooled, rc domain.RuleContext,
	report *ImportReport, effects *[]domain.Effect, registers map[string]int) error {
	at := rc.Now
	kind := domain.KindOf(batch[0].Section)
	ids := make([]string, len(batch))
	for i, s := range batch {
		ids[i] = s.ID
	}
	existing, err := e.store.Existing(ctx, company, kind, ids)
	if err != nil {
		return err
	}
	var put []ports.StoredObject
	for _, s := range batch {
		old, exists := existing[s.ID]
		if s.Deleted {
			if !exists || old.DeletedAt != nil {
				report.Unchanged++
				continue
			}
			if err := e.store.Delete(ctx, company, kind, s.ID, at); err != nil {
				return fmt.Errorf("line %d: %w", s.Line, err)
			}
			noteRegister(registers, s.Section, old.Payload, s.Line)
			report.Deleted[s.Section]++
			continue
		}
		obj := ports.StoredObject{ID: s.ID, Payload: s.Payload}
		if s.Customer != nil {
			c := domain.CustomerID(*s.Customer)
			obj.Customer = &c
		}
		touch(ctx, kind, obj)
		switch {
		case exists && old.DeletedAt == nil && bytes.Equal(old.Payload, s.Payload) && sameCustomer(old.Customer, obj.Customer):
			report.Unchanged++
			continue
		case exists:
			report.Updated[s.Section]++
		default:
			report.Created[s.Section]++
		}
		put = append(put, obj)
		noteRegister(registers, s.Section, s.Payload, s.Line)
		if effects != nil && kind.HasEffects() {
			decoded, err := kind.DecodeImport(s.Payload, rc)
			if err != nil {
				return fmt.Errorf("line %d: %w", s.Line, err)
			}
			*effects = append(*effects, decoded.Effects(s.ID)...)
		}
	}
	if err := e.store.Put(ctx, company, kind, put, existing, at); err != nil {
		if errors.Is(err, domain.ErrConflict) {
			return &ImportErrors{Lines: []LineError{{Line: batch[0].Line, Field: "id",
				Message: fmt.Sprintf("a %s line of lines %d–%d names an id taken outside this company, or a value that must be unique", batch[0].Section, batch[0].Line, batch[len(batch)-1].Line),
				Span:    batch[len(batch)-1].Line - batch[0].Line}}}
		}
		return err
	}
	return nil
}

// noteRegister remembers the register of a receipt the import writes or deletes.
func noteRegister(registers map[string]int, section string, payload []byte, line int) {
	if section != "cash-revenues" {
		return
	}
	var r struct {
		RegisterID string `json:"register_id"`
	}
	_ = json.Unmarshal(payload, &r)
	registers[r.RegisterID] = line
}

// checkRegisters states, after the writes, that every register the import
// wrote receipts of still counts without a gap.
func (e *Exchange) checkRegisters(ctx context.Context, company domain.CompanyID, registers map[string]int) error {
	kind := domain.KindOf("cash-revenues")
	for register, line := range registers {
		numbers, err := e.store.Values(ctx, company, kind, "register_id", register, "number")
		if err != nil {
			return err
		}
		if err := domain.CheckGapless(register, numbers); err != nil {
			var ve *domain.ValidationErrors
			errors.As(err, &ve)
			return &ImportErrors{Lines: []LineError{{Line: line, Field: "data.number", Message: ve.Errors[0].Message}}}
		}
	}
	return nil
}

func sameCustomer(a, b *domain.CustomerID) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// Export writes the live objects of the named sections (every one but the
// company when none are named) in the import format, section by section in
// table order, each in feed order; files as their metadata. It writes every
// object committed before it began, including those the sync feed still
// holds back for an older open transaction; one committed while it runs
// may or may not be in it.
func (e *Exchange) Export(ctx context.Context, company domain.CompanyID, sections []string, w io.Writer) error {
	if _, err := e.companies.Get(ctx, company); err != nil {
		return err
	}
	kinds, withFiles := domain.Kinds(), len(sections) == 0
	if len(sections) > 0 {
		kinds = nil
		for _, s := range sections {
			if s == "files" {
				withFiles = true
				continue
			}
			k := domain.KindOf(s)
			if k == nil {
				return domain.FieldErrors{{Field: "sections", Message: "names no section that can be exported"}}.Err()
			}
			kinds = append(kinds, k)
		}
	}
	// The export's event is durable before a line leaves: it names every
	// customer of the company, whose data the export may hold.
	ctx = e.operatorAccess(ctx, audit.ActionExport, sections)
	if err := e.touchAllCustomers(ctx, company); err != nil {
		return err
	}
	if err := e.audits.Record(ctx, company, audit.From(ctx).Event(domain.OutcomeOK.Status(), "")); err != nil {
		return err
	}
	out := bufio.NewWriter(w)
	for _, k := range kinds {
		q := domain.ListQuery{Limit: domain.MaxPageSize, Dump: true}
		for {
			page, err := e.store.List(ctx, company, k, q)
			if err != nil {
				return err
			}
			for _, o := range page.Items {
				if _, err := fmt.Fprintf(out, `{"section":%q,"id":%s,"version":%d,"data":%s}`+"\n", k.Slug, k.AppendID(nil, o.ID), o.Version, o.Payload); err != nil {
					return err
				}
			}
			q.After = &page.Next
			if !page.HasMore {
				break
			}
		}
	}
	if withFiles {
		if err := e.exportFiles(ctx, company, out); err != nil {
			return err
		}
	}
	return out.Flush()
}

func (e *Exchange) touchAllCustomers(ctx context.Context, company domain.CompanyID) error {
	customers := domain.KindOf("customers")
	q := domain.ListQuery{Limit: domain.MaxPageSize, Dump: true}
	for {
		page, err := e.store.List(ctx, company, customers, q)
		if err != nil {
			return err
		}
		for _, o := range page.Items {
			touch(ctx, customers, o)
		}
		q.After = &page.Next
		if !page.HasMore {
			return nil
		}
	}
}

func (e *Exchange) exportFiles(ctx context.Context, company domain.CompanyID, out io.Writer) error {
	q := domain.ListQuery{Limit: domain.MaxPageSize, Dump: true}
	for {
		page, err := e.files.List(ctx, company, q)
		if err != nil {
			return err
		}
		for _, f := range page.Files {
			data, err := json.Marshal(f.View())
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(out, `{"section":"files","id":%q,"version":%d,"data":%s}`+"\n", f.ID.String(), f.Version, data); err != nil {
				return err
			}
		}
		q.After = &page.Next
		if !page.HasMore {
			return nil
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
