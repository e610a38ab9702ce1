// Package blobstore keeps file bytes in a gocloud.dev/blob bucket: file://,
// mem:// or s3:// as PRAXIS_BLOB_URL names it.
package blobstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file://
	_ "gocloud.dev/blob/memblob"  // mem://
	_ "gocloud.dev/blob/s3blob"   // s3://
	"gocloud.dev/gcerrors"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// writeBuffer turns the small reads a multipart body yields (4 KiB) into
// large writes: fewer syscalls on local disk, fewer calls into S3's uploader.
const writeBuffer = 256 << 10

// s3PartSize is the part size of a multipart upload on S3. The AWS SDK's
// transfer manager (under gocloud.dev) first reads up to 16 MiB to decide
// between one PUT and parts, so an upload of a file (at most 15 MiB) holds
// that file in memory once; larger objects go up in parts of this size.
const s3PartSize = 5 << 20

// Store is the gocloud.dev ports.BlobStore.
type Store struct {
	bucket *blob.Bucket
	// root is the directory of a file:// bucket, whose entries Commit makes
	// durable; empty for other buckets.
	root   string
	tracer trace.Tracer
	// s3 is the client of an s3:// bucket, which cleans up after an
	// aborted multipart upload; nil for other buckets.
	s3       *s3.Client
	s3Bucket string
}

var _ ports.BlobStore = (*Store)(nil)

// Open opens the bucket of url.
func Open(ctx context.Context, url string) (*Store, error) {
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	s := New(b)
	if rest, ok := strings.CutPrefix(url, "file://"); ok {
		s.root, _, _ = strings.Cut(rest, "?")
	}
	var client *s3.Client
	if rest, ok := strings.CutPrefix(url, "s3://"); ok && b.As(&client) {
		s.s3 = client
		s.s3Bucket, _, _ = strings.Cut(rest, "?")
	}
	return s, nil
}

// New wraps an open bucket.
func New(b *blob.Bucket) *Store {
	return &Store{bucket: b, tracer: tracenoop.NewTracerProvider().Tracer("")}
}

// Trace makes every write, read and delete a span of tp: company id, size
// and outcome, never a file name.
func (s *Store) Trace(tp trace.TracerProvider) {
	s.tracer = tp.Tracer("github.com/praxis-health/praxis/adapters/blobstore")
}

func (s *Store) span(ctx context.Context, name string, company domain.CompanyID) (context.Context, trace.Span) {
	return s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("praxis.company_id", company.String())))
}

// end closes a span, marking it failed when err is.
func end(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

// Close releases the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// key prefixes every object with its company: a name never reaches across.
func key(company domain.CompanyID, name string) (string, error) {
	if company.IsZero() || name == "" || strings.Contains(name, "/") || strings.Contains(name, "..") {
		return "", fmt.Errorf("blob name %q: %w", name, domain.ErrInvalid)
	}
	return company.String() + "/" + name, nil
}

func (s *Store) NewWriter(ctx context.Context, company domain.CompanyID, name, contentType string) (ports.BlobWriter, error) {
	k, err := key(company, name)
	if err != nil {
		return nil, err
	}
	ctx, span := s.span(ctx, "blob.write", company)
	// Cancelling this context before Close is how gocloud aborts a write.
	ctx, cancel := context.WithCancel(ctx)
	w := &writer{cancel: cancel, span: span, key: k, store: s}
	if s.root != "" {
		w.dirs = []string{filepath.Join(s.root, company.String()), s.root}
	}
	bw, err := s.bucket.NewWriter(ctx, k, &blob.WriterOptions{
		ContentType:    contentType,
		BufferSize:     s3PartSize,
		MaxConcurrency: 1,
		BeforeWrite: func(as func(any) bool) error {
			as(&w.file) // file:// only: lets Commit fsync before the rename
			return nil
		},
	})
	if err != nil {
		cancel()
		end(span, err)
		return nil, classify(err)
	}
	w.w = bw
	w.buf = bufio.NewWriterSize(bw, writeBuffer)
	return w, nil
}

type writer struct {
	w      *blob.Writer
	buf    *bufio.Writer
	file   *os.File
	dirs   []string // directories whose entries change when the object appears
	cancel context.CancelFunc
	key    string
	store  *Store
	failed error
	span   trace.Span
	size   int64
}

func (w *writer) Write(p []byte) (int, error) {
	n, err := w.buf.Write(p)
	w.size += int64(n)
	if err != nil {
		w.failed = classify(err)
	}
	return n, w.failed
}

// Commit makes the object durable: on local disk the bytes reach the device
// before the file appears under its name, so a 200 means the upload survives a crash.
func (w *writer) Commit() (err error) {
	defer w.cancel()
	defer func() {
		w.span.SetAttributes(attribute.Int64("praxis.blob.size", w.size), attribute.Bool("praxis.blob.committed", err == nil))
		end(w.span, err)
	}()
	if w.failed == nil {
		w.failed = classify(w.buf.Flush())
	}
	if w.failed != nil {
		w.abort()
		return w.failed
	}
	if w.file != nil {
		if err := w.file.Sync(); err != nil {
			w.abort()
			return classify(fmt.Errorf("sync blob: %w", err))
		}
	}
	if err := w.w.Close(); err != nil {
		return classify(err)
	}
	// The rename lives in the directory: without syncing it, a crash could
	// lose a file the client was already told is stored.
	for _, dir := range w.dirs {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("sync blob directory: %w", err)
		}
	}
	return nil
}

// freeBytes is what the file system of dir still has for unprivileged writes.
func freeBytes(dir string) (int64, error) {
	free, _, err := space(dir)
	return free, err
}

// space is what the file system of dir still has for unprivileged writes,
// and its size.
func space(dir string) (free, size int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	//nolint:gosec // block counts of a real file system fit int64
	return int64(st.Bavail) * st.Bsize, int64(st.Blocks) * st.Bsize, nil
}

// Space answers the free and the whole bytes of a file:// store's file
// system, for the metrics; ok is false for an object store, which has no
// such bound.
func (s *Store) Space() (free, size int64, ok bool, err error) {
	if s.root == "" {
		return 0, 0, false, nil
	}
	free, size, err = space(s.root)
	return free, size, true, err
}

// classify translates a blob store failure once: a full disk is
// domain.ErrStorageFull (507), a store that cannot be reached or answers
// "later" is domain.ErrUnavailable (503).
func classify(err error) error {
	switch {
	case err == nil, errors.Is(err, domain.ErrStorageFull), errors.Is(err, domain.ErrUnavailable):
		return err
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("%w: %w", domain.ErrStorageFull, err)
	}
	switch gcerrors.Code(err) {
	case gcerrors.DeadlineExceeded, gcerrors.ResourceExhausted:
		return domain.Unavailable(err)
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return domain.Unavailable(err)
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir) // #nosec G304 -- the bucket's own directory
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

func (w *writer) Abort() {
	w.abort()
	w.span.SetAttributes(attribute.Int64("praxis.blob.size", w.size), attribute.Bool("praxis.blob.committed", false))
	w.span.End()
}

func (w *writer) abort() {
	w.cancel()
	_ = w.w.Close() // with the context cancelled, Close discards the object
	w.store.abortParts(w.key)
}

// abortParts ends the multipart uploads of key that an aborted write left on
// an S3 server: the SDK's own abort runs on the cancelled context and never
// reaches the server, so the parts would stay (and be billed) until a
// lifecycle rule removes them.
func (s *Store) abortParts(key string) {
	if s.s3 == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bucket := s.s3Bucket
	out, err := s.s3.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket, Prefix: &key})
	if err != nil {
		return // best effort: the lifecycle rule of the README is the backstop
	}
	for _, u := range out.Uploads {
		if u.Key != nil && *u.Key == key {
			_, _ = s.s3.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: u.Key, UploadId: u.UploadId})
		}
	}
}

func (s *Store) Open(ctx context.Context, company domain.CompanyID, name string, offset, length int64) (io.ReadCloser, error) {
	k, err := key(company, name)
	if err != nil {
		return nil, err
	}
	ctx, span := s.span(ctx, "blob.open", company)
	r, err := s.bucket.NewRangeReader(ctx, k, offset, length, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		span.End()
		return nil, domain.ErrNotFound
	}
	end(span, err)
	if err != nil {
		return nil, classify(err)
	}
	var inner io.Reader
	if r.As(&inner) {
		switch inner.(type) {
		case *os.File, *io.LimitedReader:
			return localReader{Reader: r, file: inner}, nil
		}
	}
	return r, nil
}

// localReader is a file:// object. Its WriteTo hands the local file (or a
// limited reader over it) to the writer, so that a TCP connection sends it
// with sendfile instead of copying it through user space.
type localReader struct {
	*blob.Reader
	file io.Reader
}

func (l localReader) WriteTo(w io.Writer) (int64, error) { return io.Copy(w, l.file) }

func (s *Store) Delete(ctx context.Context, company domain.CompanyID, name string) error {
	k, err := key(company, name)
	if err != nil {
		return err
	}
	ctx, span := s.span(ctx, "blob.delete", company)
	err = s.bucket.Delete(ctx, k)
	if gcerrors.Code(err) == gcerrors.NotFound {
		err = nil
	}
	end(span, err)
	return err
}

func (s *Store) Walk(ctx context.Context, company domain.CompanyID, fn func(ports.BlobInfo) error) error {
	if company.IsZero() {
		return fmt.Errorf("walk: %w", domain.ErrInvalid)
	}
	prefix := company.String() + "/"
	iter := s.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := iter.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.IsDir {
			continue
		}
		if err := fn(ports.BlobInfo{Name: strings.TrimPrefix(obj.Key, prefix), Size: obj.Size, ModTime: obj.ModTime}); err != nil {
			return err
		}
	}
}

// HealthCheck asks the bucket for /readyz.
type HealthCheck struct {
	Store *Store
	// MinFree is the free space a file:// store needs to take uploads (15 MiB
	// a file, 20 a request): below it the replica reports itself not ready.
	MinFree int64
}

func (HealthCheck) Name() string { return "blob_store" }

func (h HealthCheck) Check(ctx context.Context) error {
	ok, err := h.Store.bucket.IsAccessible(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("bucket not accessible")
	}
	if h.Store.root == "" || h.MinFree <= 0 {
		return nil
	}
	free, err := freeBytes(h.Store.root)
	if err != nil {
		return err
	}
	if free < h.MinFree {
		return fmt.Errorf("%w: %d bytes free, %d needed", ports.ErrLowDisk, free, h.MinFree)
	}
	return nil
}
