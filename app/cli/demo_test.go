package cli

import "testing"

// TestBaseURL: the demo prints commands that work for any listen address.
func TestBaseURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		":8080":             "http://localhost:8080",
		"0.0.0.0:8080":      "http://localhost:8080",
		"[::]:8080":         "http://localhost:8080",
		"127.0.0.1:8080":    "http://127.0.0.1:8080",
		"praxis.local:9000": "http://praxis.local:9000",
		"[::1]:8080":        "http://[::1]:8080",
	} {
		if got := baseURL(addr); got != want {
			t.Errorf("%s: %s, want %s", addr, got, want)
		}
	}
}
