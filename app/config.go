// Package app wires praxis: configuration, the fx graph of ports and
// adapters, and the praxis command line.
package app

//go:generate go run ./internal/genref config.go ../docs/reference

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/praxis-health/praxis/domain"
	"github.com/praxis-health/praxis/domain/ratelimit"
)

// Config is praxis's environment (docs/contract.md §1). The defaults are the embedded
// mode: SQLite and local files under ./data, nothing else to run.
type Config struct {
	// HTTPAddr is the listen address.
	HTTPAddr string `env:"PRAXIS_HTTP_ADDR" envDefault:":8080"`
	// DatabaseURL selects the database: `postgres://user:pass@host:5432/db?sslmode=…` PostgreSQL;
	// several hosts with `target_session_attrs=read-write`
	// (`postgres://u:p@pg-0:5432,pg-1:5432/db?target_session_attrs=read-write`) follow a failover
	// (docs/operators/failures.md); `sqlite:PATH` SQLite.
	DatabaseURL string `env:"PRAXIS_DATABASE_URL" envDefault:"sqlite:data/praxis.db"`
	// DatabaseMaxConns is how many connections to PostgreSQL a replica keeps at most (each
	// replica its own; SQLite uses one). `0`: four for each CPU the process may use, at least 8 —
	// a pool about as wide as the CPUs costs PostgreSQL less per query than a wide one whose
	// backends sleep between queries.
	DatabaseMaxConns int `env:"PRAXIS_DATABASE_MAX_CONNS" envDefault:"0"`
	// CompanyConcurrency is how many requests of one practice a replica serves at once through
	// the resource API and FHIR (a bridge's long poll holds none while it waits): its share of the
	// database pool, so that one practice's heavy day cannot take the pool from the others. As many
	// more wait up to 100 ms; any other is answered 429 `company-busy` with `Retry-After: 1`. `0`:
	// half the database pool (`PRAXIS_DATABASE_MAX_CONNS`, or its default), at least 2.
	CompanyConcurrency int `env:"PRAXIS_COMPANY_CONCURRENCY" envDefault:"0"`
	// BlobURL is where file bytes live: `file://DIR` (made absolute; praxis adds `create_dir=true`,
	// `no_tmp_dir=true` and `metadata=skip` unless the URL says otherwise), `mem://` (tests),
	// `s3://bucket?endpoint=…&region=…`.
	BlobURL string `env:"PRAXIS_BLOB_URL" envDefault:"file://data/files"`
	// AutoMigrate: `serve` and the admin commands apply migrations first; set `false` where a
	// migration job does it.
	AutoMigrate bool `env:"PRAXIS_AUTO_MIGRATE" envDefault:"true"`
	// UploadIdleTimeout: an upload whose client sends nothing for this long is answered 400 and
	// discarded (a whole request may take at most 10 minutes).
	UploadIdleTimeout time.Duration `env:"PRAXIS_UPLOAD_IDLE_TIMEOUT" envDefault:"60s"`
	// RedisURL keeps tokens, throttling counts and rate budgets in Redis, shared by every replica:
	// `redis://[:pass@]host:6379/0` or `rediss://`; with Sentinel
	// `redis://[:pass@]sentinel-0:26379/0?master_name=praxis&addr=sentinel-1:26379&addr=…`. Empty keeps
	// them in process (embedded mode, one replica). Commands time out after 1 s (dial, read, write)
	// with one retry, unless the URL says otherwise (`?read_timeout=…`).
	RedisURL string `env:"PRAXIS_REDIS_URL"`
	// RedisPrefix begins every key: deployments sharing one Redis keep apart (the replicas of one
	// deployment share it).
	RedisPrefix string `env:"PRAXIS_REDIS_PREFIX" envDefault:"praxis:"`
	// TokenTTL is the access tokens' lifetime (at least `1s`).
	TokenTTL time.Duration `env:"PRAXIS_TOKEN_TTL" envDefault:"1h"`
	// PublicURL is the public origin, e.g. `https://praxis.example`: the issuer the RFC 8414
	// metadata names (empty: the scheme and host of the request), and the settings pages' origin,
	// whose host is the passkeys' relying party (empty: `http://localhost:<port>`; with an IP
	// address the settings pages are off, the API serves on).
	PublicURL string `env:"PRAXIS_PUBLIC_URL"`
	// SettingsReverify is how long after a passkey check the settings pages show or replace a
	// secret without asking for the passkey again.
	SettingsReverify time.Duration `env:"PRAXIS_SETTINGS_REVERIFY" envDefault:"5m"`
	// SettingsIdle: a settings session ends after so long without a request.
	SettingsIdle time.Duration `env:"PRAXIS_SETTINGS_IDLE_TIMEOUT" envDefault:"30m"`
	// SettingsLifetime: a settings session ends so long after its sign-in, however busy.
	SettingsLifetime time.Duration `env:"PRAXIS_SETTINGS_SESSION_LIFETIME" envDefault:"12h"`
	// SSOIssuer is an OpenID provider's issuer URL: the sign-in page offers single sign-on there
	// besides passkeys (authorization code with PKCE; the person is matched by the verified e-mail
	// address of exactly one account).
	SSOIssuer string `env:"PRAXIS_SSO_ISSUER"`
	// SSOClientID is praxis's client at that provider; register the redirect URI
	// `<PRAXIS_PUBLIC_URL>/settings/sso/callback` and the scopes `openid email`.
	SSOClientID string `env:"PRAXIS_SSO_CLIENT_ID"`
	// SSOClientSecret is that client's secret.
	SSOClientSecret string `env:"PRAXIS_SSO_CLIENT_SECRET"`
	// SSOName is what the button calls the provider ("Sign in with …").
	SSOName string `env:"PRAXIS_SSO_NAME" envDefault:"single sign-on"`
	// AuthMaxFailures wrong secrets from one address for one client id or company upload door
	// (five times as many from one address in all) slow that address down …
	AuthMaxFailures int `env:"PRAXIS_AUTH_MAX_FAILURES" envDefault:"10"`
	// AuthFailureWindow: … when they fall within this window …
	AuthFailureWindow time.Duration `env:"PRAXIS_AUTH_FAILURE_WINDOW" envDefault:"15m"`
	// AuthLockout: … for this long (429 with `Retry-After`, even for the right secret from that
	// address; other addresses are never refused).
	AuthLockout time.Duration `env:"PRAXIS_AUTH_LOCKOUT" envDefault:"1m"`
	// BlobMinFree is the bytes a `file://` blob store must have free for `/readyz` to answer 200
	// (`blob_store: low_disk` below it; the default, 256 MiB, is a little more than the largest
	// request).
	BlobMinFree int64 `env:"PRAXIS_BLOB_MIN_FREE" envDefault:"268435456"`
	// SweepInterval: on SQLite (the embedded mode) the server deletes crash leftovers in the blob
	// store older than an hour this often; `0` never (with a shared database the chart's CronJob
	// does).
	SweepInterval time.Duration `env:"PRAXIS_SWEEP_INTERVAL" envDefault:"1h"`
	// AuditRetention is how long audit events are kept (three years, the GTelG's and § 309 SGB V's
	// period); every server deletes older ones hourly, keeping the chain verifiable.
	AuditRetention time.Duration `env:"PRAXIS_AUDIT_RETENTION" envDefault:"26280h"`
	// WebhookKey is 32 random bytes in base64 (`openssl rand -base64 32`) that seal the webhook
	// endpoints' signing secrets in the database (docs/contract.md §12); **the same on every
	// replica**. Empty: the embedded mode makes one in `webhook.key` beside its SQLite file; on
	// PostgreSQL webhooks are off (registering, rotating or testing an endpoint answers 409
	// `webhooks-disabled`, no `Retry-After`).
	WebhookKey string `env:"PRAXIS_WEBHOOK_KEY"`
	// WebhookAllowPrivate lets webhook endpoints be plain `http` and inside this network
	// (loopback, private, link-local): for tests and closed networks only.
	WebhookAllowPrivate bool `env:"PRAXIS_WEBHOOK_ALLOW_PRIVATE" envDefault:"false"`
	// WebhookLease is how long an endpoint stays with one replica without a word from it (a
	// killed replica's endpoints pass on after this).
	WebhookLease time.Duration `env:"PRAXIS_WEBHOOK_LEASE" envDefault:"30s"`
	// WebhookPoll is how often the dispatcher looks for new changes and for endpoints to drive.
	WebhookPoll time.Duration `env:"PRAXIS_WEBHOOK_POLL" envDefault:"250ms"`
	// WebhookWorkers is how many endpoints one replica delivers to at once.
	WebhookWorkers int `env:"PRAXIS_WEBHOOK_WORKERS" envDefault:"16"`
	// WebhookTimeScale shrinks the retry schedule and the five days before an endpoint is
	// disabled (tests only, `0 < x ≤ 1`).
	WebhookTimeScale float64 `env:"PRAXIS_WEBHOOK_TIME_SCALE" envDefault:"1"`
	// ExportLease is how long a FHIR export stays with the replica running it without a word
	// from it (a killed replica's export is started again by another after this).
	ExportLease time.Duration `env:"PRAXIS_EXPORT_LEASE" envDefault:"30s"`
	// RateLimits are the resource API's requests per OAuth client and window, by the company's
	// plan (`s`, `m` or `h`).
	RateLimits string `env:"PRAXIS_RATE_LIMITS" envDefault:"basic=600/m,pro=3000/m,enterprise=12000/m"`
	// TrustedProxies are the addresses or CIDR ranges (comma-separated) of the ingress proxies,
	// whose `X-Forwarded-For` names the client; from any other peer the header is ignored (the
	// chart's `config.trustedProxies`).
	TrustedProxies string `env:"PRAXIS_TRUSTED_PROXIES"`
	// LogLevel is `debug`, `info`, `warn` or `error`; the log is JSON lines on stdout.
	LogLevel slog.Level `env:"PRAXIS_LOG_LEVEL" envDefault:"info"`
	// PrepareHot: on PostgreSQL, send the statements nearly every request runs (a company, an
	// object by id, a sync's page, the audit append) as prepared statements; `false` only to
	// compare (the `prepared` benchmark).
	PrepareHot bool `env:"PRAXIS_DB_PREPARE_HOT" envDefault:"true"`
	// RequestTimeout is every request's deadline (not the uploads, a file's download, the audit
	// export, a FHIR export's file; the outbox's long poll gets its longest `wait` on top): past it, a request waiting for the
	// database or Redis is answered 503 with `Retry-After`.
	RequestTimeout time.Duration `env:"PRAXIS_REQUEST_TIMEOUT" envDefault:"10s"`
	// ShutdownGrace: after SIGTERM (and PRAXIS_SHUTDOWN_DELAY), stop accepting and give in-flight
	// requests, uploads included, this long; the process exits 0 when they are done, non-zero if
	// the grace ran out.
	ShutdownGrace time.Duration `env:"PRAXIS_SHUTDOWN_GRACE" envDefault:"30s"`
	// ShutdownDelay: after SIGTERM, keep serving this long with `/readyz` at 503, so that load
	// balancers stop sending first (the chart sets `5s`).
	ShutdownDelay time.Duration `env:"PRAXIS_SHUTDOWN_DELAY" envDefault:"0s"`
}

// Lockout is the policy for wrong client and upload secrets.
func (c Config) Lockout() domain.LockoutPolicy {
	return domain.LockoutPolicy{MaxFailures: c.AuthMaxFailures, Window: c.AuthFailureWindow, Lockout: c.AuthLockout}
}

// Limits parses PRAXIS_RATE_LIMITS; LoadConfig has checked it.
func (c Config) Limits() ratelimit.Limits {
	limits, _ := ratelimit.ParseLimits(c.RateLimits)
	return limits
}

// SiteURL is the origin of the settings pages: PRAXIS_PUBLIC_URL, else
// http://localhost on the listening port (the embedded mode on one machine).
// Its host is the passkeys' relying party, so it is a name, never an address.
func (c Config) SiteURL() string {
	if c.PublicURL != "" {
		return strings.TrimSuffix(c.PublicURL, "/")
	}
	_, port, err := net.SplitHostPort(c.HTTPAddr)
	if err != nil || port == "" {
		port = "8080"
	}
	return "http://localhost:" + port
}

// Proxies parses PRAXIS_TRUSTED_PROXIES; LoadConfig has checked it.
func (c Config) Proxies() []netip.Prefix {
	out, _ := parseProxies(c.TrustedProxies)
	return out
}

func parseProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("PRAXIS_TRUSTED_PROXIES: %q is no address or CIDR range", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// LoadConfig reads the environment.
func LoadConfig() (Config, error) {
	cfg, err := env.ParseAs[Config]()
	if err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	cfg.BlobURL, err = normalizeBlobURL(cfg.BlobURL)
	if err != nil {
		return Config{}, err
	}
	if _, err := parseProxies(cfg.TrustedProxies); err != nil {
		return Config{}, err
	}
	if _, err := ratelimit.ParseLimits(cfg.RateLimits); err != nil {
		return Config{}, fmt.Errorf("PRAXIS_RATE_LIMITS: %w", err)
	}
	switch {
	case cfg.TokenTTL < time.Second:
		return Config{}, fmt.Errorf("PRAXIS_TOKEN_TTL must be at least 1s")
	case cfg.DatabaseMaxConns < 0:
		return Config{}, fmt.Errorf("PRAXIS_DATABASE_MAX_CONNS must be 0 (by the CPUs) or more")
	case cfg.CompanyConcurrency < 0:
		return Config{}, fmt.Errorf("PRAXIS_COMPANY_CONCURRENCY must be 0 (the pool's size) or more")
	case cfg.AuthMaxFailures < 1:
		return Config{}, fmt.Errorf("PRAXIS_AUTH_MAX_FAILURES must be at least 1")
	case cfg.AuthFailureWindow < time.Millisecond || cfg.AuthLockout < time.Millisecond:
		return Config{}, fmt.Errorf("PRAXIS_AUTH_FAILURE_WINDOW and PRAXIS_AUTH_LOCKOUT must be positive")
	case cfg.RequestTimeout < 100*time.Millisecond:
		return Config{}, fmt.Errorf("PRAXIS_REQUEST_TIMEOUT must be at least 100ms")
	case cfg.ShutdownGrace <= 0 || cfg.ShutdownDelay < 0 || cfg.ShutdownDelay >= cfg.ShutdownGrace:
		return Config{}, fmt.Errorf("PRAXIS_SHUTDOWN_GRACE must be positive and longer than PRAXIS_SHUTDOWN_DELAY")
	case cfg.WebhookLease < time.Second || cfg.WebhookPoll <= 0 || cfg.WebhookWorkers < 1 || cfg.WebhookTimeScale <= 0 || cfg.WebhookTimeScale > 1:
		return Config{}, fmt.Errorf("PRAXIS_WEBHOOK_LEASE must be at least 1s, PRAXIS_WEBHOOK_POLL positive, PRAXIS_WEBHOOK_WORKERS at least 1, PRAXIS_WEBHOOK_TIME_SCALE in (0, 1]")
	case cfg.ExportLease < time.Second:
		return Config{}, fmt.Errorf("PRAXIS_EXPORT_LEASE must be at least 1s")
	}
	return cfg, nil
}

// normalizeBlobURL makes a relative file:// path absolute and sets the local
// store's defaults: create the directory, write temp files beside their
// target (a rename never crosses a mount), and keep no metadata sidecars (the
// database has the content type).
func normalizeBlobURL(raw string) (string, error) {
	if !strings.HasPrefix(raw, "file://") {
		return raw, nil
	}
	rest, query, _ := strings.Cut(strings.TrimPrefix(raw, "file://"), "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("PRAXIS_BLOB_URL: %w", err)
	}
	abs, err := filepath.Abs(rest)
	if err != nil {
		return "", fmt.Errorf("PRAXIS_BLOB_URL: %w", err)
	}
	for k, v := range map[string]string{"create_dir": "true", "no_tmp_dir": "true", "metadata": "skip"} {
		if !q.Has(k) {
			q.Set(k, v)
		}
	}
	return "file://" + filepath.ToSlash(abs) + "?" + q.Encode(), nil
}
