package telemetry

import (
	"io"
	"log/slog"

	"github.com/praxis-health/praxis/adapters/internal/jsonlog"
)

// NewLogger writes JSON lines to w at level and up; a line logged with a
// request's context carries its trace_id and span_id, and the access line
// (jsonlog.Access) is written by hand in the same bytes.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger { return jsonlog.New(w, level) }
