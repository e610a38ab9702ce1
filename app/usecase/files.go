package usecase

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/ports"
)

// Files serves the Files section: the company's files, their bytes, and
// uploads through the API by the same rules as the device endpoints.
type Files struct {
	files     ports.FileRepository
	blobs     ports.BlobStore
	companies ports.CompanyRepository
	customers ports.CustomerRepository
	uploads   *Uploads
}

var _ ports.Files = (*Files)(nil)

// NewFiles wires the Files section on the upload use case.
func NewFiles(files ports.FileRepository, blobs ports.BlobStore, companies ports.CompanyRepository, customers ports.CustomerRepository,
	uploads *Uploads) *Files {
	return &Files{files: files, blobs: blobs, companies: companies, customers: customers, uploads: uploads}
}

// filesSection is the files' section, whose scopes hold its reads and writes.
const filesSection = "files"

func (f *Files) List(ctx context.Context, grant domain.Grant, q domain.ListQuery) (ports.FilePage, error) {
	if err := grant.Require(domain.ReadScope(filesSection)); err != nil {
		return ports.FilePage{}, err
	}
	page, err := f.files.List(ctx, grant.CompanyID, q)
	for _, file := range page.Files {
		audit.Touch(ctx, file.CustomerID)
	}
	return page, err
}

// Batch answers the company's files among ids (ids= of the Files
// section) in the order asked, and the ids found nowhere in the company.
func (f *Files) Batch(ctx context.Context, grant domain.Grant, ids []string) ([]domain.File, []string, error) {
	if err := grant.Require(domain.ReadScope(filesSection)); err != nil {
		return nil, nil, err
	}
	keys := make([]domain.FileID, 0, len(ids))
	for _, id := range ids {
		if fid, err := domain.ParseFileID(id); err == nil {
			keys = append(keys, fid)
		}
	}
	many, err := f.files.Many(ctx, grant.CompanyID, keys)
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[string]domain.File, len(many))
	for _, file := range many {
		byID[file.ID.String()] = file
	}
	found, missing := make([]domain.File, 0, len(many)), []string{}
	for _, id := range ids {
		file, ok := byID[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		audit.Touch(ctx, file.CustomerID)
		found = append(found, file)
	}
	return found, missing, nil
}

func (f *Files) Get(ctx context.Context, grant domain.Grant, id string) (domain.File, error) {
	if err := grant.Require(domain.ReadScope(filesSection)); err != nil {
		return domain.File{}, err
	}
	fid, err := domain.ParseFileID(id)
	if err != nil || !domain.ValidObjectID(id) {
		return domain.File{}, domain.ErrNotFound
	}
	file, err := f.files.Get(ctx, grant.CompanyID, fid)
	if err == nil {
		audit.Touch(ctx, file.CustomerID)
	}
	return file, err
}

func (f *Files) Open(ctx context.Context, grant domain.Grant, file domain.File, offset, length int64) (io.ReadCloser, error) {
	if err := grant.Require(domain.ReadScope(filesSection)); err != nil {
		return nil, err
	}
	if file.CompanyID != grant.CompanyID {
		return nil, domain.ErrNotFound
	}
	return f.blobs.Open(ctx, grant.CompanyID, file.StorageKey, offset, length)
}

// Upload checks the form (every field error at once, 422), then stores the
// parts all or nothing: 15 MiB a file, sniffed formats, the quota reserved atomically.
func (f *Files) Upload(ctx context.Context, grant domain.Grant, form ports.FileUpload, parts ports.PartSource) (ports.UploadResult, error) {
	if err := grant.Require(domain.WriteScope(filesSection)); err != nil {
		return ports.UploadResult{}, err
	}
	company, err := f.companies.Get(ctx, grant.CompanyID)
	if err != nil {
		return ports.UploadResult{}, err
	}
	var errs domain.FieldErrors
	target := ports.UploadTarget{Company: company, Category: "other"}
	id, ok := domain.ParseCustomerPathID(form.Customer)
	switch _, err := f.customers.Get(ctx, company.ID, id); {
	case !ok || errors.Is(err, domain.ErrNotFound) || errors.Is(err, domain.ErrOtherCompany):
		errs.Add("customer_id", "names no customer of this company")
	case err != nil:
		return ports.UploadResult{}, fmt.Errorf("load customer: %w", err)
	}
	target.Customer = id
	if form.HasCategory {
		if !slices.Contains(domain.FileCategories, form.Category) {
			errs.Add("category", "must be one of "+strings.Join(domain.FileCategories, ", "))
		}
		target.Category = form.Category
	}
	if form.HasDescription && form.Description != "" {
		if utf8.RuneCountInString(form.Description) > 500 || strings.ContainsFunc(form.Description, unicode.IsControl) {
			errs.Add("description", "must be one line of at most 500 characters")
		}
		target.Description = &form.Description
	}
	if err := errs.Err(); err != nil {
		return ports.UploadResult{}, err
	}
	target.IdempotencyKey, target.KeyScope = form.IdempotencyKey, grant.ClientID
	return f.uploads.Store(ctx, target, domain.SourceAPI, parts)
}
