package usecase

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// Restore brings one company's objects back from a copy of the database
// as it was at an earlier time T (docs/contract.md §6, "Restoring a
// practice"): what was deleted since T comes back, what changed since
// gets its state at T — as new versions, through the import, so that the
// change feed, webhooks and sync clients see changes, never a rewind.
// Objects made since T stay. What would undo something that happened
// since T outside the object (a slot booked, an order that would go back
// to a device, a unique value taken) is reported, not written.
type Restore struct {
	x        *Exchange
	sources  ports.RestoreSources
	calendar ports.Calendar
}

// NewRestore wires the company restore.
func NewRestore(x *Exchange, sources ports.RestoreSources, calendar ports.Calendar) *Restore {
	return &Restore{x: x, sources: sources, calendar: calendar}
}

// RestoreOptions narrows a restore.
type RestoreOptions struct {
	// Sections are the section slugs to restore; none: every section.
	Sections []string
	// DryRun checks and counts; nothing is written.
	DryRun bool
}

// RestoreReport says what a restore did (or, dry, would do), by section.
type RestoreReport struct {
	// Recreated counts objects deleted since T, live again.
	Recreated map[string]int `json:"recreated"`
	// Reverted counts objects changed since T, at their state of T again.
	Reverted map[string]int `json:"reverted"`
	// Unchanged counts objects as they were at T.
	Unchanged int               `json:"unchanged"`
	Conflicts []RestoreConflict `json:"conflicts"`
	DryRun    bool              `json:"dry_run"`
}

// RestoreConflict is an object left as it is: restoring it would undo
// something done since T.
type RestoreConflict struct {
	Section string `json:"section"`
	ID      string `json:"id"`
	Reason  string `json:"reason"`
}

// ErrNotInSource: the copy holds no such company.
var ErrNotInSource = fmt.Errorf("the source holds no such company: %w", domain.ErrNotFound)

// maxRestoreRounds bounds the checks: each round sets aside the objects the
// import's rules refuse (a reference to an object gone since T, say).
const maxRestoreRounds = 5

// restoring is one object the restore writes, in the order of its spool.
type restoring struct {
	section, id string
	recreated   bool
}

// Run restores company from the copy sourceURL names.
func (r *Restore) Run(ctx context.Context, company domain.CompanyID, sourceURL string, opts RestoreOptions) (RestoreReport, error) {
	if opts.DryRun {
		return r.run(ctx, company, sourceURL, opts)
	}
	var report RestoreReport
	err := r.x.leased(ctx, company, "restore", func(ctx context.Context) (err error) {
		report, err = r.run(ctx, company, sourceURL, opts)
		return err
	})
	return report, err
}

func (r *Restore) run(ctx context.Context, company domain.CompanyID, sourceURL string, opts RestoreOptions) (RestoreReport, error) {
	kinds, err := restoreKinds(opts.Sections)
	if err != nil {
		return RestoreReport{}, err
	}
	if _, err := r.x.companies.Get(ctx, company); err != nil {
		return RestoreReport{}, err
	}
	src, err := r.sources.Open(ctx, sourceURL)
	if err != nil {
		return RestoreReport{}, err
	}
	defer func() { _ = src.Close() }()
	if _, err := src.Company(ctx, company); errors.Is(err, domain.ErrNotFound) {
		return RestoreReport{}, ErrNotInSource
	} else if err != nil {
		return RestoreReport{}, err
	}
	report := RestoreReport{Recreated: map[string]int{}, Reverted: map[string]int{}, Conflicts: []RestoreConflict{}, DryRun: opts.DryRun}
	spool, err := os.CreateTemp("", "praxis-restore-")
	if err != nil {
		return report, err
	}
	defer func() { _ = spool.Close(); _ = os.Remove(spool.Name()) }()
	var plan []restoring
	out := bufio.NewWriter(spool)
	for _, k := range kinds {
		if err := r.compare(ctx, company, src, k, out, &plan, &report); err != nil {
			return report, err
		}
	}
	if err := out.Flush(); err != nil {
		return report, err
	}
	for round := 0; ; round++ {
		if len(plan) == 0 {
			return report, nil
		}
		_, err := r.x.importAs(ctx, company, spool, opts.DryRun, audit.ActionRestore, opts.Sections)
		var refused *ImportErrors
		if !errors.As(err, &refused) {
			if err != nil {
				return report, err
			}
			for _, p := range plan {
				if p.recreated {
					report.Recreated[p.section]++
				} else {
					report.Reverted[p.section]++
				}
			}
			return report, nil
		}
		// Lines the import's rules refuse are set aside as conflicts, and
		// the rest checked again. A refusal of a whole batch (a unique
		// value another company's object holds) names no one object: the
		// restore is refused as the import is.
		if round == maxRestoreRounds || refused.More > 0 || slices.ContainsFunc(refused.Lines, func(l LineError) bool { return l.Span > 0 }) {
			return report, err
		}
		if plan, err = setAside(spool, plan, refused.Lines, &report); err != nil {
			return report, err
		}
	}
}

// restoreKinds are the sections a restore reads: those named, or every
// generic one. Files are written once and never deleted: nothing to bring back.
func restoreKinds(sections []string) ([]*domain.Kind, error) {
	if len(sections) == 0 {
		return domain.Kinds(), nil
	}
	var kinds []*domain.Kind
	for _, s := range sections {
		k := domain.KindOf(s)
		if k == nil {
			return nil, domain.FieldErrors{{Field: "sections", Message: fmt.Sprintf("%q names no section that can be restored", s)}}.Err()
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// compare pages through kind in the copy, page by page against the
// objects of the same ids now, and spools each object to bring back.
func (r *Restore) compare(ctx context.Context, company domain.CompanyID, src ports.RestoreSource, k *domain.Kind,
	out io.Writer, plan *[]restoring, report *RestoreReport) error {
	var clash *clashes
	if keyOf := clashKeyOf(k); keyOf != nil {
		all, err := r.x.store.All(ctx, company, k)
		if err != nil {
			return err
		}
		clash = &clashes{keyOf: keyOf, holders: map[string]string{}}
		for _, o := range all[0] {
			if key := keyOf(o.Payload); key != "" {
				clash.holders[key] = o.ID
			}
		}
	}
	q := domain.ListQuery{Limit: domain.MaxPageSize, Dump: true}
	for {
		page, err := src.List(ctx, company, k, q)
		if err != nil {
			return err
		}
		ids := make([]string, len(page.Items))
		for i, o := range page.Items {
			ids[i] = o.ID
		}
		now, err := r.x.store.Existing(ctx, company, k, ids)
		if err != nil {
			return err
		}
		for _, then := range page.Items {
			cur, exists := now[then.ID]
			live := exists && cur.DeletedAt == nil
			if live && bytes.Equal(cur.Payload, then.Payload) && sameCustomer(cur.Customer, then.Customer) {
				report.Unchanged++
				continue
			}
			reason, err := r.conflict(ctx, company, k, then, cur, live, clash)
			if err != nil {
				return err
			}
			if reason != "" {
				report.Conflicts = append(report.Conflicts, RestoreConflict{Section: k.Slug, ID: then.ID, Reason: reason})
				continue
			}
			if _, err := fmt.Fprintf(out, `{"section":%q,"id":%s,"data":%s}`+"\n", k.Slug, k.AppendID(nil, then.ID), then.Payload); err != nil {
				return err
			}
			*plan = append(*plan, restoring{section: k.Slug, id: then.ID, recreated: !live})
		}
		q.After = &page.Next
		if !page.HasMore {
			return nil
		}
	}
}

// clashes are the live objects of a kind by the value only one of them may hold.
type clashes struct {
	keyOf   func(payload []byte) string
	holders map[string]string // key → id
}

// clashKeyOf reads the value no two live objects of k share (the schema's
// unique indexes over live objects): the kind's Unique field, or an active
// service assignment's user, service and location; nil for other kinds. A
// restored object whose value another has taken since T would be refused.
func clashKeyOf(k *domain.Kind) func(payload []byte) string {
	switch {
	case k.Unique != "":
		return func(p []byte) string {
			var fields map[string]json.RawMessage
			var value string
			if json.Unmarshal(p, &fields) != nil || json.Unmarshal(fields[k.Unique], &value) != nil {
				return ""
			}
			return value
		}
	case k.Slug == "service-assignments":
		return activeAssignment
	}
	return nil
}

// activeAssignment is the key of an active service assignment (one per
// user, service and location); "" for an inactive one.
func activeAssignment(p []byte) string {
	var a struct {
		UserID     string  `json:"user_id"`
		ServiceID  string  `json:"service_id"`
		LocationID *string `json:"location_id"`
		Active     bool    `json:"active"`
	}
	if json.Unmarshal(p, &a) != nil || !a.Active {
		return ""
	}
	location := ""
	if a.LocationID != nil {
		location = *a.LocationID
	}
	return a.UserID + " " + a.ServiceID + " " + location
}

// conflict says why then (the object at T) must not be written over cur
// (the object now, live or not), or "".
func (r *Restore) conflict(ctx context.Context, company domain.CompanyID, k *domain.Kind, then, cur ports.StoredObject, live bool, clash *clashes) (string, error) {
	if clash != nil {
		if key := clash.keyOf(then.Payload); key != "" {
			if holder, ok := clash.holders[key]; ok && holder != then.ID {
				return fmt.Sprintf("its unique value is held since by %s %s", k.Singular(), holder), nil
			}
		}
	}
	switch k.Slug {
	case "appointments":
		span, err := domain.SpanOf(then.ID, then.Payload, 0)
		if err != nil || !span.Active {
			return "", nil
		}
		ids, err := r.calendar.Blocking(ctx, company, span.User, span.Start, span.BlockedUntil)
		if err != nil {
			return "", err
		}
		for _, id := range ids {
			if id != then.ID {
				return "its time is booked since by appointment " + id, nil
			}
		}
	case "device-orders":
		var order struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(then.Payload, &order) == nil && domain.OrderIsOpen(order.Status) {
			state := "deleted"
			if live {
				var now struct {
					Status string `json:"status"`
				}
				_ = json.Unmarshal(cur.Payload, &now)
				state = now.Status
			}
			return fmt.Sprintf("it was %s at the time and is %s now: restored, it would go back to its device", order.Status, state), nil
		}
	}
	return "", nil
}

// setAside moves the refused lines out of the spool and the plan, into
// the report's conflicts.
func setAside(spool *os.File, plan []restoring, refused []LineError, report *RestoreReport) ([]restoring, error) {
	why := map[int]string{}
	for _, l := range refused {
		if l.Line < 1 || l.Line > len(plan) {
			return nil, fmt.Errorf("the restore's check named line %d of %d", l.Line, len(plan))
		}
		reason := l.Message
		if l.Field != "" {
			reason = l.Field + ": " + l.Message
		}
		if why[l.Line] != "" {
			reason = why[l.Line] + "; " + reason
		}
		why[l.Line] = reason
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var kept bytes.Buffer
	var left []restoring
	err := eachLine(spool, func(n int, raw []byte) error {
		if reason, ok := why[n]; ok {
			report.Conflicts = append(report.Conflicts, RestoreConflict{Section: plan[n-1].section, ID: plan[n-1].id, Reason: reason})
			return nil
		}
		left = append(left, plan[n-1])
		kept.Write(raw)
		kept.WriteByte('\n')
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := spool.Truncate(0); err != nil {
		return nil, err
	}
	if _, err := spool.WriteAt(kept.Bytes(), 0); err != nil {
		return nil, err
	}
	return left, nil
}
