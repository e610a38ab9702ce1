package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Kube is one real kube-apiserver with etcd (controller-runtime's envtest),
// shared by every test of a package, with praxis's CRDs installed.
type Kube struct {
	Config *rest.Config
	// KubeConfig is a kubeconfig file for processes (KUBECONFIG).
	KubeConfig string
}

var kube struct {
	once sync.Once
	env  *envtest.Environment
	dir  string
	api  *Kube
	err  error
}

// KubeAPI starts the shared API server on first use. Its binaries come from
// KUBEBUILDER_ASSETS, which `make test` sets from .ci/envtest-assets (built
// from the Go module proxy and cached outside the clone). Without them the
// test skips loudly, except under CI=true, where it fails.
func KubeAPI(t testing.TB, crdDir string) *Kube {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		unavailable(t, "kube-apiserver and etcd", fmt.Errorf("KUBEBUILDER_ASSETS is not set: run make test, or KUBEBUILDER_ASSETS=$(.ci/envtest-assets) go test"))
	}
	kube.once.Do(func() {
		// The tests' own clients have nothing to log; the operator under test
		// logs through its own process.
		ctrllog.SetLogger(logr.Discard())
		kube.env = &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: assets}
		cfg, err := kube.env.Start()
		if err != nil {
			kube.err = fmt.Errorf("start kube-apiserver: %w", err)
			return
		}
		user, err := kube.env.AddUser(envtest.User{Name: "praxis-test", Groups: []string{"system:masters"}}, nil)
		if err != nil {
			kube.err = err
			return
		}
		raw, err := user.KubeConfig()
		if err != nil {
			kube.err = err
			return
		}
		if kube.dir, kube.err = os.MkdirTemp("", "praxis-kube-"); kube.err != nil {
			return
		}
		path := filepath.Join(kube.dir, "kubeconfig")
		kube.err = os.WriteFile(path, raw, 0o600)
		kube.api = &Kube{Config: cfg, KubeConfig: path}
	})
	if kube.err != nil {
		t.Fatal(kube.err)
	}
	return kube.api
}

// StopKube stops the shared API server, if one was started; TestMain calls it.
func StopKube() {
	if kube.env != nil {
		_ = kube.env.Stop()
	}
	if kube.dir != "" {
		_ = os.RemoveAll(kube.dir)
	}
}
