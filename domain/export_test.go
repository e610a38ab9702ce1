package domain_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain"
)

// A file's name tells its attempt, and only a name of that job's form does.
func TestExportFileAttempt(t *testing.T) {
	job, other := uuid.New(), uuid.New()
	for _, c := range []struct {
		name string
		want int
	}{
		{domain.ExportFileName(job, 1, 1), 1},
		{domain.ExportFileName(job, 3, 12), 3},
		{domain.ExportFileName(other, 2, 1), 0},
		{domain.ExportFileName(job, 2, 1) + ".tmp", 0},
		{"export-" + job.String() + "-x-1.ndjson", 0},
		{"customer-file", 0},
	} {
		if got := domain.ExportFileAttempt(job, c.name); got != c.want {
			t.Errorf("%s: attempt %d, want %d", c.name, got, c.want)
		}
	}
}
