package httpkit

import (
	"io"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The request body, as both doors read it. The server streams request
// bodies (the uploads need it), so fasthttp enforces no limit itself:
// whatever a door reads whole it reads through ReadBody, with its bound.

// ErrBodyTooLarge answers a body past the door's bound (413); the API
// names it payload-too-large.
var ErrBodyTooLarge = fiber.NewError(fiber.StatusRequestEntityTooLarge, "request body too large")

// ErrBodyUnreadable answers a body the connection broke off (400).
var ErrBodyUnreadable = fiber.NewError(fiber.StatusBadRequest, "the request body could not be read")

// ReadBody reads the body whole, up to limit bytes; a longer one is
// ErrBodyTooLarge, and the connection closes when the rest is too long to
// drop. Read once, it is kept as the request's raw body.
func ReadBody(c *fiber.Ctx, limit int) ([]byte, error) {
	if c.Context().RequestBodyStream() == nil { // read before: it is kept as the raw body
		return c.Body(), nil
	}
	stream := Body(c)
	if c.Request().Header.ContentLength() > limit {
		DrainOrClose(c, stream)
		return nil, ErrBodyTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(stream, int64(limit)+1))
	if err != nil {
		c.Context().SetConnectionClose()
		return nil, ErrBodyUnreadable
	}
	if len(b) > limit {
		DrainOrClose(c, stream)
		return nil, ErrBodyTooLarge
	}
	c.Request().SetBodyRaw(b)
	return b, nil
}

// drainLimit is how much of a refused body is read and dropped so that the
// client, still sending, gets its answer rather than a reset connection.
const drainLimit = 8 << 20

// DrainOrClose reads what is left of stream, up to drainLimit, and closes
// the connection after the answer when more is left.
func DrainOrClose(c *fiber.Ctx, stream io.Reader) {
	n, err := io.Copy(io.Discard, io.LimitReader(stream, drainLimit))
	if err != nil || n == drainLimit {
		c.Context().SetConnectionClose()
	}
}

type bodyKey struct{}

// trackedBody remembers that the request body has ended: fasthttp's chunked
// body stream, read again after its end, waits for more bytes from the
// connection instead of answering io.EOF again.
type trackedBody struct {
	r    io.Reader
	done bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if err != nil {
		b.done = true // at the end, or broken: never read again
	}
	return n, err
}

// Body is the request body as a stream: the same reader for every caller
// within one request (a handler, then the drain after it).
func Body(c *fiber.Ctx) io.Reader {
	if b, ok := c.Locals(bodyKey{}).(*trackedBody); ok {
		return b
	}
	s := c.Context().RequestBodyStream()
	if s == nil {
		return strings.NewReader("")
	}
	b := &trackedBody{r: s}
	c.Locals(bodyKey{}, b)
	return b
}
