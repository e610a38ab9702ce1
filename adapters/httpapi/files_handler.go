package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// FilesSection is the Files section: list, metadata, download with Range,
// and POST files by the upload rules.
type FilesSection struct {
	files ports.Files
	opts  UploadOptions
}

// NewFilesSection serves files.
func NewFilesSection(files ports.Files, opts UploadOptions) *FilesSection {
	return &FilesSection{files: files, opts: opts}
}

func (h *FilesSection) Register(r fiber.Router) {
	read, write := requireScope(domain.ReadScope("files")), requireScope(domain.WriteScope("files"))
	r.Get("/files", read, h.list)
	r.Post("/files", write, httpkit.Streaming, h.upload)
	r.Get("/files/:id", read, h.get)
	r.Get("/files/:id/download", read, httpkit.Streaming, h.download)
}

func (h *FilesSection) list(c *fiber.Ctx) error {
	if c.Request().URI().QueryArgs().Has("ids") {
		return h.batch(c)
	}
	q, err := filesListQuery(c)
	if err != nil {
		return err
	}
	page, err := h.files.List(c.UserContext(), grantOf(c), q)
	if err != nil {
		return err
	}
	data, err := fileViews(page.Files)
	if err != nil {
		return err
	}
	return writePage(c, data, page.Next.Encode(), page.HasMore, nil)
}

// batch answers ?ids= of the Files section as the other sections do.
func (h *FilesSection) batch(c *fiber.Ctx) error {
	var errs domain.FieldErrors
	knownParams(c, []string{"ids"}, "cannot be combined with ids (a read by id is not a page of the feed)", &errs)
	ids, err := domain.ParseIDs(c.Query("ids"), false)
	if fe, ok := domain.AsFieldErrors(err); ok {
		errs = append(errs, fe...)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	found, missing, err := h.files.Batch(c.UserContext(), grantOf(c), ids)
	if err != nil {
		return err
	}
	data, err := fileViews(found)
	if err != nil {
		return err
	}
	return writeBatch(c, data, missing, nil)
}

// fileViews is files as the section answers them, one JSON array.
func fileViews(files []domain.File) ([]byte, error) {
	views := make([]domain.FileView, len(files))
	for i, f := range files {
		views[i] = f.View()
	}
	return json.Marshal(views)
}

func (h *FilesSection) get(c *fiber.Ctx) error {
	f, err := h.files.Get(c.UserContext(), grantOf(c), c.Params("id"))
	if err != nil {
		return err
	}
	if done, err := notModified(c, f.Version); done || err != nil {
		return err
	}
	c.Set(fiber.HeaderETag, domain.ETag(f.Version))
	return c.JSON(f.View())
}

// download streams the bytes: the whole file, or one range of it (206),
// never read whole into memory.
func (h *FilesSection) download(c *fiber.Ctx) error {
	f, err := h.files.Get(c.UserContext(), grantOf(c), c.Params("id"))
	if err != nil {
		return err
	}
	etag := `"` + f.View().SHA256 + `"`
	c.Set(fiber.HeaderContentType, f.ContentType)
	c.Set(fiber.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderETag, etag)
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	if match := c.Get(fiber.HeaderIfNoneMatch); match != "" && match == etag {
		return c.SendStatus(fiber.StatusNotModified)
	}
	offset, length, status := int64(0), f.Size, fiber.StatusOK
	if spec := c.Get(fiber.HeaderRange); spec != "" && (c.Get(fiber.HeaderIfRange) == "" || c.Get(fiber.HeaderIfRange) == etag) {
		start, end, ok := parseRange(spec, f.Size)
		switch {
		case !ok:
			c.Set(fiber.HeaderContentRange, "bytes */"+strconv.FormatInt(f.Size, 10))
			return &problemError{problemDoc{Type: "range-not-satisfiable", Title: http.StatusText(fiber.StatusRequestedRangeNotSatisfiable),
				Status: fiber.StatusRequestedRangeNotSatisfiable, Detail: "the range lies outside the file"}}
		case start >= 0:
			offset, length, status = start, end-start+1, fiber.StatusPartialContent
			c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes %d-%d/%d", start, end, f.Size))
		}
	}
	body, err := h.files.Open(c.UserContext(), grantOf(c), f, offset, length)
	if err != nil {
		return err
	}
	c.Status(status)
	return c.SendStream(body, int(length))
}

// parseRange reads a Range header for a file of size bytes: one range
// (first-last, first-, or -suffix). start is -1 when the header asks for
// something this server answers whole (several ranges, another unit); ok is
// false when the range cannot be satisfied (416).
func parseRange(spec string, size int64) (start, end int64, ok bool) {
	unit, set, found := strings.Cut(spec, "=")
	if !found || strings.TrimSpace(unit) != "bytes" || strings.Contains(set, ",") {
		return -1, -1, true
	}
	first, last, found := strings.Cut(strings.TrimSpace(set), "-")
	if !found {
		return -1, -1, true
	}
	if first == "" { // the last n bytes
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n <= 0 || size == 0 {
			return 0, 0, false
		}
		return max(size-n, 0), size - 1, true
	}
	s, err := strconv.ParseInt(first, 10, 64)
	if err != nil || s < 0 || s >= size {
		return 0, 0, false
	}
	e := size - 1
	if last != "" {
		if e, err = strconv.ParseInt(last, 10, 64); err != nil || e < s {
			return 0, 0, false
		}
		e = min(e, size-1)
	}
	return s, e, true
}

// upload is POST files: the form fields, then the file parts, streamed.
func (h *FilesSection) upload(c *fiber.Ctx) error {
	body := &countingReader{r: io.LimitReader(idleDeadline(c, httpkit.Body(c), h.opts.IdleTimeout), maxUploadBody)}
	defer finishBody(c, body)
	parts, err := newMultipartSource(c.Get(fiber.HeaderContentType), body)
	if err != nil {
		return filesRefusal(err)
	}
	fields, err := parts.formFields()
	if err != nil {
		return filesRefusal(err)
	}
	var errs domain.FieldErrors
	for name := range fields {
		if name != "customer_id" && name != "category" && name != "description" {
			errs.Add(name, "is not a field of this form")
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	form := ports.FileUpload{Customer: fields["customer_id"], Category: fields["category"], Description: fields["description"],
		IdempotencyKey: c.Get("Idempotency-Key")}
	if len(form.IdempotencyKey) > httpkit.MaxIdempotencyKey {
		return httpkit.ErrIdempotencyKeyTooLong
	}
	_, form.HasCategory = fields["category"]
	_, form.HasDescription = fields["description"]
	result, err := h.files.Upload(c.UserContext(), grantOf(c), form, parts)
	if err != nil {
		return filesRefusal(err)
	}
	resp := struct {
		Data    []domain.FileView `json:"data"`
		Skipped []skippedFile     `json:"skipped"`
	}{Data: []domain.FileView{}, Skipped: []skippedFile{}}
	for _, f := range result.Files {
		resp.Data = append(resp.Data, f.View())
	}
	resp.Skipped = toUploadResponse(result).Skipped
	if result.Replayed {
		c.Set("Idempotent-Replayed", "true")
	}
	return c.Status(fiber.StatusCreated).JSON(resp)
}

// filesRefusal answers an upload refusal of POST files in problem+json
// (docs/sections.md §11): 413 a file over 15 MiB, 507 no room, 422 the rest.
func filesRefusal(err error) error {
	var refusal *domain.UploadRefusal
	if !errors.As(err, &refusal) {
		return err
	}
	doc := problemDoc{Type: "validation-error", Status: fiber.StatusUnprocessableEntity, Detail: refusal.Error(),
		Errors: []domain.FieldError{{Field: "file", Message: refusal.Error()}}}
	switch {
	case errors.Is(refusal.Reason, domain.ErrFileTooLarge):
		doc = problemDoc{Type: "payload-too-large", Status: fiber.StatusRequestEntityTooLarge, Detail: refusal.Error()}
	case errors.Is(refusal.Reason, domain.ErrInsufficientStorage):
		doc = problemDoc{Type: "insufficient-storage", Status: fiber.StatusInsufficientStorage, Detail: refusal.Error()}
	}
	doc.Title = http.StatusText(doc.Status)
	return &problemError{doc}
}
