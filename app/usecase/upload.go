// Package usecase holds praxis's use cases: the rules that combine domain
// types with ports. It imports domain and ports, never an adapter.
package usecase

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/audit"
	"github.com/praxis-health/praxis/domain/gdt"
	"github.com/praxis-health/praxis/ports"
)

// Uploads accepts examination results from devices and bridges.
type Uploads struct {
	companies ports.CompanyRepository
	customers ports.CustomerRepository
	files     ports.FileRepository
	keys      ports.IdempotencyStore
	tx        ports.Transactor
	blobs     ports.BlobStore
	sniffer   ports.Sniffer
	audits    *Auditor
	lockout   lockout
	orders    orderMatcher
	clients   ports.ClientRepository
	now       func() time.Time
}

var _ ports.Uploader = (*Uploads)(nil)

// NewUploads wires the upload use case.
func NewUploads(companies ports.CompanyRepository, customers ports.CustomerRepository, files ports.FileRepository, keys ports.IdempotencyStore,
	tx ports.Transactor, blobs ports.BlobStore, sniffer ports.Sniffer, attempts ports.AttemptCounter, policy domain.LockoutPolicy,
	audits *Auditor, records ports.RecordStore, orders ports.DeviceOrderStore, clients ports.ClientRepository,
) *Uploads {
	return &Uploads{
		companies: companies, customers: customers, files: files, keys: keys, tx: tx, blobs: blobs, sniffer: sniffer, audits: audits, clients: clients,
		lockout: lockout{attempts, policy}, orders: orderMatcher{store: records, orders: orders}, now: time.Now,
	}
}

// Authorize runs checks 1 to 4 on the headers alone, before any byte of the body is read.
func (u *Uploads) Authorize(ctx context.Context, cred ports.UploadCredentials) (ports.UploadTarget, error) {
	companyRefused := &domain.UploadRefusal{Reason: domain.ErrCompanyForbidden, Value: cred.Company.Value}
	if cred.Company.Ambiguous {
		return ports.UploadTarget{}, companyRefused
	}
	companyID, err := domain.ParseCompanyID(cred.Company.Value)
	if err != nil {
		return ports.UploadTarget{}, companyRefused
	}
	company, err := u.companies.Get(ctx, companyID)
	if errors.Is(err, domain.ErrNotFound) || err == nil && company.Disabled() {
		return ports.UploadTarget{}, companyRefused
	}
	if err != nil {
		return ports.UploadTarget{}, fmt.Errorf("load company: %w", err)
	}

	// Wrong secrets slow down their source (counted by every replica
	// together); the company's devices elsewhere keep uploading.
	subject := "upload:" + company.ID.String()
	if err := u.lockout.check(ctx, subject, cred.Source); err != nil {
		return ports.UploadTarget{}, err
	}
	device := ""
	if cred.Grant != nil {
		if device, err = u.deviceOf(ctx, company.ID, *cred.Grant); err != nil {
			return ports.UploadTarget{}, err
		}
		if device == "" {
			u.lockout.fail(ctx, subject, cred.Source)
			return ports.UploadTarget{}, domain.Refuse(domain.ErrSecretInvalid)
		}
	} else if cred.Secret.Ambiguous || !company.AcceptsUploadSecret(cred.Secret.Value) {
		u.lockout.fail(ctx, subject, cred.Source)
		return ports.UploadTarget{}, domain.Refuse(domain.ErrSecretInvalid)
	}

	customerRefused := &domain.UploadRefusal{Reason: domain.ErrCustomerNotFound, Value: cred.Customer.Value}
	if cred.Customer.Ambiguous {
		return ports.UploadTarget{}, customerRefused
	}
	customerID, err := domain.ParseCustomerID(cred.Customer.Value)
	if err != nil {
		return ports.UploadTarget{}, customerRefused
	}
	switch _, err := u.customers.Get(ctx, company.ID, customerID); {
	case errors.Is(err, domain.ErrNotFound):
		return ports.UploadTarget{}, customerRefused
	case errors.Is(err, domain.ErrOtherCompany):
		return ports.UploadTarget{}, domain.Refuse(domain.ErrCustomerOfOther)
	case err != nil:
		return ports.UploadTarget{}, fmt.Errorf("load customer: %w", err)
	}
	return ports.UploadTarget{Company: company, Customer: customerID, Device: device}, nil
}

// deviceOf is the device whose live credential grant is, if it is the
// company's; "" for any other token.
func (u *Uploads) deviceOf(ctx context.Context, company domain.CompanyID, grant domain.Grant) (string, error) {
	if grant.CompanyID != company || grant.ClientID == "" {
		return "", nil
	}
	c, err := u.clients.Get(ctx, grant.ClientID)
	if errors.Is(err, domain.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("load client: %w", err)
	}
	return c.DeviceID, nil
}

// Store streams every part to the blob store and then records all of them with
// one atomic storage reservation (checks 5 to 7). It is all or nothing: on any
// error no object written by this call remains and the company's use is unchanged.
func (u *Uploads) Store(ctx context.Context, target ports.UploadTarget, source domain.Source, parts ports.PartSource) (ports.UploadResult, error) {
	// The body streams for as long as the device sends it; its event goes
	// with the write, or in a later batch: none waits for it meanwhile.
	arrive(ctx)
	up := upload{Uploads: u, ctx: ctx, target: target, source: source, free: target.Company.FreeStorage()}
	up.fingerprint = requestHash(target, source)
	if target.IdempotencyKey != "" {
		// A key seen before (with any request): read the body only to tell
		// a retry from another request, and store none of it.
		_, err := u.keys.Find(ctx, target.Company.ID, up.keyScope(), ports.IdempotencyKey{Key: target.IdempotencyKey, Fingerprint: noFingerprint})
		switch {
		case errors.Is(err, domain.ErrIdempotencyKeyReused):
			up.dry = true
		case err != nil:
			return ports.UploadResult{}, err
		}
	}
	result, err := up.run(parts)
	var twin *replayed
	if errors.As(err, &twin) { // a concurrent twin committed first: keep nothing, answer its result
		up.discard()
		return u.replay(ctx, target.Company.ID, twin.saved)
	}
	if err != nil {
		up.discard()
		if errors.Is(err, domain.ErrIdempotencyKeyReused) && target.KeyScope == "" { // the device endpoints answer in their own shape
			return ports.UploadResult{}, domain.Refuse(domain.ErrIdempotencyKeyReused)
		}
		return ports.UploadResult{}, err
	}
	return result, nil
}

// noFingerprint matches no request: Find with it tells whether a key is taken at all.
var noFingerprint = []byte("no request has this fingerprint")

// requestHash starts the fingerprint of an upload with what it is filed
// under; run adds every part's name and bytes as they stream past.
func requestHash(target ports.UploadTarget, source domain.Source) hash.Hash {
	h := sha256.New()
	desc := "\x00none"
	if target.Description != nil {
		desc = *target.Description
	}
	_, _ = fmt.Fprintf(h, "upload\x00%s\x00%d\x00%s\x00%s\x00", source.String(), target.Customer, target.Category, desc)
	return h
}

func (up *upload) keyScope() domain.ClientID {
	if up.target.KeyScope != "" {
		return up.target.KeyScope
	}
	return uploadKeys
}

// key is the request's Idempotency-Key with its fingerprint, once every part is read.
func (up *upload) key() ports.IdempotencyKey {
	return ports.IdempotencyKey{Key: up.target.IdempotencyKey, Fingerprint: up.fingerprint.Sum(nil)}
}

// uploadKeys is the namespace of the upload endpoints' Idempotency-Keys
// beside the OAuth clients' (whose ids start with "pc_").
const uploadKeys domain.ClientID = "upload"

// firstAnswer is what an Idempotency-Key keeps of an upload: its files by id and what it skipped.
type firstAnswer struct {
	Files   []domain.FileID     `json:"files"`
	Skipped []ports.SkippedFile `json:"skipped"`
}

// replayed ends a commit whose key a concurrent twin claimed first.
type replayed struct{ saved *ports.SavedWrite }

func (r *replayed) Error() string { return "idempotency key answered by an earlier request" }

// replay rebuilds the first request's result from the records it made.
func (u *Uploads) replay(ctx context.Context, company domain.CompanyID, saved *ports.SavedWrite) (ports.UploadResult, error) {
	var first firstAnswer
	if err := json.Unmarshal(saved.Value, &first); err != nil {
		return ports.UploadResult{}, fmt.Errorf("saved upload answer: %w", err)
	}
	result := ports.UploadResult{Skipped: first.Skipped, Replayed: true}
	for _, id := range first.Files {
		f, err := u.files.Get(ctx, company, id)
		if err != nil {
			return ports.UploadResult{}, fmt.Errorf("file of the saved upload answer: %w", err)
		}
		result.Files = append(result.Files, f)
	}
	return result, nil
}

// upload is the state of one Store call.
type upload struct {
	*Uploads
	ctx       context.Context
	target    ports.UploadTarget
	source    domain.Source
	free      int64 // the company's free storage when the request began
	total     int64 // bytes of the files kept so far
	kept      []domain.File
	skipped   []ports.SkippedFile
	overQuota bool
	buf       []byte
	// fingerprint hashes what the request asks: its target and every part's
	// name and bytes. dry reads the parts into it only: the key was used before.
	fingerprint hash.Hash
	dry         bool
}

func (up *upload) run(parts ports.PartSource) (ports.UploadResult, error) {
	up.buf = make([]byte, 32<<10)
	seen, nonEmpty := 0, false
	for {
		part, err := parts.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ports.UploadResult{}, malformed(err)
		}
		if seen++; seen > domain.MaxFilesPerUpload {
			return ports.UploadResult{}, domain.Refuse(domain.ErrTooManyFiles)
		}
		_, _ = fmt.Fprintf(up.fingerprint, "part\x00%s\x00", part.FileName)
		part.Body = io.TeeReader(part.Body, up.fingerprint)
		var empty bool
		if up.dry {
			empty, err = up.measure(part)
		} else {
			empty, err = up.take(part)
		}
		if err != nil {
			return ports.UploadResult{}, err
		}
		nonEmpty = nonEmpty || !empty
	}
	if up.dry { // the key's first request answers, if this is a retry of it
		saved, err := up.keys.Find(up.ctx, up.target.Company.ID, up.keyScope(), up.key())
		if err != nil {
			return ports.UploadResult{}, err
		}
		if saved == nil { // the first request's key ran out of its window while this body was read: a retry is new
			return ports.UploadResult{}, fmt.Errorf("%w: the Idempotency-Key's first request expired while this one was read", domain.ErrUnavailable)
		}
		return ports.UploadResult{}, &replayed{saved: saved}
	}
	switch {
	// Check 5: no part with content, or none of an accepted format.
	case !nonEmpty, len(up.kept) == 0 && !up.overQuota:
		return ports.UploadResult{}, domain.Refuse(domain.ErrNoFile)
	// Check 7, early: the files cannot fit the free storage seen at the start.
	case up.overQuota:
		return ports.UploadResult{}, domain.Refuse(domain.ErrInsufficientStorage)
	}
	domain.LinkReferencedFiles(up.kept)
	if err := up.commit(); err != nil {
		return ports.UploadResult{}, err
	}
	return ports.UploadResult{Files: up.kept, Skipped: up.skipped}, nil
}

// measure reads a part of a request that only needs its fingerprint.
func (up *upload) measure(part ports.Part) (empty bool, err error) {
	n, err := io.CopyBuffer(io.Discard, io.LimitReader(part.Body, domain.MaxFileSize+1), up.buf)
	if err != nil {
		return false, malformed(err)
	}
	if n > domain.MaxFileSize {
		return false, domain.Refuse(domain.ErrFileTooLarge)
	}
	return n == 0, nil
}

// take reads one part: sniffs its head, then streams it to the blob store,
// or only measures it when it will not be kept.
func (up *upload) take(part ports.Part) (empty bool, err error) {
	body := &readErrorReader{r: part.Body}
	head := make([]byte, domain.SniffBytes)
	n, err := io.ReadFull(body, head)
	switch {
	case errors.Is(err, io.EOF):
		return true, nil
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return false, malformed(err)
	}
	head = head[:n]
	name := domain.CleanFileName(part.FileName)
	contentType := up.sniffer.Sniff(head)
	rest := io.LimitReader(body, domain.MaxFileSize+1-int64(n))

	if !domain.AcceptedContentType(contentType) || up.overQuota {
		size, err := io.CopyBuffer(io.Discard, rest, up.buf)
		if err != nil {
			return false, malformed(err)
		}
		if int64(n)+size > domain.MaxFileSize {
			return false, domain.Refuse(domain.ErrFileTooLarge)
		}
		if !up.overQuota {
			up.skipped = append(up.skipped, ports.SkippedFile{Name: name, ContentType: contentType})
		}
		return false, nil
	}

	id := domain.NewFileID()
	w, err := up.blobs.NewWriter(up.ctx, up.target.Company.ID, id.String(), contentType)
	if err != nil {
		return false, fmt.Errorf("open blob: %w", err)
	}
	hash := sha256.New()
	out := io.MultiWriter(w, hash)
	var parsed *boundedBuffer // a GDT file's first MiB, read for its metadata
	var patients *gdt.PatientCheck
	if contentType == gdtContentType {
		parsed = &boundedBuffer{limit: gdtParseLimit}
		patients = gdt.NewPatientCheck(int64(up.target.Customer))
		out = io.MultiWriter(w, hash, parsed, patients)
	}
	if _, err := out.Write(head); err != nil {
		w.Abort()
		return false, fmt.Errorf("write blob: %w", err)
	}
	size, err := io.CopyBuffer(out, rest, up.buf)
	size += int64(n)
	switch {
	case body.err != nil:
		w.Abort()
		return false, malformed(body.err)
	case err != nil:
		w.Abort()
		return false, fmt.Errorf("write blob: %w", err)
	case size > domain.MaxFileSize:
		w.Abort()
		return false, domain.Refuse(domain.ErrFileTooLarge)
	case up.total+size > up.free:
		// Keep reading the other parts for a too-large file, which is refused
		// first, but write nothing more of a request that cannot fit.
		w.Abort()
		up.overQuota = true
		return false, nil
	}
	var info *gdt.Info
	if parsed != nil {
		// Patient safety: a result of which any record names another patient
		// is refused whole, before a byte of it is kept (docs/contract.md §7). The
		// check read every line of the part, not only the parsed start.
		if other, found := patients.OtherPatient(); found {
			w.Abort()
			return false, &domain.UploadRefusal{Reason: domain.ErrPatientMismatch, Value: other}
		}
		info = gdt.Parse(parsed.Bytes()).Info(up.zone())
	}
	if err := w.Commit(); err != nil {
		return false, fmt.Errorf("commit blob: %w", err)
	}
	now := up.now().UTC()
	up.total += size
	up.kept = append(up.kept, domain.File{
		ID: id, CompanyID: up.target.Company.ID, CustomerID: up.target.Customer,
		Name: name, ContentType: contentType, Size: size, SHA256: hash.Sum(nil),
		StorageKey: id.String(), Source: up.source, Category: up.target.Category, Description: up.target.Description,
		GDT: info, Version: 1, CreatedAt: now, UpdatedAt: now,
	})
	return false, nil
}

// commit reserves the storage and records the files in one transaction,
// with the Idempotency-Key if one came: a twin that claimed it first wins.
func (up *upload) commit() error {
	err := up.tx.InTx(up.ctx, func(ctx context.Context) error {
		key := up.key()
		if key.Key != "" {
			saved, err := up.keys.Claim(ctx, up.target.Company.ID, up.keyScope(), key, up.now())
			if err != nil {
				return err
			}
			if saved != nil {
				return &replayed{saved: saved}
			}
		}
		if err := up.companies.ReserveStorage(ctx, up.target.Company.ID, up.total); err != nil {
			return err
		}
		if err := up.orders.match(ctx, up.target.Company.ID, up.target.Device, up.kept, up.now()); err != nil {
			return err
		}
		if err := up.files.Create(ctx, up.kept...); err != nil {
			return err
		}
		audit.Touch(ctx, up.target.Customer)
		outcome := domain.OutcomeOK // the upload doors
		if up.source == domain.SourceAPI {
			outcome = domain.OutcomeCreated
		}
		if err := up.audits.inTx(ctx, up.target.Company.ID, outcome); err != nil {
			return err
		}
		if key.Key == "" {
			return nil
		}
		first := firstAnswer{Files: make([]domain.FileID, len(up.kept)), Skipped: up.skipped}
		for i, f := range up.kept {
			first.Files[i] = f.ID
		}
		body, err := json.Marshal(first)
		if err != nil {
			return err
		}
		return up.keys.Save(ctx, up.target.Company.ID, up.keyScope(), key, ports.SavedWrite{Outcome: domain.OutcomeOK, Value: body})
	})
	var twin *replayed
	if errors.As(err, &twin) || errors.Is(err, domain.ErrIdempotencyKeyReused) {
		return err
	}
	if errors.Is(err, domain.ErrInsufficientStorage) {
		return domain.Refuse(domain.ErrInsufficientStorage)
	}
	if err != nil {
		return fmt.Errorf("record upload: %w", err)
	}
	return nil
}

// discard deletes the objects of a failed request, even when its context has ended.
func (up *upload) discard() {
	ctx := context.WithoutCancel(up.ctx)
	for _, f := range up.kept {
		_ = up.blobs.Delete(ctx, up.target.Company.ID, f.StorageKey)
	}
}

// gdtContentType is the sniffer's name for GDT; gdtParseLimit is how much of
// a GDT part is kept for reading its fields (results are a few kilobytes; the
// patient and the examination stand at the top of a longer file).
const (
	gdtContentType = "application/gdt"
	gdtParseLimit  = 1 << 20
)

// boundedBuffer keeps the first limit bytes written to it and drops the rest.
type boundedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// zone is the company's time zone, in which GDT examination times are read.
func (up *upload) zone() *time.Location {
	if loc, err := up.target.Company.Location(); err == nil {
		return loc
	}
	return time.UTC
}

func malformed(err error) error {
	return fmt.Errorf("%w: %w", domain.Refuse(domain.ErrMalformedUpload), err)
}

// readErrorReader remembers a read error, to tell a client that went away
// from a blob store that failed during the same copy.
type readErrorReader struct {
	r   io.Reader
	err error
}

func (r *readErrorReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return n, err
}
