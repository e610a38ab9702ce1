package sqlstore_test

import (
	"strings"
	"testing"

	"github.com/praxis-health/praxis/adapters/sqlstore"
)

// TestOpenNeverQuotesTheURL: a database URL that cannot be parsed is refused
// with what is wrong, never with the URL, which holds the password.
func TestOpenNeverQuotesTheURL(t *testing.T) {
	for _, u := range []string{
		"postgres://praxis:s3cret-pw@pg-0:5432,pg-1:notaport/praxis",
		"postgres://praxis:s3cret-pw@pg-0:5432/praxis?target_session_attrs=sideways",
		"postgres://praxis:s3cret-pw@[::1/praxis",
	} {
		_, err := sqlstore.Open(u)
		if err == nil {
			t.Errorf("%q opened", u)
			continue
		}
		if strings.Contains(err.Error(), "s3cret-pw") || strings.Contains(err.Error(), "pg-0") {
			t.Errorf("the error quotes the URL: %v", err)
		}
	}
	// Several hosts and the session attribute are taken (nothing dials yet).
	db, err := sqlstore.Open("postgres://praxis:pw@127.0.0.1:1,127.0.0.1:2/praxis?target_session_attrs=read-write&connect_timeout=1")
	if err != nil {
		t.Fatalf("a multi-host URL: %v", err)
	}
	_ = db.Close()
}
