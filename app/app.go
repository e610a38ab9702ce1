package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/fx"

	"github.com/praxis-health/praxis/adapters/blobstore"
	"github.com/praxis-health/praxis/adapters/fhir"
	"github.com/praxis-health/praxis/adapters/httpapi"
	"github.com/praxis-health/praxis/adapters/httphost"
	"github.com/praxis-health/praxis/adapters/httpkit"
	"github.com/praxis-health/praxis/adapters/memstore"
	"github.com/praxis-health/praxis/adapters/redisstore"
	"github.com/praxis-health/praxis/adapters/sniff"
	"github.com/praxis-health/praxis/adapters/sqlstore"
	"github.com/praxis-health/praxis/adapters/telemetry"
	"github.com/praxis-health/praxis/adapters/web"
	"github.com/praxis-health/praxis/api"
	"github.com/praxis-health/praxis/app/usecase"
	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/ports"
)

// Options is the whole server: persistence, blobs, use cases, HTTP.
func Options(cfg Config) fx.Option {
	return fx.Options(
		fx.Supply(cfg),
		Telemetry,
		Persistence,
		Blobs,
		Tokens,
		UseCases,
		Webhooks,
		Exports,
		Gauges,
		HTTP,
		fx.Decorate(tallyDeprecatedCalls),
	)
}

// tallyDeprecatedCalls keeps the server's counts of deprecated calls in
// memory, added to the store every 5 seconds and when the server stops.
func tallyDeprecatedCalls(lc fx.Lifecycle, store ports.DeprecatedCalls, logger *slog.Logger) ports.DeprecatedCalls {
	t := usecase.NewCallTally(store, 5*time.Second, logger)
	lc.Append(fx.StartStopHook(t.Start, t.Stop))
	return t
}

// AdminOptions is what the admin commands need: the stores and the admin use cases.
func AdminOptions(cfg Config) fx.Option {
	return fx.Options(
		fx.Supply(cfg),
		NoTelemetry,
		Persistence,
		Blobs,
		Tokens,
		fx.Provide(usecase.NewAdmin, usecase.NewMaintenance, usecase.NewExchange, usecase.NewUploads, usecase.NewDeprecations, usecase.NewAuditor, usecase.NewSettings,
			usecase.NewRestore, func() ports.Sniffer { return sniff.Sniffer{} }, func() ports.RestoreSources { return sqlstore.RestoreSources{} }),
	)
}

// Persistence provides the repositories on the configured database.
var Persistence = fx.Module("persistence",
	fx.Provide(
		openDatabase,
		fx.Annotate(sqlstore.NewTransactor, fx.As(new(ports.Transactor))),
		fx.Annotate(sqlstore.NewCompanyRepository, fx.As(new(ports.CompanyRepository))),
		fx.Annotate(sqlstore.NewCalendar, fx.As(new(ports.Calendar))),
		fx.Annotate(sqlstore.NewDeprecatedCalls, fx.As(new(ports.DeprecatedCalls))),
		fx.Annotate(sqlstore.NewAuditLog, fx.As(new(ports.AuditLog))),
		fx.Annotate(sqlstore.NewCustomerRepository, fx.As(new(ports.CustomerRepository))),
		fx.Annotate(sqlstore.NewFileRepository, fx.As(new(ports.FileRepository))),
		fx.Annotate(sqlstore.NewClientRepository, fx.As(new(ports.ClientRepository))),
		fx.Annotate(sqlstore.NewAssertionIDs, fx.As(new(ports.AssertionIDs))),
		fx.Annotate(sqlstore.NewStaff, fx.As(new(ports.Staff))),
		fx.Annotate(sqlstore.NewRecordStore, fx.As(new(ports.RecordStore))),
		fx.Annotate(sqlstore.NewDeviceOrderStore, fx.As(new(ports.DeviceOrderStore))),
		fx.Annotate(sqlstore.NewIdempotencyStore, fx.As(new(ports.IdempotencyStore))),
		fx.Annotate(sqlstore.NewErasures, fx.As(new(ports.Erasures))),
		fx.Annotate(sqlstore.NewCompanyLeases, fx.As(new(ports.CompanyLeases))),
		asHealthCheck(func(db *bun.DB) ports.HealthCheck { return sqlstore.HealthCheck{DB: db} }),
	),
)

// Blobs provides the blob store PRAXIS_BLOB_URL names.
var Blobs = fx.Module("blobs",
	fx.Provide(
		openBlobStore,
		func(s *blobstore.Store) ports.BlobStore { return s },
		asHealthCheck(func(s *blobstore.Store, cfg Config) ports.HealthCheck {
			return blobstore.HealthCheck{Store: s, MinFree: cfg.BlobMinFree}
		}),
	),
)

// Tokens provides the token store and attempt counter: Redis when
// PRAXIS_REDIS_URL is set, else the in-process store of the embedded mode.
var Tokens = fx.Module("tokens",
	fx.Provide(openTokenStore, func(cfg Config) domain.LockoutPolicy { return cfg.Lockout() }),
)

type tokenStores struct {
	fx.Out
	Tokens   ports.TokenStore
	Attempts ports.AttemptCounter
	Sessions ports.Sessions
	Health   ports.HealthCheck `group:"health"`
}

func openTokenStore(lc fx.Lifecycle, cfg Config, tel *telemetry.Telemetry, db *bun.DB, logger *slog.Logger) (tokenStores, error) {
	if cfg.RedisURL == "" {
		s := memstore.New(memstore.DefaultLimits)
		return tokenStores{Tokens: s, Attempts: observedAttempts(s, tel), Sessions: s, Health: memstore.HealthCheck{}}, nil
	}
	rdb, err := redisstore.Open(cfg.RedisURL)
	if err != nil {
		return tokenStores{}, err
	}
	lc.Append(fx.StopHook(rdb.Close))
	// A span per command, without the command's arguments (token hashes,
	// client ids); pool figures as metrics.
	if err := redisstore.Instrument(rdb, tel.Tracer, tel.Meter); err != nil {
		return tokenStores{}, err
	}
	s := redisstore.New(rdb, cfg.RedisPrefix)
	// Revocations buried in the database first (redisstore/revocations.go):
	// Redis may lose the last of them in a failover.
	list := redisstore.NewRevocations(sqlstore.NewTombstones(db), logger)
	startRevocations(lc, list, logger)
	return tokenStores{Tokens: redisstore.DurableTokens(s, list, cfg.TokenTTL), Attempts: observedAttempts(s, tel),
		Sessions: redisstore.DurableSessions(s, list, cfg.SettingsLifetime), Health: redisstore.HealthCheck{RDB: rdb}}, nil
}

// UseCases provides the application's use cases behind their driving ports.
var UseCases = fx.Module("usecases",
	fx.Provide(
		func() ports.Sniffer { return sniff.Sniffer{} },
		usecase.NewUploads,
		func(u *usecase.Uploads) ports.Uploader { return u },
		fx.Annotate(usecase.NewFiles, fx.As(new(ports.Files))),
		func(cfg Config) usecase.OAuthSettings {
			return usecase.OAuthSettings{TokenTTL: cfg.TokenTTL, Lockout: cfg.Lockout(), RateLimits: cfg.Limits(), AllowPrivateKeySets: cfg.WebhookAllowPrivate}
		},
		fx.Annotate(usecase.NewOAuth, fx.As(new(ports.Authorizer))),
		fx.Annotate(usecase.NewCompanies, fx.As(new(ports.CompanyProfiles))),
		usecase.NewRecords,
		func(r *usecase.Records) ports.Records { return r },
		func(r *usecase.Records) ports.Appointments { return r },
		fx.Annotate(usecase.NewBooking, fx.As(new(ports.Booking))),
		usecase.NewDeviceOrders,
		func(d *usecase.DeviceOrders) ports.DeviceOrders { return d },
		startAuditor,
		func(a *usecase.Auditor) ports.Auditor {
			if a == nil {
				return nil // the benchmark build with the trail off
			}
			return a
		},
		usecase.NewMaintenance,
	),
)

// HTTP serves every route on PRAXIS_HTTP_ADDR.
var HTTP = fx.Module("http",
	fx.Provide(
		func(cfg Config) httpapi.UploadOptions {
			return httpapi.UploadOptions{IdleTimeout: cfg.UploadIdleTimeout, TrustedProxies: cfg.Proxies()}
		},
		asRoute(httpapi.NewUploads),
		fx.Annotate(httpapi.NewHealth, fx.ParamTags(`group:"health"`)),
		asRoute(func(h *httpapi.Health) *httpapi.Health { return h }),
		asRoute(func(t *telemetry.Telemetry) *httpapi.Metrics { return httpapi.NewMetrics(t.Metrics) }),
		httpapi.NewOpenAPI,
		asRoute(func(o *httpapi.OpenAPI) *httpapi.OpenAPI { return o }),
		asRoute(httpapi.NewDocs),
		asRoute(httpapi.NewReleases),
		httpapi.NewLifecycle,
		func(cfg Config) httpapi.OAuthOptions {
			return httpapi.OAuthOptions{PublicURL: cfg.PublicURL, TrustedProxies: cfg.Proxies()}
		},
		asRoute(httpapi.NewOAuth),
		newCompanyShare,
		asRoute(httpapi.NewResources, fx.ParamTags(``, ``, ``, ``, ``, `group:"sections"`)),
		asSection(httpapi.NewCompanySection),
		asSection(httpapi.NewRecords),
		asSection(httpapi.NewBookingSection),
		asSection(httpapi.NewFilesSection),
		asSection(httpapi.NewAuditEvents),
		asSection(httpapi.NewWebhookEndpoints),
		asSection(httpapi.NewDeviceOrders),
		asRoute(func(cfg Config, tel httpkit.Telemetry, auth ports.Authorizer, records ports.Records, files ports.Files, booking ports.Booking,
			profiles ports.CompanyProfiles, exports ports.Exports, auditor ports.Auditor, share *httpkit.CompanyShare) *fhir.Server {
			return fhir.New(auth, records, files, booking, profiles, exports, auditor, fhir.Options{PublicURL: cfg.PublicURL, TokenPath: httpapi.TokenPath, Share: share,
				TrustedProxies: cfg.Proxies(), AuditFailures: httpapi.AuditFailures(tel)})
		}),
		usecase.NewAdmin,
		usecase.NewSettings,
		usecase.NewIntegrations,
		func(s *usecase.Settings) ports.Settings { return s },
		asRoute(newSite),
		fx.Annotate(func(cfg Config, tel httpkit.Telemetry, life *httpapi.Lifecycle, routes ...httpkit.Route) *fiber.App {
			return httphost.New(httphost.Options{Telemetry: tel, Timeout: cfg.RequestTimeout, ErrorHandler: httpapi.ErrorHandler,
				Before: []fiber.Handler{life.Handle}}, routes...)
		}, fx.ParamTags(``, ``, ``, `group:"routes"`)),
	),
	fx.Invoke(serveHTTP, startSweeper, startAuditSweeper, startPatientIndexer),
)

// companyShareWait is how long a request beyond its company's share waits for a slot.
const companyShareWait = 100 * time.Millisecond

// newCompanyShare bounds the requests of one company a replica serves at
// once (PRAXIS_COMPANY_CONCURRENCY; by default half the database pool, at
// least 2), counting refusals by the company's plan. Half, because on the
// benchmark's replica (test/bench/neighbours) half the pool brought another
// practice's p99 beside a busy one to about two thirds (the whole pool: no
// change), for about an eighth of the busy practice's pages.
func newCompanyShare(cfg Config, tel *telemetry.Telemetry) (*httpkit.CompanyShare, error) {
	limit := cfg.CompanyConcurrency
	if limit == 0 {
		limit = max(2, cmp.Or(cfg.DatabaseMaxConns, sqlstore.DefaultMaxConns())/2)
	}
	busy, err := tel.Meter.Meter("github.com/praxis-health/praxis").Int64Counter("praxis.company.busy",
		metric.WithDescription("Requests refused because their practice had as many running on this replica as its share allows (429 company-busy)"))
	if err != nil {
		return nil, err
	}
	return httpkit.NewCompanyShare(limit, companyShareWait, func(ctx context.Context, plan domain.Plan) {
		busy.Add(ctx, 1, metric.WithAttributes(attribute.String("plan", plan.String())))
	}), nil
}

// newSite is the practice's settings pages on the token store's sessions.
func newSite(cfg Config, settings ports.Settings, sessions ports.Sessions, attempts ports.AttemptCounter, auditor ports.Auditor,
	hooks ports.Webhooks, records ports.Records, orders ports.DeviceOrders, files ports.Files, integrations *usecase.Integrations,
	logger *slog.Logger) (*web.Site, error) {
	return web.New(web.Options{SiteURL: cfg.SiteURL(), Reverify: cfg.SettingsReverify, Idle: cfg.SettingsIdle, Lifetime: cfg.SettingsLifetime, Release: api.Latest(), Lockout: cfg.Lockout(),
		TrustedProxies: cfg.Proxies(), SSO: web.SSO{Issuer: cfg.SSOIssuer, ClientID: cfg.SSOClientID, ClientSecret: cfg.SSOClientSecret,
			Name: cfg.SSOName}}, settings, web.API{Auditor: auditor, Webhooks: hooks, Records: records, Orders: orders, Files: files,
		Integrations: integrations},
		sessions, attempts, logger)
}

// startAuditor runs the audit trail's group commit while the server runs;
// it stops after the HTTP server, which fx stops first, has drained.
func startAuditor(lc fx.Lifecycle, log ports.AuditLog, tx ports.Transactor, companies ports.CompanyRepository,
	customers ports.CustomerRepository, clients ports.ClientRepository, logger *slog.Logger, tel *telemetry.Telemetry) *usecase.Auditor {
	if auditOff() {
		return nil
	}
	a := usecase.NewAuditor(log, tx, companies, customers, clients, logger)
	a.ObserveBatches(auditBatchMetrics(tel))
	lc.Append(fx.StartStopHook(a.Start, a.Stop))
	return a
}

func asHealthCheck(f any) any {
	return fx.Annotate(f, fx.ResultTags(`group:"health"`))
}

func asSection(f any) any {
	return fx.Annotate(f, fx.As(new(httpkit.Route)), fx.ResultTags(`group:"sections"`))
}

func asRoute(f any, anns ...fx.Annotation) any {
	return fx.Annotate(f, append(anns, fx.As(new(httpkit.Route)), fx.ResultTags(`group:"routes"`))...)
}

func openDatabase(lc fx.Lifecycle, cfg Config, tel *telemetry.Telemetry) (*bun.DB, error) {
	sqlstore.PrepareHot.Store(cfg.PrepareHot)
	db, err := sqlstore.OpenPool(cfg.DatabaseURL, cfg.DatabaseMaxConns)
	if err != nil {
		return nil, err
	}
	// A span per query with the statement as written (placeholders, never
	// the arguments); pool figures as metrics.
	if db, err = sqlstore.Instrument(db, cfg.DatabaseURL, tel.Tracer, tel.Meter); err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			if !cfg.AutoMigrate {
				return nil
			}
			return sqlstore.Migrate(ctx, db)
		},
		OnStop: func(context.Context) error { return db.Close() },
	})
	return db, nil
}

func openBlobStore(lc fx.Lifecycle, cfg Config, tel *telemetry.Telemetry) (*blobstore.Store, error) {
	s, err := blobstore.Open(context.Background(), cfg.BlobURL)
	if err != nil {
		return nil, err
	}
	s.Trace(tel.Tracer)
	lc.Append(fx.StopHook(s.Close))
	return s, nil
}

// serveHTTP listens in OnStart (so a taken port fails start-up), serves in a
// goroutine, and in OnStop turns /readyz to 503, keeps serving for
// PRAXIS_SHUTDOWN_DELAY, then stops accepting and lets in-flight requests
// finish; a connection that never sent a request is closed, not waited for.
func serveHTTP(lc fx.Lifecycle, cfg Config, app *fiber.App, health *httpapi.Health, orders *usecase.DeviceOrders, logger *slog.Logger) {
	var ln *quietListener
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			l, err := net.Listen("tcp", cfg.HTTPAddr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
			}
			ln = newQuietListener(l)
			logger.Info("serving", "addr", ln.Addr().String())
			go func() {
				if err := app.Listener(ln); err != nil {
					logger.Error("server stopped", "error", err.Error())
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			health.Drain()
			orders.Drain() // the bridges' long polls answer now, not after their wait
			select {
			case <-time.After(cfg.ShutdownDelay):
			case <-ctx.Done():
			}
			// While in-flight requests finish, connections that never sent a
			// request are closed rather than waited for.
			done := make(chan struct{})
			defer close(done)
			go func() {
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				for {
					ln.closeQuiet()
					select {
					case <-done:
						return
					case <-tick.C:
					}
				}
			}()
			return app.ShutdownWithContext(ctx)
		},
	})
}
