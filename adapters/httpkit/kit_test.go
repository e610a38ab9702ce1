package httpkit_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/praxis-health/praxis/adapters/httpkit"
)

// TestReadBodyBoundsWhatADoorReadsWhole: a body within the bound is read
// (also when sent in chunks, without a length), one past it is 413 whether
// its length is declared or not, and both doors answer those statuses.
func TestReadBodyBoundsWhatADoorReadsWhole(t *testing.T) {
	const limit = 1 << 10
	app := fiber.New(fiber.Config{StreamRequestBody: true})
	app.Post("/", func(c *fiber.Ctx) error {
		b, err := httpkit.ReadBody(c, limit)
		if err != nil {
			var fe *fiber.Error
			if errors.As(err, &fe) {
				return c.SendStatus(fe.Code)
			}
			return err
		}
		return c.Send(b)
	})
	for _, c := range []struct {
		name    string
		body    io.Reader
		length  int64
		want    int
		content string
	}{
		{"within, with its length", strings.NewReader("hello"), 5, 200, "hello"},
		{"within, chunked", io.MultiReader(strings.NewReader("hel"), strings.NewReader("lo")), -1, 200, "hello"},
		{"past, with its length", bytes.NewReader(make([]byte, limit+1)), limit + 1, 413, ""},
		{"past, chunked", io.MultiReader(bytes.NewReader(make([]byte, limit)), strings.NewReader("x")), -1, 413, ""},
		{"exactly the bound", bytes.NewReader(make([]byte, limit)), limit, 200, ""},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", c.body)
		req.ContentLength = c.length
		if c.length < 0 {
			req.ContentLength, req.TransferEncoding = 0, []string{"chunked"}
		}
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.want || (c.content != "" && string(got) != c.content) {
			t.Errorf("%s: %d %q, want %d %q", c.name, resp.StatusCode, got, c.want, c.content)
		}
	}
}

// TestSecurityHeaders: every answer through the kit's middleware says no
// sniffing, no referrer, no framing.
func TestSecurityHeaders(t *testing.T) {
	app := fiber.New()
	app.Use(httpkit.SecurityHeaders)
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("ok") })
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/", nil))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// TestDeadlineIsLiftedOrLengthenedByTheRoute: every request is bounded by
// the host's deadline; a route that streams lifts it for its handler, a
// long poll lengthens it by its wait; what runs before either (a guard)
// keeps the usual deadline, and what it adds to the context stays.
func TestDeadlineIsLiftedOrLengthenedByTheRoute(t *testing.T) {
	const timeout = time.Minute
	app := fiber.New()
	app.Use(httpkit.Deadline(timeout))
	type guarded struct{}
	left := func(c *fiber.Ctx) error {
		if c.UserContext().Value(guarded{}) != true {
			return c.SendString("the guard's context value is lost")
		}
		d, ok := c.UserContext().Deadline()
		if !ok {
			return c.SendString("none")
		}
		return c.SendString(time.Until(d).Round(time.Minute).String())
	}
	guard := func(c *fiber.Ctx) error {
		if _, ok := c.UserContext().Deadline(); !ok {
			return c.SendStatus(http.StatusTeapot)
		}
		c.SetUserContext(context.WithValue(c.UserContext(), guarded{}, true)) // as the audit door adds its access
		return c.Next()
	}
	app.Get("/plain", guard, left)
	app.Get("/stream", guard, httpkit.Streaming, left)
	app.Get("/poll", guard, httpkit.Longer(50*time.Minute), left)
	for path, want := range map[string]string{"/plain": "1m0s", "/stream": "none", "/poll": "51m0s"} {
		resp, err := app.Test(httptest.NewRequest(http.MethodGet, path, nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || string(b) != want {
			t.Errorf("%s: %d %q, want the deadline %s", path, resp.StatusCode, b, want)
		}
	}
}
