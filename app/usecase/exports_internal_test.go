package usecase

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The render queue writes pages in the order they were read, however
// long each takes to render; a page that panics fails the file.
func TestRenderQueueKeepsOrder(t *testing.T) {
	var out bytes.Buffer
	q := newRenderQueue(&out)
	for i := range 20 {
		err := q.add(func(w *bytes.Buffer) (int, error) {
			time.Sleep(time.Duration((20-i)%4) * time.Millisecond)
			fmt.Fprintf(w, "%d\n", i)
			return 1, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := q.add(nil); err != nil { // a page with nothing to write
		t.Fatal(err)
	}
	n, err := q.flush()
	var want strings.Builder
	for i := range 20 {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if err != nil || n != 20 || out.String() != want.String() {
		t.Fatalf("%d lines, %v:\n%s", n, err, out.String())
	}

	q = newRenderQueue(&out)
	defer q.close()
	_ = q.add(func(*bytes.Buffer) (int, error) { panic("a mapping bug") })
	if _, err := q.flush(); err == nil || !strings.Contains(err.Error(), "a mapping bug") {
		t.Errorf("a panicking page: %v", err)
	}
}
