// Package app wires praxis: configuration, the fx graph of ports and
// adapters, and the praxis command line.
package app

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
)

// Config is praxis's environment (docs/contract.md §1). The defaults are the embedded
// mode: SQLite and local files under ./data, nothing else to run.
type Config struct {
	HTTPAddr    string `env:"PRAXIS_HTTP_ADDR" envDefault:":8080"`
	DatabaseURL string `env:"PRAXIS_DATABASE_URL" envDefault:"sqlite:data/praxis.db"`
	BlobURL     string `env:"PRAXIS_BLOB_URL" envDefault:"file://data/files"`
	AutoMigrate bool   `env:"PRAXIS_AUTO_MIGRATE" envDefault:"true"`
	// UploadIdleTimeout ends an upload whose client has sent nothing for this long.
	UploadIdleTimeout time.Duration `env:"PRAXIS_UPLOAD_IDLE_TIMEOUT" envDefault:"60s"`
	// RedisURL selects Redis for tokens and lockouts; empty keeps them in process.
	RedisURL string `env:"PRAXIS_REDIS_URL"`
	// RedisPrefix begins every key: deployments sharing one Redis keep apart
	// (replicas of one deployment share it: tokens, counts and budgets).
	RedisPrefix string        `env:"PRAXIS_REDIS_PREFIX" envDefault:"praxis:"`
	TokenTTL    time.Duration `env:"PRAXIS_TOKEN_TTL" envDefault:"1h"`
	// PublicURL is the issuer the OAuth metadata names; empty: the request's own scheme and host.
	PublicURL string `env:"PRAXIS_PUBLIC_URL"`
	// SettingsReverify is how long after a passkey check the settings show
	// or replace a secret without asking for the passkey again.
	SettingsReverify time.Duration `env:"PRAXIS_SETTINGS_REVERIFY" envDefault:"5m"`
	// SettingsIdle and SettingsLifetime end a session of the settings pages
	// after so long without a request, and so long after its sign-in.
	SettingsIdle     time.Duration `env:"PRAXIS_SETTINGS_IDLE_TIMEOUT" envDefault:"30m"`
	SettingsLifetime time.Duration `env:"PRAXIS_SETTINGS_SESSION_LIFETIME" envDefault:"12h"`
	// SSOIssuer, when set, offers staff sign-in at this OpenID provider
	// (authorization code with PKCE), matched by verified e-mail address.
	SSOIssuer       string `env:"PRAXIS_SSO_ISSUER"`
	SSOClientID     string `env:"PRAXIS_SSO_CLIENT_ID"`
	SSOClientSecret string `env:"PRAXIS_SSO_CLIENT_SECRET"`
	SSOName         string `env:"PRAXIS_SSO_NAME" envDefault:"single sign-on"`
	// AuthMaxFailures wrong secrets for one client id (or one company's
	// upload secret) within AuthFailureWindow lock it for AuthLockout.
	AuthMaxFailures   int           `env:"PRAXIS_AUTH_MAX_FAILURES" envDefault:"10"`
	AuthFailureWindow time.Duration `env:"PRAXIS_AUTH_FAILURE_WINDOW" envDefault:"15m"`
	AuthLockout       time.Duration `env:"PRAXIS_AUTH_LOCKOUT" envDefault:"1m"`
	// BlobMinFree is the free space a file:// blob store needs for /readyz to
	// answer 200 (default 256 MiB: a little more than the largest request).
	BlobMinFree int64 `env:"PRAXIS_BLOB_MIN_FREE" envDefault:"268435456"`
	// SweepInterval is how often the embedded mode deletes crash leftovers
	// in the blob store (0: never; with a shared database the chart's CronJob does).
	SweepInterval time.Duration `env:"PRAXIS_SWEEP_INTERVAL" envDefault:"1h"`
	// AuditRetention is how long audit events are kept (default 3 years,
	// the GTelG's and § 309 SGB V's period); older ones are swept hourly.
	AuditRetention time.Duration `env:"PRAXIS_AUDIT_RETENTION" envDefault:"26280h"`
	// Webhooks (docs/contract.md §12). The key seals the endpoints' signing
	// secrets: 32 bytes in base64, the same on every replica. Without it the
	// embedded mode keeps one in a file beside its database; a shared
	// database without it has no webhooks (registering one answers 409 webhooks-disabled).
	WebhookKey string `env:"PRAXIS_WEBHOOK_KEY"`
	// WebhookAllowPrivate lets endpoints be plain http and inside this
	// network (loopback, private, link-local): for tests and private networks.
	WebhookAllowPrivate bool          `env:"PRAXIS_WEBHOOK_ALLOW_PRIVATE" envDefault:"false"`
	WebhookLease        time.Duration `env:"PRAXIS_WEBHOOK_LEASE" envDefault:"30s"`
	WebhookPoll         time.Duration `env:"PRAXIS_WEBHOOK_POLL" envDefault:"250ms"`
	WebhookWorkers      int           `env:"PRAXIS_WEBHOOK_WORKERS" envDefault:"16"`
	// WebhookTimeScale shrinks the retry schedule and the five days before an
	// endpoint is disabled, for tests; 1 in production.
	WebhookTimeScale float64 `env:"PRAXIS_WEBHOOK_TIME_SCALE" envDefault:"1"`
	// RateLimits are the resource API's limits per OAuth client by plan.
	RateLimits string `env:"PRAXIS_RATE_LIMITS" envDefault:"basic=600/m,pro=3000/m,enterprise=12000/m"`
	// TrustedProxies are the addresses (CIDR ranges or single addresses,
	// comma-separated) whose X-Forwarded-For names the client: the ingress.
	TrustedProxies string `env:"PRAXIS_TRUSTED_PROXIES"`
	// LogLevel: debug, info, warn or error.
	LogLevel slog.Level `env:"PRAXIS_LOG_LEVEL" envDefault:"info"`
	// PrepareHot sends the statements nearly every request runs (a company,
	// an object by id) to PostgreSQL as prepared statements; off is for
	// the benchmark that compares the two.
	PrepareHot bool `env:"PRAXIS_DB_PREPARE_HOT" envDefault:"true"`
	// RequestTimeout is every request's deadline but the streams' (uploads,
	// downloads, the audit export) and the outbox's long poll, which gets
	// its wait on top: past it, a request waiting for the database or
	// Redis is answered 503 with Retry-After.
	RequestTimeout time.Duration `env:"PRAXIS_REQUEST_TIMEOUT" envDefault:"10s"`
	// ShutdownGrace is how long in-flight requests get after SIGTERM.
	ShutdownGrace time.Duration `env:"PRAXIS_SHUTDOWN_GRACE" envDefault:"30s"`
	// ShutdownDelay keeps serving (with /readyz at 503) this long after
	// SIGTERM before the listener closes, so that load balancers stop
	// sending new requests first.
	ShutdownDelay time.Duration `env:"PRAXIS_SHUTDOWN_DELAY" envDefault:"0s"`
}

// Lockout is the policy for wrong client and upload secrets.
func (c Config) Lockout() domain.LockoutPolicy {
	return domain.LockoutPolicy{MaxFailures: c.AuthMaxFailures, Window: c.AuthFailureWindow, Lockout: c.AuthLockout}
}

// Limits parses PRAXIS_RATE_LIMITS; LoadConfig has checked it.
func (c Config) Limits() domain.RateLimits {
	limits, _ := domain.ParseRateLimits(c.RateLimits)
	return limits
}

// Proxies parses PRAXIS_TRUSTED_PROXIES; LoadConfig has checked it.
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
	if _, err := domain.ParseRateLimits(cfg.RateLimits); err != nil {
		return Config{}, fmt.Errorf("PRAXIS_RATE_LIMITS: %w", err)
	}
	switch {
	case cfg.TokenTTL < time.Second:
		return Config{}, fmt.Errorf("PRAXIS_TOKEN_TTL must be at least 1s")
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
