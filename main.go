// Command coffer is the whole service in one binary: the web API, the
// background worker, the scheduler, migrations and admin commands. This
// file is the only reader of the environment; it builds every long-lived
// value and hands it down.
package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
	"golang.org/x/crypto/hkdf"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"coffer/api"
	"coffer/api/cli"
	"coffer/api/rest"
	"coffer/jobs"
	"coffer/jobs/assistant"
	"coffer/jobs/mail"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/migrations"
	"coffer/models"
	"coffer/models/secret"
	"coffer/sso"
	"coffer/worker"
)

const usage = `coffer: a self-hostable personal-finance service

Usage:
  coffer dev        web + worker + scheduler in one process (embedded storage unless
                    DATABASE_URL and REDIS_URL are set); migrates first
  coffer web        the HTTP API and screens (server mode)
  coffer worker     the background job worker (server mode)
  coffer scheduler  enqueues periodic jobs; run exactly one (server mode)
  coffer migrate    applies pending database migrations
  coffer config     checks the configuration and prints it, secrets masked
%s
Every command answers --help. Configuration comes from environment variables; see README.md.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintf(stdout, usage, cli.Usage())
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	adminOpts := &cli.Options{Stdin: stdin, Stdout: stdout}
	admin, err := cli.Parse(args, adminOpts)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil && !errors.Is(err, cli.ErrUnknown):
		fmt.Fprintf(stderr, "coffer: %v\n", err)
		return 2
	case admin != nil:
	case !slices.Contains([]string{"dev", "web", "worker", "scheduler", "migrate", "config"}, args[0]):
		fmt.Fprintf(stderr, "coffer: unknown command %q\n\n"+usage, strings.Join(args, " "), cli.Usage())
		return 2
	case len(args) > 1 && isHelp(args[1]):
		fmt.Fprintf(stdout, usage, "")
		return 0
	case len(args) > 1:
		fmt.Fprintf(stderr, "coffer %s takes no arguments, got %q\n", args[0], strings.Join(args[1:], " "))
		return 2
	}
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "coffer: invalid configuration:\n%v\n", err)
		return 2
	}
	// EXCHANGE_RATES_URL set to nothing means manual rates only; a blank
	// variable reads as unset (the public service) everywhere else.
	if v, set := os.LookupEnv("EXCHANGE_RATES_URL"); set && strings.TrimSpace(v) == "" {
		cfg.Rates.URL = ""
	}
	if args[0] == "config" {
		cli.Print(stdout, cfg)
		return 0
	}
	log := newLogger(cfg, stderr)
	if cfg.Env == "development" {
		if err := cli.DevelopmentSecrets(cfg.DataDir, &cfg.SecretKeyBase, &cfg.EncryptionKey, log); err != nil {
			fmt.Fprintf(stderr, "coffer: %v\n", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case admin != nil:
		adminOpts.Log, adminOpts.Retention, adminOpts.ArchiveDir = log, cfg.Retention, cfg.AuditArchiveDir
		err = withStore(ctx, cfg, func(s *models.Store) error { return admin(ctx, s) })
	case args[0] == "dev":
		err = runDev(ctx, cfg, log)
	case args[0] == "web":
		err = serve(ctx, cfg, log, "web", func(s *services) error { return serveWeb(ctx, cfg, s, log) })
	case args[0] == "worker":
		err = serve(ctx, cfg, log, "worker", func(s *services) error { return worker.Run(ctx, workerOptions(cfg, s, log)) })
	case args[0] == "scheduler":
		err = serve(ctx, cfg, log, "scheduler", func(s *services) error { return worker.RunScheduler(ctx, workerOptions(cfg, s, log)) })
	case args[0] == "migrate":
		err = runMigrate(ctx, cfg, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "coffer: %v\n", err)
		return 1
	}
	return 0
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

func newLogger(cfg *Config, w io.Writer) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(w, &slog.HandlerOptions{Level: cfg.LogLevel})
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: cfg.LogLevel})
	}
	return slog.New(h)
}

// openDB opens the configured database: PostgreSQL in server mode, the
// SQLite file under DATA_DIR in the embedded mode.
func openDB(ctx context.Context, cfg *Config) (*bun.DB, error) {
	if cfg.Embedded() {
		return models.OpenSQLite(ctx, filepath.Join(cfg.DataDir, "coffer.db"))
	}
	return models.OpenPostgres(ctx, cfg.DatabaseURL, cfg.DBMaxConns, cfg.DBConnectTimeout)
}

// openRedis connects to REDIS_URL, or starts the in-process Redis of the
// embedded mode (stopped by the returned function).
func openRedis(cfg *Config, log *slog.Logger) (asynq.RedisConnOpt, func(), error) {
	if cfg.RedisURL != "" {
		opt, err := asynq.ParseRedisURI(cfg.RedisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		if o, ok := opt.(asynq.RedisClientOpt); ok && o.TLSConfig != nil {
			o.TLSConfig.InsecureSkipVerify = cfg.RedisTLSSkipVerify
		}
		return opt, func() {}, nil
	}
	opt, stop, err := worker.EmbeddedRedis()
	if err != nil {
		return nil, nil, err
	}
	log.Warn("embedded mode: jobs are queued in memory and do not survive a restart; unfinished work is re-queued from the database at start")
	return opt, stop, nil
}

// services is what the long-running commands share.
type services struct {
	db      *bun.DB
	store   *models.Store
	redis   asynq.RedisConnOpt
	rdb     redis.UniversalClient
	queue   *asynq.Client
	watch   *rest.AuthWatch // run by a web process
	closers []func()
}

func (s *services) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

func openServices(ctx context.Context, cfg *Config, log *slog.Logger) (*services, error) {
	db, err := openDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &services{db: db, store: models.NewStore(db), closers: []func(){func() { db.Close() }}}
	if s.store.Secrets, err = secret.NewSealer(cfg.EncryptionKey, cfg.OldEncryptionKeys...); err != nil {
		s.close()
		return nil, err
	}
	opt, stopRedis, err := openRedis(cfg, log)
	if err != nil {
		s.close()
		return nil, err
	}
	s.redis, s.rdb = opt, worker.RequestRedis(opt, cfg.RedisTimeout)
	s.closers = append(s.closers, stopRedis, func() { s.rdb.Close() })
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.close()
		return nil, fmt.Errorf("connect to Redis: %w", err)
	}
	s.queue = asynq.NewClientFromRedisClient(s.rdb)
	s.watch = rest.NewAuthWatch(s.rdb)
	s.store.OnAuthChange(rest.AnnounceAuthChange(s.rdb, s.watch))
	// One balance policy for every write of the process, whichever door.
	// A write that leaves an account in another currency without rates
	// queues their fetch too.
	jobs.UseExchangeRates(s.store, s.queue, log, jobs.UseBalances(s.store, s.queue, log))
	return s, nil
}

// serve runs a long-lived command of the server mode on the services.
func serve(ctx context.Context, cfg *Config, log *slog.Logger, cmd string, fn func(*services) error) error {
	if cfg.Embedded() {
		return fmt.Errorf("`coffer %s` runs in server mode: set DATABASE_URL and REDIS_URL, or use `coffer dev` for the embedded mode", cmd)
	}
	s, err := openServices(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.close()
	go worker.TrimWhenIdle(ctx)
	if cfg.PprofAddr != "" {
		go func() {
			if err := api.ServeDebug(ctx, cfg.PprofAddr, log); err != nil {
				log.Error("profiler stopped", "error", err)
			}
		}()
	}
	return fn(s)
}

func workerOptions(cfg *Config, s *services, log *slog.Logger) worker.Options {
	o := cfg.Worker
	o.Redis, o.Logger = s.redis, log
	o.Handlers = &jobs.Handlers{Store: s.store, Queue: s.queue, Log: log, Retention: cfg.Retention, ArchiveDir: cfg.AuditArchiveDir,
		Rates:         jobs.NewRatesClient(cfg.Rates),
		WebhookClient: jobs.NewWebhookClient(jobs.WebhookOptions{AllowPrivateHosts: cfg.WebhooksAllowPrivate}),
		Mail:          mail.New(cfg.Mail, log), AppURL: cfg.AppURL}
	o.SimpleFIN = &simplefin.Handlers{Store: s.store, Queue: s.queue, Log: log, Redis: s.rdb, Options: cfg.SimpleFIN,
		Bridge: bridge.NewClient(cfg.SimpleFINClient)}
	o.Assistant = &assistant.Handlers{Store: s.store, Redis: s.rdb, Log: log, Options: cfg.Assistant}
	return o
}

// ssoOptions builds the provider registry, which follows changes made on
// any instance, derives the state-cookie key from the secrets key and, in
// yaml mode, mirrors AUTH_PROVIDERS_FILE into the database.
func ssoOptions(ctx context.Context, cfg *Config, s *services, log *slog.Logger) (api.SSOOptions, error) {
	client, err := sso.NewHTTPClient(cfg.SSOHTTPTimeout, cfg.SSOCAFile, cfg.SSOAllowPrivate)
	if err != nil {
		return api.SSOOptions{}, fmt.Errorf("SSO_CA_FILE: %w", err)
	}
	reg := sso.NewRegistry(s.store, s.rdb, sso.Options{BaseURL: cfg.AppURL, HTTPClient: client, SAMLSkew: cfg.SAMLClockSkew}, log)
	go reg.Watch(ctx)
	stateKey := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.New(sha256.New, cfg.EncryptionKey, nil, []byte("sso-state")), stateKey); err != nil {
		return api.SSOOptions{}, err
	}
	opts := api.SSOOptions{Registry: reg, StateKey: stateKey, JITMode: cfg.JITMode, AllowedDomains: cfg.AllowedOIDCDomains,
		MobilePKCERequired: cfg.MobileSSOPKCE == "required"}
	if cfg.AuthProvidersSource == "yaml" {
		opts.ProvidersFile = cfg.AuthProvidersFile
		err = reg.MirrorFile(ctx, cfg.AuthProvidersFile, os.Getenv)
	}
	return opts, err
}

func serveWeb(ctx context.Context, cfg *Config, s *services, log *slog.Logger) error {
	u, err := url.Parse(cfg.AppURL)
	if err != nil {
		return fmt.Errorf("APP_URL: %w", err)
	}
	ssoOpts, err := ssoOptions(ctx, cfg, s, log)
	if err != nil {
		return err
	}
	web := cfg.Web
	formKey := sha256.Sum256([]byte("coffer web forms\x00" + cfg.SecretKeyBase))
	web.Secret, web.Origin, web.SecureCookies = formKey[:], u.Scheme+"://"+u.Host, u.Scheme == "https"
	web.Development = cfg.Env == "development"
	// One bound on the memory of the process's password hashing, however
	// many requests hash at once (issue 24).
	web.HashSlots = semaphore.NewWeighted(int64(web.HashMemoryMiB) << 10)
	go s.watch.Run(ctx)
	if !cfg.Embedded() {
		log.Debug("database pool warmed", "connections", models.WarmPool(ctx, s.db, cfg.DBMaxConns))
	}
	app, err := api.New(api.Options{
		Store: s.store, Redis: s.rdb, Queue: s.queue, Logger: log, SSO: ssoOpts, Web: web, Mail: cfg.Mail, OAuth: cfg.OAuth,
		APIRateLimitPerHour: cfg.APIRateLimitPerHour, RequestTimeout: cfg.RequestTimeout, AssistantDailyTokens: cfg.Assistant.DailyTokens,
		InTurn:       inTurn(cfg),
		AssistantOff: !cfg.Assistant.Enabled(),
		Dashboard:    lazyDashboard(s.redis), AuthWatch: s.watch,
		SimpleFINAllowHTTP: cfg.SimpleFINClient.AllowHTTP, SimpleFINDailyBudget: cfg.SimpleFIN.DailyBudget,
		SimpleFINSyncCron: cfg.Worker.SimplefinSyncCron, SimpleFINSyncLocation: cfg.SimpleFIN.Location, SimpleFINSyncJitter: cfg.SimpleFIN.Jitter,
	})
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	log.Info("web listening", "addr", ln.Addr().String(), "url", cfg.AppURL)
	return api.Serve(ctx, app, ln)
}

// inTurn is how many requests a web process runs at once: as many as its
// database pool holds connections (PostgreSQL's DB_MAX_CONNS, SQLite's
// four), so that no request waits inside the pool, where the order is
// random.
func inTurn(cfg *Config) int {
	if cfg.Embedded() {
		return models.SQLiteConns
	}
	return cfg.DBMaxConns
}

// lazyDashboard builds the job dashboard (asynqmon) on its first request:
// asynqmon.New compiles a router of regular expressions (about 1 MB) that
// an idle web process would otherwise keep for a page only admins open
// (issue 16).
func lazyDashboard(redis asynq.RedisConnOpt) http.Handler {
	build := sync.OnceValue(func() http.Handler {
		return asynqmon.New(asynqmon.Options{RootPath: "/admin/jobs", RedisConnOpt: redis})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { build().ServeHTTP(w, r) })
}

// runDev migrates, then runs web, worker and scheduler in this process.
func runDev(ctx context.Context, cfg *Config, log *slog.Logger) error {
	s, err := openServices(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.close()
	applied, err := migrations.Up(ctx, s.db)
	if err != nil {
		return err
	}
	log.Info("database ready", "migrations_applied", len(applied), "embedded", cfg.Embedded())
	if cfg.Embedded() {
		// The in-memory queue starts empty: the database is the source of
		// truth, so recompute what queued work would have.
		if _, err := s.queue.EnqueueContext(ctx, jobs.NewRequeueTask()); err != nil {
			return fmt.Errorf("re-queue unfinished work: %w", err)
		}
	}
	fmt.Print(cli.Welcome(cfg.AppURL))
	go worker.TrimWhenIdle(ctx)
	g, ctx := errgroup.WithContext(ctx)
	opts := workerOptions(cfg, s, log)
	g.Go(func() error { return worker.Run(ctx, opts) })
	g.Go(func() error { return worker.RunScheduler(ctx, opts) })
	g.Go(func() error { return serveWeb(ctx, cfg, s, log) })
	return g.Wait()
}

func runMigrate(ctx context.Context, cfg *Config, stdout io.Writer) error {
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := migrations.Up(ctx, db)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "coffer: database is up to date")
	}
	for _, name := range applied {
		fmt.Fprintln(stdout, "applied", name)
	}
	return nil
}

// withStore opens the database for a one-shot admin command, applying
// pending migrations so that it also works on a brand-new embedded file.
func withStore(ctx context.Context, cfg *Config, fn func(*models.Store) error) error {
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if cfg.Embedded() {
		if _, err := migrations.Up(ctx, db); err != nil {
			return err
		}
	}
	s := models.NewStore(db)
	if s.Secrets, err = secret.NewSealer(cfg.EncryptionKey, cfg.OldEncryptionKeys...); err != nil {
		return err
	}
	if opt, err := asynq.ParseRedisURI(cfg.RedisURL); err == nil { // web processes drop a revoked key at once
		rdb := worker.RequestRedis(opt, cfg.RedisTimeout)
		defer rdb.Close()
		s.OnAuthChange(rest.AnnounceAuthChange(rdb, nil))
	}
	return fn(s)
}

// Config is every setting of the service, read from the environment once by
// loadConfig. A field's tag names its variable, its default and its bounds;
// the options that a package takes whole carry the same tags on their own
// fields, beside the code that uses them. README lists every variable.
type Config struct {
	Env                 string        `env:"COFFER_ENV" default:"development" oneof:"development production"`
	Host                string        `env:"HOST"` // default: 127.0.0.1, or 0.0.0.0 in production
	Port                int           `env:"PORT" default:"3000" min:"1" max:"65535"`
	AppURL              string        `env:"APP_URL"` // the public base URL; default http://localhost:PORT
	DatabaseURL         string        `env:"DATABASE_URL" secret:"url"`
	RedisURL            string        `env:"REDIS_URL" secret:"url"`
	RedisTLSSkipVerify  bool          `env:"REDIS_TLS_SKIP_VERIFY" default:"false"` // rediss:// with a self-signed certificate (Heroku)
	RedisTimeout        time.Duration `env:"REDIS_TIMEOUT" default:"300ms"`
	DataDir             string        `env:"DATA_DIR" default:"data"`
	DBMaxConns          int           `env:"DB_MAX_CONNS" default:"20" min:"1" max:"1000"`
	DBConnectTimeout    time.Duration `env:"DB_CONNECT_TIMEOUT" default:"500ms"`
	RequestTimeout      time.Duration `env:"REQUEST_TIMEOUT" default:"30s"`
	SecretKeyBase       string        `env:"SECRET_KEY_BASE" secret:"true"` // also signs the screens' forms
	APIRateLimitPerHour int           `env:"API_RATE_LIMIT_PER_HOUR" default:"10000" min:"0" max:"100000000"`
	LogLevel            slog.Level    `env:"LOG_LEVEL" default:"info" want:"debug, info, warn or error"`
	LogFormat           string        `env:"LOG_FORMAT" default:"text" oneof:"text json"`
	PprofAddr           string        `env:"PPROF_ADDR"` // e.g. 127.0.0.1:6060: Go's profiler, loopback only

	JITMode             string        `env:"AUTH_JIT_MODE" default:"create_and_link" oneof:"create_and_link link_only"`
	AllowedOIDCDomains  []string      `env:"ALLOWED_OIDC_DOMAINS"`
	MobileSSOPKCE       string        `env:"MOBILE_SSO_PKCE" default:"optional" oneof:"required optional"`
	AuthProvidersSource string        `env:"AUTH_PROVIDERS_SOURCE" default:"db" oneof:"db yaml"`
	AuthProvidersFile   string        `env:"AUTH_PROVIDERS_FILE" default:"config/auth_providers.yml"`
	SSOHTTPTimeout      time.Duration `env:"SSO_HTTP_TIMEOUT" default:"10s"`
	SSOCAFile           string        `env:"SSO_CA_FILE"`             // extra PEM CAs for identity providers' TLS
	SSOAllowPrivate     bool          `env:"SSO_ALLOW_PRIVATE_HOSTS"` // default: on in development (Dex or Keycloak on localhost)
	SAMLClockSkew       time.Duration `env:"SAML_CLOCK_SKEW" default:"90s"`
	// WebhooksAllowPrivate lets webhook endpoints be on private and
	// loopback addresses; default: on in development.
	WebhooksAllowPrivate bool `env:"WEBHOOKS_ALLOW_PRIVATE_HOSTS"`

	RetentionTier     string   `env:"AUDIT_RETENTION_TIER" default:"standard" oneof:"standard extended compliance"`
	AuditArchiveDir   string   `env:"AUDIT_ARCHIVE_DIR"` // default: DATA_DIR/audit-archive
	EncryptionKey     []byte   `env:"SECRETS_ENCRYPTION_KEY" secret:"true"`
	OldEncryptionKeys [][]byte `env:"SECRETS_ENCRYPTION_OLD_KEYS"` // former keys, decrypt only
	Retention         jobs.Retention
	Rates             jobs.RatesOptions // EXCHANGE_RATES_URL: off, or empty, for manual rates only

	Web             api.WebOptions // serveWeb adds what APP_URL and SECRET_KEY_BASE give
	OAuth           api.OAuthOptions
	Mail            mail.Options // SMTP_URL empty in development: mail goes to the log
	Worker          worker.Options
	SimpleFINClient bridge.Options
	SimpleFIN       simplefin.Options
	Assistant       assistant.Options
}

// Embedded reports whether the service runs on the SQLite file and the
// in-process Redis.
func (c *Config) Embedded() bool { return c.DatabaseURL == "" && c.RedisURL == "" }

// loadConfig reads the environment and reports every invalid variable at
// once, before anything starts.
func loadConfig(getenv func(string) string) (*Config, error) {
	e := &cli.Env{Getenv: getenv}
	c := &Config{}
	e.Fill(c)
	production := c.Env == "production"
	// The defaults that follow from other settings. Open sign-up suits a
	// laptop; a public server lets families in by invitation unless the
	// operator opens it.
	if !e.Set("AUTH_SIGNUP_ENABLED") {
		c.Web.SignupEnabled = !production
	}
	if !e.Set("SSO_ALLOW_PRIVATE_HOSTS") {
		c.SSOAllowPrivate = !production
	}
	if !e.Set("WEBHOOKS_ALLOW_PRIVATE_HOSTS") {
		c.WebhooksAllowPrivate = !production
	}
	c.Host = cmp.Or(c.Host, map[bool]string{true: "0.0.0.0", false: "127.0.0.1"}[production])
	c.AppURL = strings.TrimRight(cmp.Or(c.AppURL, fmt.Sprintf("http://localhost:%d", c.Port)), "/")
	c.AuditArchiveDir = cmp.Or(c.AuditArchiveDir, filepath.Join(c.DataDir, "audit-archive"))
	c.Retention, _ = jobs.RetentionTier(c.RetentionTier)
	c.Mail.LogOnly = c.Mail.SMTPURL == "" && !production
	c.Web.Argon2 = secret.DefaultArgon2
	for i, d := range c.AllowedOIDCDomains {
		c.AllowedOIDCDomains[i] = strings.TrimPrefix(strings.ToLower(d), "@")
	}
	if loc, err := time.LoadLocation(c.Worker.SimplefinSyncTZ); err != nil {
		e.Problem("SIMPLEFIN_SYNC_TZ is not a time zone: %q", c.Worker.SimplefinSyncTZ)
	} else {
		c.SimpleFIN.Location = loc
	}
	if strings.EqualFold(c.Rates.URL, "off") {
		c.Rates.URL = ""
	}
	if u := c.Rates.URL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		e.Problem("EXCHANGE_RATES_URL must start with http:// or https://, or be off, got %q", u)
	}
	if !strings.HasPrefix(c.AppURL, "http://") && !strings.HasPrefix(c.AppURL, "https://") {
		e.Problem("APP_URL must start with http:// or https://, got %q", c.AppURL)
	}
	for _, p := range c.Web.TrustedProxies {
		if _, _, err := net.ParseCIDR(p); net.ParseIP(p) == nil && err != nil {
			e.Problem("TRUSTED_PROXIES: %q is neither an IP nor a CIDR", p)
		}
	}
	if (c.DatabaseURL == "") != (c.RedisURL == "") {
		e.Problem("DATABASE_URL and REDIS_URL go together: set both for server mode, or neither for the embedded mode")
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		e.Problem("DATABASE_URL must be a postgres:// URL")
	}
	if _, err := asynq.ParseRedisURI(c.RedisURL); c.RedisURL != "" && err != nil {
		e.Problem("REDIS_URL is not a valid Redis URL: %v", err)
	}
	if production {
		if c.EncryptionKey == nil {
			e.Problem("SECRETS_ENCRYPTION_KEY is required in production (openssl rand -base64 32)")
		}
		if len(c.SecretKeyBase) < 32 {
			e.Problem("SECRET_KEY_BASE is required in production (at least 32 characters)")
		}
		if !e.Set("APP_URL") {
			e.Problem("APP_URL is required in production")
		}
		if c.Embedded() {
			e.Problem("production needs DATABASE_URL and REDIS_URL")
		}
	}
	return c, e.Err()
}
