package bulk_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/praxis-health/praxis/domain/bulk"
)

// A file's name tells its attempt, and only a name of that job's form does.
func TestExportFileAttempt(t *testing.T) {
	job, other := uuid.New(), uuid.New()
	for _, c := range []struct {
		name string
		want int
	}{
		{bulk.FileName(job, 1, 1), 1},
		{bulk.FileName(job, 3, 12), 3},
		{bulk.FileName(other, 2, 1), 0},
		{bulk.FileName(job, 2, 1) + ".tmp", 0},
		{"export-" + job.String() + "-x-1.ndjson", 0},
		{"customer-file", 0},
	} {
		if got := bulk.FileAttempt(job, c.name); got != c.want {
			t.Errorf("%s: attempt %d, want %d", c.name, got, c.want)
		}
	}
}
