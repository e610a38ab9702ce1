package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/uptrace/bun"
	"go.uber.org/fx"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/praxis-health/praxis/adapters/operator"
	"github.com/praxis-health/praxis/adapters/telemetry"
	"github.com/praxis-health/praxis/app"
	"github.com/praxis-health/praxis/app/usecase"
)

// operatorCmd runs the controller of CONTRACT §9. It finds the cluster like
// kubectl (KUBECONFIG, else in-cluster) and the database like serve.
func operatorCmd() *cobra.Command {
	var o operator.Options
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Reconcile Company and OAuthClient resources into the database and Secrets",
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
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			var admin *usecase.Admin
			var db *bun.DB
			fxApp := fx.New(app.AdminOptions(cfg), fx.NopLogger, fx.Populate(&admin, &db))
			if err := fxApp.Err(); err != nil {
				return err
			}
			if err := fxApp.Start(ctx); err != nil {
				return err
			}
			defer func() { _ = fxApp.Stop(context.WithoutCancel(ctx)) }()
			o.Ready = db.PingContext
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
	cmd.Flags().BoolVar(&o.LeaderElection, "leader-elect", true, "let one replica of several reconcile")
	cmd.Flags().StringVar(&o.LeaseNamespace, "lease-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the leader Lease (in a cluster: the pod's own)")
	cmd.Flags().StringVar(&o.Namespace, "namespace", "", "watch only this namespace (default: all)")
	cmd.Flags().StringVar(&o.TokenURL, "token-url", "", "token_url written into OAuthClient Secrets (default: PRAXIS_PUBLIC_URL + /api/oauth/v2/token)")
	return cmd
}
