package redisstore_test

import (
	"strings"
	"testing"

	"github.com/praxis-health/praxis/adapters/redisstore"
	"github.com/praxis-health/praxis/ports/porttest"
	"github.com/praxis-health/praxis/test/testenv"
)

func TestContract(t *testing.T) {
	t.Parallel()
	url := testenv.RedisURL(t)
	porttest.RunTokenStoreSuite(t, func(t *testing.T) porttest.TokenStores {
		rdb, err := redisstore.Open(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Close() })
		s := redisstore.New(rdb, testenv.RedisPrefix())
		return porttest.TokenStores{Tokens: s, Attempts: s, Sessions: s}
	})
}

// TestOpenNeverQuotesTheURL: a Redis URL that cannot be parsed, in either
// form, is refused with what is wrong, never with the URL and its password.
func TestOpenNeverQuotesTheURL(t *testing.T) {
	for _, u := range []string{
		"redis://:s3cret-pw@cache:notaport/0",
		"redis://:s3cret-pw@sentinel-0:notaport/0?master_name=praxis",
	} {
		_, err := redisstore.Open(u)
		if err == nil {
			t.Errorf("%q opened", u)
			continue
		}
		if strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("the error quotes the URL: %v", err)
		}
	}
}
