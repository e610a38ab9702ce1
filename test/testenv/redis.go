package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const defaultRedisURL = "redis://127.0.0.1:6379/0"

// RedisURL returns the test Redis server's URL (PRAXIS_TEST_REDIS_URL, else
// the local server) after checking that it answers. Tests share the server:
// each keeps to its own key prefix (RedisPrefix) or to random keys.
func RedisURL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv("PRAXIS_TEST_REDIS_URL")
	if raw == "" {
		raw = defaultRedisURL
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatalf("PRAXIS_TEST_REDIS_URL: %v", err)
	}
	client := redis.NewClient(opts)
	defer func() { _ = client.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		unavailable(t, "Redis", err)
	}
	return raw
}

// RedisPrefix is a key prefix no other test uses.
func RedisPrefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "praxis-test-" + hex.EncodeToString(b) + ":"
}
