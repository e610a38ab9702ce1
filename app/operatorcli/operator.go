// Package operatorcli is praxis-operator, the program that reconciles
// Company and OAuthClient resources (docs: docs/operators/kubernetes-operator.md, "Kubernetes: the
// operator"). It is a program of its own, apart from the server, so that
// the server's binary carries none of the Kubernetes client libraries; both
// drive the same use-case port, ports.Tenants.
package operatorcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/uptrace/bun"
	"go.uber.org/fx"
	"k8s.io/client-go/tools/clientcmd"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/praxis-health/praxis/adapters/operator"
	"github.com/praxis-health/praxis/adapters/telemetry"
	"github.com/praxis-health/praxis/app"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/staff"
)

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaseNamespace chooses where the leader Lease lives: the flag (which
// defaults to $POD_NAMESPACE), else the one watched namespace, else, inside
// a pod, none (controller-runtime reads the pod's own), else the namespace
// of the kubeconfig's current context: a developer running the operator
// against a test cluster needs no flag.
func leaseNamespace(flag, watched, podNamespaceFile string) (string, error) {
	switch {
	case flag != "":
		return flag, nil
	case watched != "":
		return watched, nil
	}
	if _, err := os.Stat(podNamespaceFile); err == nil {
		return "", nil
	}
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).Namespace()
	if err != nil {
		return "", fmt.Errorf("the leader Lease's namespace: %w (set --lease-namespace or --leader-elect=false)", err)
	}
	return ns, nil
}

// Main runs praxis-operator and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	root := Command()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		_, _ = fmt.Fprintln(stderr, "praxis-operator:", err)
		return 1
	}
	return 0
}

// Command is the operator's command line. It finds the cluster like kubectl
// (KUBECONFIG, else in-cluster) and the database like praxis serve.
func Command() *cobra.Command {
	var o operator.Options
	cmd := &cobra.Command{
		Use:           "praxis-operator",
		Short:         "Reconcile Company and OAuthClient resources into the database and Secrets",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := app.LoadConfig()
			if err != nil {
				return err
			}
			logger := telemetry.NewLogger(cmd.ErrOrStderr(), cfg.LogLevel)
			o.Logger, o.ShutdownGrace = logr.FromSlogHandler(logger.Handler()), cfg.ShutdownGrace
			if o.TokenURL == "" {
				o.TokenURL = strings.TrimSuffix(cfg.PublicURL, "/") + "/api/oauth/v2/token"
			}
			kube, err := ctrlconfig.GetConfig()
			if err != nil {
				return fmt.Errorf("find the cluster: %w", err)
			}
			if o.LeaderElection {
				if o.LeaseNamespace, err = leaseNamespace(o.LeaseNamespace, o.Namespace, serviceAccountNamespace); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			var admin *usecase.Admin
			var settings *usecase.Settings
			var db *bun.DB
			fxApp := fx.New(app.AdminOptions(cfg), fx.NopLogger, fx.Populate(&admin, &settings, &db))
			if err := fxApp.Err(); err != nil {
				return err
			}
			if err := fxApp.Start(ctx); err != nil {
				return err
			}
			defer func() { _ = fxApp.Stop(context.WithoutCancel(ctx)) }()
			o.Ready = db.PingContext
			o.Invite = func(ctx context.Context, company domain.CompanyID, email string) (string, error) {
				_, token, err := settings.OperatorInvite(ctx, company, email, staff.RoleAdmin)
				if err != nil {
					return "", err
				}
				return cfg.SiteURL() + staff.JoinPath(company, token), nil
			}
			mgr, err := operator.New(kube, admin, o)
			if err != nil {
				return err
			}
			logger.Info("operator starting", "leader_election", o.LeaderElection, "namespace", o.Namespace)
			return mgr.Start(ctx)
		},
	}
	cmd.Flags().StringVar(&o.MetricsAddr, "metrics-addr", ":8082", `serve /metrics here ("0": off)`)
	cmd.Flags().StringVar(&o.HealthAddr, "health-addr", ":8081", "serve /healthz and /readyz here")
	cmd.Flags().BoolVar(&o.LeaderElection, "leader-elect", true, "let one replica of several reconcile (on by default; --leader-elect=false for a single operator)")
	cmd.Flags().StringVar(&o.LeaseNamespace, "lease-namespace", os.Getenv("POD_NAMESPACE"),
		"namespace of the leader Lease (default: $POD_NAMESPACE, else --namespace, else the pod's own in a cluster, else the kubeconfig context's)")
	cmd.Flags().StringVar(&o.Namespace, "namespace", "", "watch only this namespace (default: all)")
	cmd.Flags().StringVar(&o.TokenURL, "token-url", "", "token_url written into OAuthClient Secrets (default: PRAXIS_PUBLIC_URL + /api/oauth/v2/token)")
	return cmd
}
