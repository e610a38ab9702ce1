package usecase

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
	"github.com/praxis-health/praxis/ports"
)

// RetentionHold answers the company, its hold among its settings.
func (a *Admin) RetentionHold(ctx context.Context, id domain.CompanyID) (domain.Company, error) {
	c, err := a.companies.Get(ctx, id)
	if err != nil {
		return domain.Company{}, fmt.Errorf("company %s: %w", id, err)
	}
	return c, nil
}

// SetRetentionHold holds the company's data until the end of until (a day
// in the company's time zone; "" lifts the hold): it cannot be erased before.
func (a *Admin) SetRetentionHold(ctx context.Context, id domain.CompanyID, until string) (domain.Company, error) {
	day, err := domain.ParseRetentionHold(until)
	if err != nil {
		return domain.Company{}, err
	}
	if err := a.companies.SetRetentionHold(ctx, id, day); err != nil {
		return domain.Company{}, fmt.Errorf("company %s: %w", id, err)
	}
	return a.companies.Get(ctx, id)
}

// EraseCompany ends a practice that has left (docs/contract.md §9): its
// clients are revoked and their tokens end, every row of it in every table
// goes in one transaction that keeps the erasure record, then every stored
// object of it. The proof walks the schema and the blob store and must
// find nothing. A failure after the rows leaves the record saying the
// objects remain; running it again finishes, and for an erased company it
// answers the record and the proof again.
func (a *Admin) EraseCompany(ctx context.Context, id domain.CompanyID, in ports.EraseInput) (ports.ErasureReport, error) {
	rec, err := a.erasures.Get(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		rec, err = a.eraseRowsLeased(ctx, id, in)
	}
	if err != nil {
		return ports.ErasureReport{}, err
	}
	deleted, err := a.eraseObjects(ctx, id)
	if err != nil {
		if deleted > 0 { // counted for the record; the failure is what is answered
			_ = a.erasures.BlobsErased(ctx, id, deleted, time.Time{})
		}
		return ports.ErasureReport{}, fmt.Errorf("company %s: its rows are erased, %d objects deleted, the others not yet "+
			"(run the erasure again): %w", id, deleted, err)
	}
	if rec.BlobsErasedAt == nil || deleted > 0 {
		now := a.now().UTC()
		if err := a.erasures.BlobsErased(ctx, id, deleted, now); err != nil {
			return ports.ErasureReport{}, err
		}
		rec.Blobs, rec.BlobsErasedAt = rec.Blobs+deleted, &now
	}
	report := ports.ErasureReport{Erasure: rec}
	if report.Remaining, err = a.erasures.Remaining(ctx, id); err != nil {
		return ports.ErasureReport{}, err
	}
	if report.Objects, err = a.countObjects(ctx, id); err != nil {
		return ports.ErasureReport{}, err
	}
	var left []string
	for _, table := range slices.Sorted(maps.Keys(report.Remaining)) {
		if n := report.Remaining[table]; n > 0 {
			left = append(left, fmt.Sprintf("%s: %d", table, n))
		}
	}
	if report.Objects > 0 {
		left = append(left, fmt.Sprintf("blob store: %d objects", report.Objects))
	}
	if len(left) > 0 {
		return report, fmt.Errorf("company %s: the erasure's proof found what remains (%v): run it again", id, left)
	}
	return report, nil
}

// eraseRowsLeased is eraseRows under the company's lease: refused while an
// import or restore of it runs, and none starts meanwhile (the rows'
// transaction deletes the lease with the rest). A company unknown here, or
// held, is refused before a lease names it.
func (a *Admin) eraseRowsLeased(ctx context.Context, id domain.CompanyID, in ports.EraseInput) (rec domain.Erasure, err error) {
	company, err := a.companies.Get(ctx, id)
	if err != nil {
		return domain.Erasure{}, fmt.Errorf("company %s: %w", id, err)
	}
	if company.HeldAt(a.now()) {
		return domain.Erasure{}, fmt.Errorf("company %s is held until %s (praxis admin company hold): %w", id, company.RetentionHold, domain.ErrRetentionHold)
	}
	err = underLease(ctx, a.leases, a.now, id, "erasure", func(ctx context.Context) error {
		rec, err = a.eraseRows(ctx, id, in)
		return err
	})
	return rec, err
}

// eraseRows revokes the company's clients, then deletes its rows and keeps
// the erasure record, all or nothing.
func (a *Admin) eraseRows(ctx context.Context, id domain.CompanyID, in ports.EraseInput) (domain.Erasure, error) {
	// Disabled first: the company gets no new client or token from here on,
	// and the clients it has end with their tokens (§3).
	if err := a.RetireCompany(ctx, id, true); err != nil {
		return domain.Erasure{}, err
	}
	clients, err := a.clients.List(ctx, id)
	if err != nil {
		return domain.Erasure{}, fmt.Errorf("clients of company %s: %w", id, err)
	}
	// Kept to the microsecond, as both databases keep it: the record answers
	// the same time now as when it is read again.
	at := a.now().UTC().Truncate(time.Microsecond)
	rec, err := a.erasures.EraseRows(ctx, domain.Erasure{Company: id, At: at, By: in.By, ExportSHA256: in.ExportSHA256})
	if err != nil {
		return domain.Erasure{}, fmt.Errorf("erase company %s: %w", id, err)
	}
	// Once more for each client it had, revoked or not: a token saved in
	// the moment between the revocation and the rows' end (a device's
	// credential made on the settings pages meanwhile) ends too; and the
	// token store forgets the client's call counts.
	for _, c := range clients {
		if err := a.tokens.RevokeClient(ctx, c.ID); err != nil {
			return rec, fmt.Errorf("company %s: rows erased, but a token of client %s may live until it expires: %w", id, c.ID, err)
		}
		if err := a.tokens.ForgetUsage(ctx, c.ID); err != nil {
			return rec, fmt.Errorf("company %s: rows erased, but the call counts of client %s stay until they expire (%d days): %w",
				id, c.ID, ratelimit.UsageDays, err)
		}
	}
	return rec, nil
}

// eraseObjects deletes every stored object of the company and counts them.
func (a *Admin) eraseObjects(ctx context.Context, id domain.CompanyID) (int64, error) {
	var deleted int64
	err := a.blobs.Walk(ctx, id, func(obj ports.BlobInfo) error {
		if err := a.blobs.Delete(ctx, id, obj.Name); err != nil {
			return err
		}
		deleted++
		return nil
	})
	return deleted, err
}

func (a *Admin) countObjects(ctx context.Context, id domain.CompanyID) (int64, error) {
	var n int64
	err := a.blobs.Walk(ctx, id, func(ports.BlobInfo) error { n++; return nil })
	return n, err
}
