package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
)

// readSmallBody reads a body that is handled whole (token requests, resource
// writes), up to httpkit.SmallBodyLimit (httpkit.ReadBody).
func readSmallBody(c *fiber.Ctx) ([]byte, error) { return httpkit.ReadBody(c, httpkit.SmallBodyLimit) }

// errParams is a body that cannot be read as parameters.
type errParams struct{ reason string }

func (e *errParams) Error() string { return e.reason }

func paramsError(format string, args ...any) error {
	return &errParams{reason: fmt.Sprintf(format, args...)}
}

// maxParamValue bounds one parameter of a multipart parameter body.
const maxParamValue = 8 << 10

// readParams reads request parameters from a form-urlencoded, JSON-object or
// multipart body. A parameter given twice is refused (RFC 6749 §3.2), as are
// JSON values that are not strings and multipart files.
func readParams(c *fiber.Ctx) (url.Values, error) {
	body, err := readSmallBody(c)
	if err != nil {
		return nil, err
	}
	contentType := c.Get(fiber.HeaderContentType)
	if len(body) == 0 && contentType == "" {
		return url.Values{}, nil
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, paramsError("unreadable Content-Type")
	}
	var values url.Values
	switch mediaType {
	case fiber.MIMEApplicationForm:
		values, err = url.ParseQuery(string(body))
		if err != nil {
			return nil, paramsError("the form body is not valid application/x-www-form-urlencoded")
		}
	case fiber.MIMEApplicationJSON:
		values, err = jsonParams(body)
	case fiber.MIMEMultipartForm:
		values, err = multipartParams(body, params["boundary"])
	default:
		return nil, paramsError("unsupported Content-Type %s: use application/x-www-form-urlencoded, application/json or multipart/form-data", mediaType)
	}
	if err != nil {
		return nil, err
	}
	for name, v := range values {
		if len(v) > 1 {
			return nil, paramsError("parameter %s is repeated", name)
		}
	}
	return values, nil
}

// jsonParams reads a flat JSON object of string values, keeping repeated keys
// visible (encoding/json would silently keep the last).
func jsonParams(body []byte) (url.Values, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, paramsError("the JSON body must be an object")
	}
	values := url.Values{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, paramsError("the JSON body is malformed")
		}
		name, _ := tok.(string)
		var value any
		if err := dec.Decode(&value); err != nil {
			return nil, paramsError("the JSON body is malformed")
		}
		s, ok := value.(string)
		if !ok {
			return nil, paramsError("parameter %s must be a string", name)
		}
		values.Add(name, s)
	}
	if _, err := dec.Token(); err != nil {
		return nil, paramsError("the JSON body is malformed")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, paramsError("the JSON body has content after the object")
	}
	return values, nil
}

func multipartParams(body []byte, boundary string) (url.Values, error) {
	if boundary == "" {
		return nil, paramsError("the multipart body has no boundary")
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	values := url.Values{}
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return values, nil
		}
		if err != nil {
			return nil, paramsError("the multipart body is malformed")
		}
		if part.FileName() != "" {
			return nil, paramsError("files are not accepted here")
		}
		value, err := io.ReadAll(io.LimitReader(part, maxParamValue+1))
		if err != nil || len(value) > maxParamValue {
			return nil, paramsError("parameter %s is malformed or too long", part.FormName())
		}
		values.Add(part.FormName(), string(value))
	}
}
