package httpapi

import (
	"bufio"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/gdt"
	"github.com/praxis-health/praxis/ports"
)

// maxUploadBody bounds what one upload request may send: 20 files at the
// limit plus room for part headers and form fields.
const maxUploadBody = domain.MaxFilesPerUpload*domain.MaxFileSize + 4<<20

// readBuffer lets the multipart reader, which asks for 4 KiB at a time, pull
// the socket in large reads; it is per upload, not per keep-alive connection.
const readBuffer = 256 << 10

// UploadOptions tune the upload endpoints.
type UploadOptions struct {
	// IdleTimeout ends an upload whose client sends nothing for this long
	// (zero: only the server's read timeout applies).
	IdleTimeout time.Duration
	// TrustedProxies may tell the client's address in X-Forwarded-For.
	TrustedProxies []netip.Prefix
}

// Uploads serves POST /api/gdt/upload and POST /api/sonogdt/upload.
type Uploads struct {
	uploader ports.Uploader
	auth     ports.Authorizer
	door     httpkit.AuditDoor
	opts     UploadOptions
	bytes    metric.Int64Counter
	files    metric.Int64Counter
	refused  metric.Int64Counter
}

// NewUploads serves the uploader.
func NewUploads(uploader ports.Uploader, auth ports.Authorizer, auditor ports.Auditor, opts UploadOptions, tel httpkit.Telemetry) *Uploads {
	meter := tel.WithDefaults().Meter.Meter(instrumentation)
	return &Uploads{uploader: uploader, auth: auth, door: newAuditDoor(auditor, opts.TrustedProxies, tel), opts: opts,
		bytes: httpkit.Must(meter.Int64Counter("praxis.upload.bytes", metric.WithUnit("By"),
			metric.WithDescription("Bytes of files stored by the upload endpoints"))),
		files: httpkit.Must(meter.Int64Counter("praxis.upload.files",
			metric.WithDescription("Files stored by the upload endpoints"))),
		refused: httpkit.Must(meter.Int64Counter("praxis.upload.refused",
			metric.WithDescription("Upload requests refused, by reason"))),
	}
}

func (h *Uploads) Register(app fiber.Router) {
	for _, source := range []domain.Source{domain.SourceGDT, domain.SourceSonoGDT} {
		app.Post("/api/"+source.String()+"/upload", httpkit.Streaming, h.door.Audited(uploadSubject(source)), h.handle(source))
	}
}

type uploadedFile struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Size           int64     `json:"size"`
	ContentType    string    `json:"content_type"`
	SHA256         string    `json:"sha256"`
	GDT            *gdt.Info `json:"gdt"`
	RelatedFileIDs []string  `json:"related_file_ids"`
	DeviceOrderID  *string   `json:"device_order_id"`
	OrderMatch     *string   `json:"order_match"`
}

type skippedFile struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Reason      string `json:"reason"`
}

type uploadResponse struct {
	Status  string         `json:"status"`
	Files   []uploadedFile `json:"files"`
	Skipped []skippedFile  `json:"skipped"`
}

func (h *Uploads) handle(source domain.Source) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := h.upload(c, source)
		ctx := context.WithoutCancel(c.UserContext())
		var refusal *domain.UploadRefusal
		var tooMany *domain.TooManyAttempts
		switch {
		case errors.As(err, &refusal):
			h.refused.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", refusal.Code())))
		case errors.As(err, &tooMany):
			h.refused.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", "locked_out")))
		}
		return err
	}
}

func (h *Uploads) upload(c *fiber.Ctx, source domain.Source) error {
	body := &countingReader{r: io.LimitReader(idleDeadline(c, httpkit.Body(c), h.opts.IdleTimeout), maxUploadBody)}
	// Whatever happens, the client gets its answer: the rest of its body is
	// read (up to the limit), or the connection closes after the response.
	defer finishBody(c, body)

	ctx := c.UserContext()
	cred := ports.UploadCredentials{
		Company:  uploadHeader(c, "company"),
		Customer: uploadHeader(c, "customer"),
		Secret:   uploadHeader(c, "secret"),
		Source:   httpkit.ClientAddress(c, h.opts.TrustedProxies),
	}
	// A device's own credential (docs/contract.md §14) stands for the
	// company and its secret; a token that is not live is a wrong secret.
	if token, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer "); ok && h.auth != nil {
		grant, _, err := h.auth.Authenticate(ctx, strings.TrimSpace(token))
		switch {
		case err == nil:
			cred.Grant = &grant
		case errors.Is(err, domain.ErrNotFound):
			cred.Grant = &domain.Grant{}
		default:
			return err
		}
	}
	target, err := h.uploader.Authorize(ctx, cred)
	if err != nil {
		return err
	}
	// Only an authorised request gets the large read buffer.
	parts, err := newMultipartSource(c.Get(fiber.HeaderContentType), body)
	if err != nil {
		return err
	}
	// A device that retries after a lost answer sends the same key: it gets
	// the first answer, and nothing is stored or charged twice.
	target.IdempotencyKey = c.Get("Idempotency-Key")
	if len(target.IdempotencyKey) > httpkit.MaxIdempotencyKey {
		return domain.Refuse(domain.ErrIdempotencyKeyTooLong)
	}
	result, err := h.uploader.Store(ctx, target, source, parts)
	if err != nil {
		return err
	}
	if result.Replayed {
		c.Set("Idempotent-Replayed", "true")
		return c.Status(fiber.StatusOK).JSON(toUploadResponse(result), fiber.MIMEApplicationJSONCharsetUTF8)
	}
	bySource := metric.WithAttributes(attribute.String("source", source.String()))
	for _, f := range result.Files {
		h.bytes.Add(ctx, f.Size, bySource)
	}
	h.files.Add(ctx, int64(len(result.Files)), bySource)
	return c.Status(fiber.StatusOK).JSON(toUploadResponse(result), fiber.MIMEApplicationJSONCharsetUTF8)
}

func toUploadResponse(r ports.UploadResult) uploadResponse {
	resp := uploadResponse{Status: "success", Files: []uploadedFile{}, Skipped: []skippedFile{}}
	for _, f := range r.Files {
		v := f.View()
		resp.Files = append(resp.Files, uploadedFile{
			ID: v.ID, Name: v.Name, Size: v.Size, ContentType: v.ContentType, SHA256: v.SHA256, GDT: v.GDT, RelatedFileIDs: v.RelatedFileIDs,
			DeviceOrderID: v.DeviceOrderID, OrderMatch: v.OrderMatch,
		})
	}
	for _, s := range r.Skipped {
		resp.Skipped = append(resp.Skipped, skippedFile{Name: s.Name, ContentType: s.ContentType, Reason: "unsupported_format"})
	}
	return resp
}

// uploadHeader reads one of the three headers under either prefix. Values
// that disagree (under both prefixes, or repeated) make the header ambiguous.
func uploadHeader(c *fiber.Ctx, name string) ports.Header {
	var h ports.Header
	seen := false
	for _, prefix := range []string{"x-gdt-", "x-sonogdt-"} {
		for _, v := range c.Request().Header.PeekAll(prefix + name) {
			value := strings.TrimSpace(string(v))
			switch {
			case !seen:
				h.Value, seen = value, true
			case value != h.Value:
				h.Ambiguous = true
			}
		}
	}
	return h
}

// finishBody reads what the handler left of the body, so that the response is
// not lost to a reset connection; past the limit the connection closes.
func finishBody(c *fiber.Ctx, body *countingReader) {
	if _, err := io.Copy(io.Discard, body); err != nil || body.n >= maxUploadBody {
		c.Context().SetConnectionClose()
	}
}

// idleDeadline makes reads of the body fail once the client has sent nothing
// for idle, so that a stalled device frees its request (and its open blob
// writer) long before the server's read timeout; that timeout stays the cap.
func idleDeadline(c *fiber.Ctx, r io.Reader, idle time.Duration) io.Reader {
	conn := c.Context().Conn()
	if idle <= 0 || conn == nil {
		return r
	}
	limit := c.Context().Time().Add(c.App().Config().ReadTimeout)
	return &deadlineReader{r: r, conn: conn, idle: idle, limit: limit}
}

type deadlineReader struct {
	r     io.Reader
	conn  net.Conn
	idle  time.Duration
	limit time.Time
	set   time.Time // when the deadline was last moved
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	// Moving the deadline at most every 100 ms keeps this off the per-read path.
	if now := time.Now(); now.Sub(d.set) > 100*time.Millisecond {
		deadline := now.Add(d.idle)
		if deadline.After(d.limit) {
			deadline = d.limit
		}
		_ = d.conn.SetReadDeadline(deadline)
		d.set = now
	}
	return d.r.Read(p)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	return n, err
}

// maxFormField bounds one form field of POST files.
const maxFormField = 4 << 10

// formFields reads the form fields that precede the first file part (POST
// files sends customer_id, category, description first), keeping that part
// for Next: the body is read once, as a stream.
func (s *multipartSource) formFields() (map[string]string, error) {
	fields := map[string]string{}
	for {
		p, err := s.reader.NextPart()
		if errors.Is(err, io.EOF) || err != nil && s.body.n == 0 {
			return fields, nil
		}
		if err != nil {
			return nil, domain.Refuse(domain.ErrMalformedUpload)
		}
		name := p.FormName()
		if name == "file" || name == "file[]" {
			s.pending = p
			return fields, nil
		}
		value, err := io.ReadAll(io.LimitReader(p, maxFormField+1))
		if err != nil || len(value) > maxFormField {
			return nil, domain.Refuse(domain.ErrMalformedUpload)
		}
		if _, dup := fields[name]; dup {
			return nil, domain.FieldErrors{{Field: name, Message: "is given more than once"}}.Err()
		}
		fields[name] = string(value)
	}
}

// multipartSource yields the `file` (or `file[]`) parts of a multipart body;
// other form fields are skipped.
type multipartSource struct {
	body    *countingReader
	reader  *multipart.Reader
	pending *multipart.Part // a file part read ahead by formFields
}

func newMultipartSource(contentType string, body *countingReader) (*multipartSource, error) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "multipart/form-data" {
		return nil, domain.Refuse(domain.ErrNoFile)
	}
	boundary := params["boundary"]
	if boundary == "" || len(boundary) > 70 {
		return nil, domain.Refuse(domain.ErrMalformedUpload)
	}
	return &multipartSource{body: body, reader: multipart.NewReader(bufio.NewReaderSize(body, readBuffer), boundary)}, nil
}

func (s *multipartSource) Next() (ports.Part, error) {
	if p := s.pending; p != nil {
		s.pending = nil
		return ports.Part{FileName: p.FileName(), Body: p}, nil
	}
	for {
		p, err := s.reader.NextPart()
		if err != nil {
			if s.body.n == 0 {
				return ports.Part{}, io.EOF // an empty body has no file
			}
			if errors.Is(err, io.EOF) {
				return ports.Part{}, io.EOF
			}
			return ports.Part{}, err
		}
		if name := p.FormName(); name == "file" || name == "file[]" {
			return ports.Part{FileName: p.FileName(), Body: p}, nil
		}
	}
}
