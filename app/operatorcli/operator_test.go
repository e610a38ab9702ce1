package operatorcli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLeaseNamespace: outside a cluster, without $POD_NAMESPACE, the Lease
// goes to --namespace, else the kubeconfig context's namespace, instead of
// the operator exiting with "unable to find leader election namespace".
func TestLeaseNamespace(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: dev, user: {token: x}}]
contexts: [{name: test, context: {cluster: test, user: dev, namespace: praxis-dev}}]
current-context: test
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	noPod := filepath.Join(dir, "no-such-file")
	pod := filepath.Join(dir, "namespace")
	if err := os.WriteFile(pod, []byte("praxis"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ flag, watched, podFile, want string }{
		{"leases", "tenants", noPod, "leases"},
		{"", "tenants", noPod, "tenants"},
		{"", "", noPod, "praxis-dev"},
		{"", "", pod, ""}, // in a pod: controller-runtime reads the pod's own namespace
	} {
		got, err := leaseNamespace(c.flag, c.watched, c.podFile)
		if err != nil || got != c.want {
			t.Errorf("%+v: %q %v, want %q", c, got, err, c.want)
		}
	}
}
