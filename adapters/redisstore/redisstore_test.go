package redisstore_test

import (
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
