package usecase

import (
	"context"
	"fmt"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// MinSweepAge keeps the sweep away from uploads still in flight: a request may
// take at most 10 minutes, and its objects get their rows when it ends.
const MinSweepAge = 15 * time.Minute

// sweepBatch is how many object names one database query checks.
const sweepBatch = 500

// Maintenance is what operators run now and then.
type Maintenance struct {
	companies ports.CompanyRepository
	files     ports.FileRepository
	blobs     ports.BlobStore
	now       func() time.Time
}

// NewMaintenance wires the maintenance use case.
func NewMaintenance(companies ports.CompanyRepository, files ports.FileRepository, blobs ports.BlobStore) *Maintenance {
	return &Maintenance{companies: companies, files: files, blobs: blobs, now: time.Now}
}

// SweepReport counts what a sweep looked at and removed.
type SweepReport struct {
	Companies    int   `json:"companies"`
	Objects      int   `json:"objects_checked"`
	Deleted      int   `json:"orphans_deleted"`
	DeletedBytes int64 `json:"orphan_bytes_deleted"`
}

// SweepOrphans deletes stored objects that no file record names and that are
// older than olderThan: what a crash between an object's commit and its
// record's commit leaves behind, and spool files of writes a crash cut off.
// Such objects were never acknowledged to a client and count against no quota.
func (m *Maintenance) SweepOrphans(ctx context.Context, olderThan time.Duration) (SweepReport, error) {
	if olderThan < MinSweepAge {
		return SweepReport{}, fmt.Errorf("older-than %v: must be at least %v, so that uploads in flight are never touched: %w",
			olderThan, MinSweepAge, domain.ErrInvalid)
	}
	cutoff := m.now().Add(-olderThan)
	ids, err := m.companies.ListIDs(ctx)
	if err != nil {
		return SweepReport{}, err
	}
	var report SweepReport
	for _, company := range ids {
		report.Companies++
		var batch []ports.BlobInfo
		err := m.blobs.Walk(ctx, company, func(obj ports.BlobInfo) error {
			report.Objects++
			if obj.ModTime.After(cutoff) {
				return nil
			}
			if batch = append(batch, obj); len(batch) == sweepBatch {
				return m.sweep(ctx, company, &batch, &report)
			}
			return nil
		})
		if err == nil {
			err = m.sweep(ctx, company, &batch, &report)
		}
		if err != nil {
			return report, fmt.Errorf("sweep company %s: %w", company, err)
		}
	}
	return report, nil
}

// sweep deletes the objects of batch that no record names, and empties batch.
func (m *Maintenance) sweep(ctx context.Context, company domain.CompanyID, batch *[]ports.BlobInfo, report *SweepReport) error {
	if len(*batch) == 0 {
		return nil
	}
	names := make([]string, len(*batch))
	for i, obj := range *batch {
		names[i] = obj.Name
	}
	known, err := m.files.KnownStorageKeys(ctx, company, names)
	if err != nil {
		return err
	}
	for _, obj := range *batch {
		if known[obj.Name] {
			continue
		}
		if err := m.blobs.Delete(ctx, company, obj.Name); err != nil {
			return err
		}
		report.Deleted++
		report.DeletedBytes += obj.Size
	}
	*batch = (*batch)[:0]
	return nil
}
