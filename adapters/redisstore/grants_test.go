package redisstore

import (
	"fmt"
	"reflect"
	"testing"
)

// TestGrantCacheAnswersWhatDecodingDoes: a cached grant is the grant its
// bytes decode to, the caller's copy of its scopes is its own, bytes that
// do not decode are refused every time, and the cache stays bounded.
func TestGrantCacheAnswersWhatDecodingDoes(t *testing.T) {
	t.Parallel()
	const raw = `{"cl":"pc_a","co":"dddedf7d-e09c-4508-a50f-12d777f290c5","pl":"pro","sc":"company:read customers:read","iat":1795749949977,"exp":1795753549977}`
	want, err := decodeGrant([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	var c grantCache
	for i := range 3 {
		g, err := c.decode(raw)
		if err != nil || !reflect.DeepEqual(g, want) {
			t.Fatalf("call %d: %+v, %v; want %+v", i, g, err, want)
		}
		g.Scopes[0] = "files:write" // the caller's copy
	}
	for range 2 {
		if _, err := c.decode(`{"cl":"pc_a","co":"not a company","sc":"company:read"}`); err == nil {
			t.Error("a grant naming no company decoded")
		}
	}
	for i := range 2 * maxCachedGrants {
		if _, err := c.decode(fmt.Sprintf(`{"cl":"pc_%d","co":"dddedf7d-e09c-4508-a50f-12d777f290c5","sc":"company:read","iat":1,"exp":2}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > maxCachedGrants {
		t.Errorf("%d grants cached, at most %d", n, maxCachedGrants)
	}
}
