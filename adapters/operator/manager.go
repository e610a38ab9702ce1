package operator

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// LeaderElectionID names the Lease that the operator's replicas compete for.
const LeaderElectionID = "praxis-operator.praxis-health.io"

// Options configure the operator's manager.
type Options struct {
	// MetricsAddr serves /metrics ("0": off); HealthAddr serves /healthz and /readyz.
	MetricsAddr, HealthAddr string
	// LeaderElection lets one replica of several reconcile; the Lease lives
	// in LeaseNamespace (in a cluster: the pod's own namespace by default).
	LeaderElection bool
	LeaseNamespace string
	// Namespace, when set, is the only namespace watched.
	Namespace string
	// TokenURL is written into OAuthClient Secrets as token_url.
	TokenURL string
	// Invite invites email to the company's settings pages as an admin and
	// answers the one-time link; nil: spec.admins is not acted on.
	Invite func(ctx context.Context, company domain.CompanyID, email string) (string, error)
	// Ready reports whether the database answers; /readyz fails while it does not.
	Ready  func(context.Context) error
	Logger logr.Logger
	// ShutdownGrace is how long reconciles in flight get after the stop signal.
	ShutdownGrace time.Duration
}

// Scheme knows Kubernetes's own types and ours.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, AddToScheme(s)
}

// New returns the operator's manager with both controllers; Start runs it
// until its context ends.
func New(cfg *rest.Config, tenants ports.Tenants, o Options) (ctrl.Manager, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	ctrl.SetLogger(o.Logger) // client-go's informers log through it too
	opts := ctrl.Options{
		Scheme:                        scheme,
		Logger:                        o.Logger,
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:        o.HealthAddr,
		LeaderElection:                o.LeaderElection,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       o.LeaseNamespace,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &o.ShutdownGrace,
		Cache: cache.Options{
			// Only the Secrets the operator wrote: never every Secret of the cluster in memory.
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{managedByLabel: managedBy})},
			},
		},
	}
	if o.Namespace != "" {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{o.Namespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("operator manager: %w", err)
	}
	kube := mgr.GetClient()
	fresh := secrets{api: mgr.GetAPIReader(), kube: kube}
	err = ctrl.NewControllerManagedBy(mgr).Named("company").
		For(&Company{}).Owns(&corev1.Secret{}).
		Complete(&companyReconciler{kube: kube, secrets: fresh, tenants: tenants, invite: o.Invite})
	if err != nil {
		return nil, err
	}
	err = ctrl.NewControllerManagedBy(mgr).Named("oauthclient").
		For(&OAuthClient{}).Owns(&corev1.Secret{}).
		Watches(&Company{}, handler.EnqueueRequestsFromMapFunc(clientsOf(kube))).
		Complete(&clientReconciler{kube: kube, secrets: fresh, tenants: tenants, tokenURL: o.TokenURL})
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	ready := func(r *http.Request) error {
		if o.Ready == nil {
			return nil
		}
		return o.Ready(r.Context())
	}
	if err := mgr.AddReadyzCheck("database", ready); err != nil {
		return nil, err
	}
	return mgr, nil
}
