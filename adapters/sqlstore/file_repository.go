package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/gdt"
	"github.com/praxis-health/praxis/ports"
)

type fileRow struct {
	bun.BaseModel `bun:"table:files,alias:files"`

	ID          uuid.UUID `bun:"id,pk"`
	CompanyID   uuid.UUID `bun:"company_id"`
	CustomerID  int64     `bun:"customer_id"`
	Name        string    `bun:"name"`
	ContentType string    `bun:"content_type"`
	Size        int64     `bun:"size"`
	SHA256      []byte    `bun:"sha256"`
	StorageKey  string    `bun:"storage_key"`
	Source      string    `bun:"source"`
	Category    string    `bun:"category"`
	Description *string   `bun:"description"`
	Version     int64     `bun:"version"`
	Change      int64     `bun:"change"`
	GDT         *string   `bun:"gdt"`
	Related     string    `bun:"related_file_ids"`
	OrderID     *string   `bun:"device_order_id"`
	OrderMatch  *string   `bun:"order_match"`
	// ExaminedFrom and ExaminedUntil are when a GDT result's device
	// examined, [from, until) in Unix milliseconds (domain.ExaminedSpan).
	ExaminedFrom  *int64     `bun:"examined_from"`
	ExaminedUntil *int64     `bun:"examined_until"`
	CreatedAt     time.Time  `bun:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
	DeletedAt     *time.Time `bun:"deleted_at"`
}

func (r fileRow) toDomain() (domain.File, error) {
	src, err := domain.ParseSource(r.Source)
	if err != nil {
		return domain.File{}, err
	}
	var info *gdt.Info
	if r.GDT != nil {
		info = &gdt.Info{}
		if err := json.Unmarshal([]byte(*r.GDT), info); err != nil {
			return domain.File{}, fmt.Errorf("file %s: gdt: %w", r.ID, err)
		}
	}
	var related []domain.FileID
	if err := json.Unmarshal([]byte(r.Related), &related); err != nil {
		return domain.File{}, fmt.Errorf("file %s: related_file_ids: %w", r.ID, err)
	}
	return domain.File{
		GDT: info, RelatedFileIDs: related,
		ID: domain.FileID(r.ID), CompanyID: domain.CompanyID(r.CompanyID), CustomerID: domain.CustomerID(r.CustomerID),
		Name: r.Name, ContentType: r.ContentType, Size: r.Size, SHA256: r.SHA256, StorageKey: r.StorageKey,
		Source: src, Category: r.Category, Description: r.Description, Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		DeviceOrderID: r.OrderID, OrderMatch: r.OrderMatch,
	}, nil
}

// FileRepository is the bun ports.FileRepository.
type FileRepository struct{ db *bun.DB }

var _ ports.FileRepository = (*FileRepository)(nil)

// NewFileRepository returns the repository of db.
func NewFileRepository(db *bun.DB) *FileRepository { return &FileRepository{db: db} }

func (r *FileRepository) Create(ctx context.Context, files ...domain.File) error {
	if len(files) == 0 {
		return nil
	}
	db := conn(ctx, r.db)
	change, err := nextChange(ctx, db)
	if err != nil {
		return err
	}
	rows := make([]fileRow, len(files))
	for i, f := range files {
		category := f.Category
		if category == "" {
			category = "other"
		}
		related, err := json.Marshal(f.RelatedFileIDs)
		if err != nil {
			return err
		}
		if f.RelatedFileIDs == nil {
			related = []byte("[]")
		}
		var info *string
		if f.GDT != nil {
			raw, err := json.Marshal(f.GDT)
			if err != nil {
				return err
			}
			info = ptr(string(raw))
		}
		var from, until *int64
		if f, u, ok := domain.ExaminedSpan(f.GDT); ok {
			from, until = ptr(f.UnixMilli()), ptr(u.UnixMilli())
		}
		rows[i] = fileRow{
			GDT: info, Related: string(related), ExaminedFrom: from, ExaminedUntil: until,
			ID: uuid.UUID(f.ID), CompanyID: uuid.UUID(f.CompanyID), CustomerID: int64(f.CustomerID),
			Name: f.Name, ContentType: f.ContentType, Size: f.Size, SHA256: f.SHA256, StorageKey: f.StorageKey,
			Source: f.Source.String(), Category: category, Description: f.Description, Version: 1, Change: change,
			CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt, OrderID: f.DeviceOrderID, OrderMatch: f.OrderMatch,
		}
	}
	_, err = db.NewInsert().Model(&rows).Exec(ctx)
	return translate(err)
}

func (r *FileRepository) Get(ctx context.Context, company domain.CompanyID, id domain.FileID) (domain.File, error) {
	var row fileRow
	err := tenantOf(conn(ctx, r.db), company).SelectModel(&row).
		Where("id = ?", uuid.UUID(id)).Where("deleted_at IS NULL").Scan(ctx)
	if err != nil {
		return domain.File{}, translate(err)
	}
	return row.toDomain()
}

func (r *FileRepository) Many(ctx context.Context, company domain.CompanyID, ids []domain.FileID) ([]domain.File, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]uuid.UUID, len(ids))
	for i, id := range ids {
		keys[i] = uuid.UUID(id)
	}
	var rows []fileRow
	if err := tenantOf(conn(ctx, r.db), company).SelectModel(&rows).Where("id IN (?)", bun.List(keys)).
		Where("deleted_at IS NULL").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	return filesOf(rows)
}

// filesOf reads rows into files.
func filesOf(rows []fileRow) ([]domain.File, error) {
	files := make([]domain.File, 0, len(rows))
	for _, row := range rows {
		f, err := row.toDomain()
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

func (r *FileRepository) List(ctx context.Context, company domain.CompanyID, lq domain.ListQuery) (ports.FilePage, error) {
	q := tenantOf(conn(ctx, r.db), company).SelectModel((*fileRow)(nil))
	if match, ok := lq.Fields["order_match"]; ok { // a column of files, not a payload field
		q = q.Where("files.order_match = ?", match)
		lq.Fields = nil
	}
	for _, c := range lq.Where {
		var err error
		if q, err = fileCondition(q, c); err != nil {
			return ports.FilePage{}, err
		}
	}
	q, err := feedQuery(q, "files", lq, func(id string) (any, bool) { return id, domain.ValidObjectID(id) }, nil)
	if err != nil {
		return ports.FilePage{}, err
	}
	var rows []fileRow
	if err := q.Scan(ctx, &rows); err != nil {
		return ports.FilePage{}, translate(err)
	}
	rows, next, more := trimPage(rows, lq, func(f fileRow) domain.Cursor { return domain.Cursor{Change: f.Change, ID: f.ID.String()} })
	page := ports.FilePage{Files: make([]domain.File, 0, len(rows)), Next: next, HasMore: more}
	for _, row := range rows {
		f, err := row.toDomain()
		if err != nil {
			return ports.FilePage{}, err
		}
		page.Files = append(page.Files, f)
	}
	return page, nil
}

// fileColumns are the files' columns a condition of ListQuery.Where reads.
var fileColumns = map[domain.SearchField]string{
	domain.SearchStored: "files.created_at", domain.SearchCategory: "files.category",
	domain.SearchContentType: "files.content_type", domain.SearchExamination: "files.gdt",
	domain.SearchID: "files.id", // values: valid file ids
}

// fileCondition narrows q to the files that meet c: its values (or
// ranges) are alternatives; no value matches nothing. A GDT result's tests
// carry no LOINC code (a code matches none); it was observed when the
// device examined; _lastUpdated compares its last change at the second.
func fileCondition(q *bun.SelectQuery, c domain.Condition) (*bun.SelectQuery, error) {
	switch c.Field {
	case domain.SearchUpdated:
		from, until := secondSpan(q.DB(), "files.updated_at")
		return observedRanges(q, from, until, c.Instants), nil
	case domain.SearchCode:
		return q.Where("1 = 0"), nil
	case domain.SearchObserved:
		return observedRanges(q, "files.examined_from", "files.examined_until", c.Instants), nil
	}
	col, ok := fileColumns[c.Field]
	if !ok {
		return q, fmt.Errorf("files have no condition on %q", c.Field)
	}
	switch c.Op {
	case domain.OpPresent:
		return q.Where(col + " IS NOT NULL"), nil
	case domain.OpInstants:
		return instantPoints(q, col, c.Instants), nil
	case domain.OpEqual:
		if len(c.Values) == 0 {
			return q.Where("1 = 0"), nil
		}
		return q.Where(col+" IN (?)", bun.List(c.Values)), nil
	}
	return q, fmt.Errorf("files have no condition %d on %q", c.Op, c.Field)
}

func (r *FileRepository) AssignOrder(ctx context.Context, company domain.CompanyID, id domain.FileID, order string, at time.Time) (domain.File, error) {
	db := conn(ctx, r.db)
	change, err := nextChange(ctx, db)
	if err != nil {
		return domain.File{}, err
	}
	res, err := tenantOf(db, company).UpdateModel((*fileRow)(nil)).Where("id = ?", uuid.UUID(id)).Where("deleted_at IS NULL").
		Set("device_order_id = ?", order).Set("order_match = 'matched'").Set("version = version + 1").
		Set("change = ?", change).Set("updated_at = ?", at.UTC()).Exec(ctx)
	if err != nil {
		return domain.File{}, translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return domain.File{}, domain.ErrNotFound
	}
	return r.Get(ctx, company, id)
}

func (r *FileRepository) KnownStorageKeys(ctx context.Context, company domain.CompanyID, keys []string) (map[string]bool, error) {
	known := make(map[string]bool, len(keys))
	if len(keys) == 0 {
		return known, nil
	}
	var found []string
	err := tenantOf(conn(ctx, r.db), company).SelectModel((*fileRow)(nil)).Column("storage_key").
		Where("storage_key IN (?)", bun.List(keys)).Scan(ctx, &found)
	if err != nil {
		return nil, translate(err)
	}
	// An export's NDJSON files are named by their job (exports.go).
	var exported []string
	err = tenantOf(conn(ctx, r.db), company).Select("fhir_export_files").Column("name").
		Where("name IN (?)", bun.List(keys)).Scan(ctx, &exported)
	if err != nil {
		return nil, translate(err)
	}
	for _, k := range append(found, exported...) {
		known[k] = true
	}
	return known, nil
}
