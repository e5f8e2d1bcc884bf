// Command coffer is the whole service in one binary: the web API, the
// background worker, the scheduler, migrations and admin commands. This
// file is the only reader of the environment; it builds every long-lived
// value and hands it down.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
	"golang.org/x/crypto/hkdf"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"coffer/api"
	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/migrations"
	"coffer/models"
	"coffer/sso"
	"coffer/worker"
)

const usage = `coffer: a self-hostable personal-finance service

Usage:
  coffer dev                 web + worker + scheduler in one process (embedded storage unless
                             DATABASE_URL and REDIS_URL are set); migrates first
  coffer web                 the HTTP API (server mode)
  coffer worker              the background job worker (server mode)
  coffer scheduler           enqueues periodic jobs; run exactly one (server mode)
  coffer migrate             applies pending database migrations
  coffer users create --email E [--password P] [--role member|admin|super_admin]
                      [--family NAME | --family-id ID] [--currency CUR]
  coffer users set-role --email E --role member|admin|super_admin
  coffer users set-password --email E [--password P]
                             (the way back in when password sign-in is limited or off)
  coffer apikeys create --email E [--name N] [--scope read|read_write] [--expires-in 720h]
  coffer audit archive       applies the audit retention tier now (also a scheduled job)
  coffer secrets backfill [--dry-run]
                             seals plaintext secrets and re-seals old-key values (also a job at
                             every worker start)

Configuration comes from environment variables; see README.md.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "coffer: invalid configuration:\n%v\n", err)
		return 2
	}
	log := newLogger(cfg, stderr)
	if cfg.Env == "development" {
		if err := developmentSecrets(cfg, log); err != nil {
			fmt.Fprintf(stderr, "coffer: %v\n", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch cmd := strings.Join(args[:min(2, len(args))], " "); {
	case args[0] == "dev":
		err = runDev(ctx, cfg, log)
	case args[0] == "web":
		err = runWeb(ctx, cfg, log)
	case args[0] == "worker":
		err = runWorker(ctx, cfg, log)
	case args[0] == "scheduler":
		err = runScheduler(ctx, cfg, log)
	case args[0] == "migrate":
		err = runMigrate(ctx, cfg, log, stdout)
	case cmd == "users create":
		err = createUser(ctx, cfg, args[2:], stdin, stdout)
	case cmd == "users set-role":
		err = setUserRole(ctx, cfg, args[2:], stdout)
	case cmd == "users set-password":
		err = setUserPassword(ctx, cfg, args[2:], stdin, stdout)
	case cmd == "apikeys create":
		err = createAPIKey(ctx, cfg, args[2:], stdout)
	case cmd == "audit archive":
		err = withStore(ctx, cfg, func(s *models.Store) error {
			h := &jobs.Handlers{Store: s, Log: log, Retention: cfg.Retention, ArchiveDir: cfg.AuditArchiveDir}
			n, err := h.ArchiveAudit(ctx)
			if err == nil {
				fmt.Fprintf(stdout, "audit retention (%s): %d records left the database\n", cfg.Retention.Name, n)
			}
			return err
		})
	case cmd == "secrets backfill":
		dry := len(args) > 2 && args[2] == "--dry-run"
		err = withStore(ctx, cfg, func(s *models.Store) error {
			r, err := s.BackfillSecrets(ctx, dry)
			if err == nil {
				fmt.Fprintf(stdout, "secrets backfill (dry run: %t): scanned %d, encrypted %d, re-encrypted %d, already current %d, unreadable %d\n",
					dry, r.Scanned, r.Encrypted, r.Reencrypted, r.Current, r.Unreadable)
			}
			return err
		})
	default:
		fmt.Fprintf(stderr, "coffer: unknown command %q\n\n%s", strings.Join(args, " "), usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "coffer: %v\n", err)
		return 1
	}
	return 0
}

func newLogger(cfg *Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openDB opens the configured database: PostgreSQL in server mode, the
// SQLite file under DATA_DIR in the embedded mode.
func openDB(ctx context.Context, cfg *Config) (*bun.DB, error) {
	if cfg.Embedded() {
		return models.OpenSQLite(ctx, filepath.Join(cfg.DataDir, "coffer.db"))
	}
	return models.OpenPostgres(ctx, cfg.DatabaseURL, cfg.DBMaxConns)
}

// openRedis connects to REDIS_URL, or starts the in-process Redis of the
// embedded mode (stopped by the returned function).
func openRedis(ctx context.Context, cfg *Config, log *slog.Logger) (asynq.RedisConnOpt, func(), error) {
	if cfg.RedisURL != "" {
		opt, err := asynq.ParseRedisURI(cfg.RedisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		return opt, func() {}, nil
	}
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return nil, nil, fmt.Errorf("start in-process Redis: %w", err)
	}
	// miniredis keeps its own clock; moving it forward makes TTLs (rate
	// limit windows, unique-task locks) expire in real time.
	ticker := time.NewTicker(time.Second)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ticker.C:
				mr.FastForward(time.Second)
			case <-done:
				return
			}
		}
	}()
	log.Warn("embedded mode: jobs are queued in memory and do not survive a restart; unfinished work is re-queued from the database at start")
	return asynq.RedisClientOpt{Addr: mr.Addr()}, func() { ticker.Stop(); close(done); mr.Close() }, nil
}

// services is what the long-running commands share.
type services struct {
	db      *bun.DB
	store   *models.Store
	redis   asynq.RedisConnOpt
	rdb     redis.UniversalClient
	queue   *asynq.Client
	closers []func()
}

func (s *services) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

func openServices(ctx context.Context, cfg *Config, log *slog.Logger) (*services, error) {
	s := &services{}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.db, s.store = db, models.NewStore(db)
	if s.store.Secrets, err = models.NewSealer(cfg.EncryptionKey, cfg.OldEncryptionKeys...); err != nil {
		db.Close()
		return nil, err
	}
	s.closers = append(s.closers, func() { db.Close() })
	opt, stopRedis, err := openRedis(ctx, cfg, log)
	if err != nil {
		s.close()
		return nil, err
	}
	s.redis = opt
	s.closers = append(s.closers, stopRedis)
	s.rdb = opt.MakeRedisClient().(redis.UniversalClient)
	s.closers = append(s.closers, func() { s.rdb.Close() })
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.close()
		return nil, fmt.Errorf("connect to Redis: %w", err)
	}
	s.queue = asynq.NewClientFromRedisClient(s.rdb)
	return s, nil
}

func (s *services) handlers(cfg *Config, log *slog.Logger) *jobs.Handlers {
	return &jobs.Handlers{Store: s.store, Queue: s.queue, Log: log, Retention: cfg.Retention, ArchiveDir: cfg.AuditArchiveDir}
}

func (s *services) simplefinHandlers(cfg *Config, log *slog.Logger) *simplefin.Handlers {
	return &simplefin.Handlers{Store: s.store, Queue: s.queue, Log: log, Redis: s.rdb, Options: cfg.SimpleFIN,
		Bridge: bridge.NewClient(bridge.Options{AllowHTTP: cfg.SimpleFINAllowHTTP,
			AllowPrivateHosts: cfg.SimpleFINAllowPrivate, ClaimTimeout: cfg.SimpleFINClaimTimeout,
			AccountsTimeout: cfg.SimpleFINAccountsTimeout})}
}

func workerOptions(cfg *Config, s *services, log *slog.Logger) worker.Options {
	return worker.Options{
		Redis: s.redis, Handlers: s.handlers(cfg, log), SimpleFIN: s.simplefinHandlers(cfg, log), Logger: log,
		Concurrency: cfg.WorkerConcurrency, BalanceSweepCron: cfg.BalanceSweepCron, AuditArchiveCron: cfg.AuditArchiveCron,
		SimplefinSyncCron: cfg.SimpleFINSyncCron, SimplefinSyncTZ: cfg.SimpleFINSyncTZ,
	}
}

// webOptions derives the browser settings; the form-signing secret comes
// from SECRET_KEY_BASE.
func webOptions(cfg *Config, log *slog.Logger) (api.WebOptions, error) {
	u, err := url.Parse(cfg.AppURL)
	if err != nil {
		return api.WebOptions{}, fmt.Errorf("APP_URL: %w", err)
	}
	sum := sha256.Sum256([]byte("coffer web forms\x00" + cfg.SecretKeyBase))
	secret := sum[:]
	return api.WebOptions{
		Secret: secret, Origin: u.Scheme + "://" + u.Host, SecureCookies: u.Scheme == "https",
		SessionIdle: cfg.SessionIdle, SessionMaxAge: cfg.SessionMaxAge,
		LocalLogin: cfg.LocalLoginEnabled, AdminOverride: cfg.LocalAdminOverride,
		Argon2:             models.DefaultArgon2,
		MaxFailuresAccount: cfg.MaxFailuresAccount, MaxFailuresIP: cfg.MaxFailuresIP, LockoutWindow: cfg.LockoutWindow,
		TrustedProxies: cfg.TrustedProxies, AdminRateLimit: cfg.AdminRateLimit,
	}, nil
}

// ssoOptions builds the provider registry, which follows changes made on
// any instance, and derives the state-cookie key from the secrets key.
func ssoOptions(ctx context.Context, cfg *Config, s *services, log *slog.Logger) (api.SSOOptions, error) {
	client, err := ssoHTTPClient(cfg)
	if err != nil {
		return api.SSOOptions{}, err
	}
	reg := sso.NewRegistry(s.store, s.rdb, sso.Options{BaseURL: cfg.AppURL, HTTPClient: client, SAMLSkew: cfg.SAMLClockSkew}, log)
	go reg.Watch(ctx)
	stateKey := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.New(sha256.New, cfg.EncryptionKey, nil, []byte("sso-state")), stateKey); err != nil {
		return api.SSOOptions{}, err
	}
	opts := api.SSOOptions{Registry: reg, StateKey: stateKey, JITMode: cfg.JITMode, AllowedDomains: cfg.AllowedOIDCDomains}
	if cfg.AuthProvidersSource == "yaml" {
		if err := mirrorProvidersFile(ctx, cfg, s, reg, log); err != nil {
			return api.SSOOptions{}, err
		}
		opts.ProvidersFile = cfg.AuthProvidersFile
	}
	return opts, nil
}

// mirrorProvidersFile applies AUTH_PROVIDERS_FILE at start (yaml mode):
// every entry is validated (an unreachable discovery document only
// warns, so one IdP being down does not stop the service), its secrets
// sealed, and the set mirrored into the database for every instance.
func mirrorProvidersFile(ctx context.Context, cfg *Config, s *services, reg *sso.Registry, log *slog.Logger) error {
	data, err := os.ReadFile(cfg.AuthProvidersFile)
	if err != nil {
		return fmt.Errorf("AUTH_PROVIDERS_FILE: %w", err)
	}
	entries, err := sso.ParseProvidersFile(data, os.Getenv)
	if err != nil {
		return fmt.Errorf("AUTH_PROVIDERS_FILE %s: %w", cfg.AuthProvidersFile, err)
	}
	var problems []string
	ps := make([]*models.SSOProvider, 0, len(entries))
	for _, e := range entries {
		p := e.Provider
		enabled := p.Enabled
		// Validated as a disabled, existing provider so that discovery is
		// not fetched here; it runs below, as a warning only.
		p.Enabled = false
		errs := sso.ValidateProvider(ctx, p, e.Secrets, false, reg.Options())
		p.Enabled = enabled
		for field, msg := range errs {
			if w, ok := strings.CutPrefix(field, sso.WarningPrefix); ok {
				log.Warn("provider file: "+msg, "provider", p.Name, "field", w)
				continue
			}
			problems = append(problems, fmt.Sprintf("%s: %s: %s", p.Name, field, msg))
		}
		if p.Strategy == models.StrategyOIDC && enabled {
			if err := sso.CheckDiscovery(ctx, models.Str(p.Issuer), reg.Options().HTTPClient); err != nil {
				log.Warn("provider file: discovery check failed; the provider stays configured", "provider", p.Name, "err", err)
			}
		}
		if err := s.store.SetProviderSecret(p, models.ColClientSecret, e.Secrets.ClientSecret); err != nil {
			return err
		}
		if err := s.store.SetProviderSecret(p, models.ColSPPrivateKey, e.Secrets.SPPrivateKey); err != nil {
			return err
		}
		ps = append(ps, p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("AUTH_PROVIDERS_FILE %s:\n  %s", cfg.AuthProvidersFile, strings.Join(problems, "\n  "))
	}
	if err := s.store.MirrorFileProviders(ctx, ps); err != nil {
		return err
	}
	if err := reg.Changed(ctx); err != nil {
		log.Warn("provider change not announced", "err", err)
	}
	log.Info("providers mirrored from file", "file", cfg.AuthProvidersFile, "providers", len(ps))
	return nil
}

// ssoHTTPClient talks to identity providers: bounded by SSO_HTTP_TIMEOUT,
// TLS always verified, with SSO_CA_FILE's CAs added to the system's.
func ssoHTTPClient(cfg *Config) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.SSOCAFile != "" {
		pem, err := os.ReadFile(cfg.SSOCAFile)
		if err != nil {
			return nil, fmt.Errorf("SSO_CA_FILE: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("SSO_CA_FILE: no PEM certificate in %s", cfg.SSOCAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	// No redirects: a 307 from a token endpoint would re-send the client
	// secret wherever it points.
	return &http.Client{Timeout: cfg.SSOHTTPTimeout, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, nil
}

func serveWeb(ctx context.Context, cfg *Config, s *services, log *slog.Logger) error {
	web, err := webOptions(cfg, log)
	if err != nil {
		return err
	}
	ssoOpts, err := ssoOptions(ctx, cfg, s, log)
	if err != nil {
		return err
	}
	app, err := api.New(api.Options{
		Store: s.store, Redis: s.rdb, Queue: s.queue, Logger: log, SSO: ssoOpts,
		APIRateLimitPerHour: cfg.APIRateLimitPerHour, Web: web,
		Dashboard:          asynqmon.New(asynqmon.Options{RootPath: "/admin/jobs", RedisConnOpt: s.redis}),
		SimpleFINAllowHTTP: cfg.SimpleFINAllowHTTP, SimpleFINDailyBudget: cfg.SimpleFIN.DailyBudget,
		SimpleFINSyncCron: cfg.SimpleFINSyncCron, SimpleFINSyncLocation: cfg.SimpleFIN.Location, SimpleFINSyncJitter: cfg.SimpleFIN.Jitter,
		Mail: api.MailOptions{SMTPURL: cfg.SMTPURL, From: cfg.MailFrom, LogOnly: cfg.SMTPURL == "" && cfg.Env == "development"},
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
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return app.ShutdownWithTimeout(20 * time.Second)
	}
}

func runWeb(ctx context.Context, cfg *Config, log *slog.Logger) error {
	if err := cfg.requireServerMode("web"); err != nil {
		return err
	}
	s, err := openServices(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.close()
	return serveWeb(ctx, cfg, s, log)
}

func runWorker(ctx context.Context, cfg *Config, log *slog.Logger) error {
	if err := cfg.requireServerMode("worker"); err != nil {
		return err
	}
	s, err := openServices(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.close()
	return worker.Run(ctx, workerOptions(cfg, s, log))
}

func runScheduler(ctx context.Context, cfg *Config, log *slog.Logger) error {
	if err := cfg.requireServerMode("scheduler"); err != nil {
		return err
	}
	s, err := openServices(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.close()
	return worker.RunScheduler(ctx, workerOptions(cfg, s, log))
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
	printWelcome(cfg)
	g, ctx := errgroup.WithContext(ctx)
	opts := workerOptions(cfg, s, log)
	g.Go(func() error { return worker.Run(ctx, opts) })
	g.Go(func() error { return worker.RunScheduler(ctx, opts) })
	g.Go(func() error { return serveWeb(ctx, cfg, s, log) })
	return g.Wait()
}

func printWelcome(cfg *Config) {
	fmt.Printf(`
coffer is running at %s  (API docs: %s/api/docs)

Create a first user and an API key in another terminal, in this directory:
  go run . users create --email you@example.com --role super_admin
  go run . apikeys create --email you@example.com
Then:
  curl -H "X-Api-Key: <key>" %s/api/v1/accounts

`, cfg.AppURL, cfg.AppURL, cfg.AppURL)
}

func runMigrate(ctx context.Context, cfg *Config, log *slog.Logger, stdout io.Writer) error {
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
	if s.Secrets, err = models.NewSealer(cfg.EncryptionKey, cfg.OldEncryptionKeys...); err != nil {
		return err
	}
	return fn(s)
}

// newPasswordHash hashes the --password value, or one read from the
// terminal when it is empty, after checking its length.
func newPasswordHash(pw string, stdin io.Reader) (string, error) {
	if pw == "" {
		var err error
		if pw, err = readPassword(stdin); err != nil {
			return "", err
		}
	}
	if len(pw) < models.MinPasswordLen || len(pw) > models.MaxPasswordLen {
		return "", fmt.Errorf("the password must be %d to %d characters long", models.MinPasswordLen, models.MaxPasswordLen)
	}
	return models.HashPassword(pw, models.DefaultArgon2)
}

// setUserRole changes a role from the command line, under the same guards
// as the admin screen (the last super admin stays); it is audited as a
// manual change with no acting user.
func setUserRole(ctx context.Context, cfg *Config, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("users set-role", flag.ContinueOnError)
	email := fs.String("email", "", "email address (required)")
	role := fs.String("role", "", "member, admin or super_admin (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !models.ValidRole(*role) {
		return errors.New("--role must be member, admin or super_admin")
	}
	return withStore(ctx, cfg, func(s *models.Store) error {
		u, err := s.UserByEmail(ctx, *email)
		if err != nil {
			return fmt.Errorf("user %q: %w", *email, err)
		}
		if err := s.SetUserRole(ctx, models.AdminChange{ActorRole: models.RoleSuperAdmin, TargetID: u.ID}, *role); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s is now %s\n", u.Email, *role)
		return nil
	})
}

// setUserPassword sets a user's password and ends their sessions.
func setUserPassword(ctx context.Context, cfg *Config, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("users set-password", flag.ContinueOnError)
	email := fs.String("email", "", "email address (required)")
	password := fs.String("password", "", "password; read from the terminal when absent")
	if err := fs.Parse(args); err != nil {
		return err
	}
	hash, err := newPasswordHash(*password, stdin)
	if err != nil {
		return err
	}
	return withStore(ctx, cfg, func(s *models.Store) error {
		u, err := s.UserByEmail(ctx, *email)
		if err != nil {
			return fmt.Errorf("user %q: %w", *email, err)
		}
		err = s.RunInTx(ctx, func(tx *models.Store) error {
			if err := tx.SetPassword(ctx, u.ID, hash); err != nil {
				return err
			}
			return tx.DeleteUserSessions(ctx, u.ID, uuid.Nil)
		})
		if err == nil {
			fmt.Fprintf(stdout, "password set for %s; their sessions ended\n", u.Email)
		}
		return err
	})
}

func createUser(ctx context.Context, cfg *Config, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("users create", flag.ContinueOnError)
	email := fs.String("email", "", "email address (required)")
	password := fs.String("password", "", "password; read from the terminal when absent")
	role := fs.String("role", models.RoleMember, "member, admin or super_admin")
	familyName := fs.String("family", "", "create a new family with this name")
	familyID := fs.String("family-id", "", "join an existing family")
	currency := fs.String("currency", "USD", "currency of a new family")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var problems []string
	if !strings.Contains(*email, "@") {
		problems = append(problems, "--email must be an email address")
	}
	if !models.ValidRole(*role) {
		problems = append(problems, "--role must be member, admin or super_admin")
	}
	cur, ok := models.LookupCurrency(*currency)
	if !ok {
		problems = append(problems, "--currency must be an ISO 4217 code")
	}
	if *familyName != "" && *familyID != "" {
		problems = append(problems, "--family and --family-id cannot both be given")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	hash, err := newPasswordHash(*password, stdin)
	if err != nil {
		return err
	}
	return withStore(ctx, cfg, func(s *models.Store) error {
		return s.RunInTx(ctx, func(tx *models.Store) error {
			u := &models.User{Email: *email, Role: *role}
			h := string(hash)
			u.PasswordHash = &h
			switch {
			case *familyID != "":
				id, err := parseUUID(*familyID)
				if err != nil {
					return errors.New("--family-id must be a UUID")
				}
				f, err := tx.Family(ctx, id)
				if errors.Is(err, models.ErrNotFound) {
					return fmt.Errorf("no family with id %s", id)
				}
				if err != nil {
					return err
				}
				u.FamilyID = f.ID
			default:
				name := *familyName
				if name == "" {
					name = strings.SplitN(*email, "@", 2)[0]
				}
				f := &models.Family{Name: name, Currency: cur.Code}
				if err := tx.CreateFamily(ctx, f); err != nil {
					return err
				}
				u.FamilyID = f.ID
				if u.Role == models.RoleMember {
					// The first user of a new family administers it.
					u.Role = models.RoleAdmin
				}
			}
			if err := tx.CreateUser(ctx, u); err != nil {
				if errors.Is(err, models.ErrConflict) {
					return fmt.Errorf("a user with email %s already exists", *email)
				}
				return err
			}
			fmt.Fprintln(stdout, u.ID)
			return nil
		})
	})
}

func readPassword(stdin io.Reader) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(os.Stderr, "Password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(os.Stderr)
		return string(b), err
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func createAPIKey(ctx context.Context, cfg *Config, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("apikeys create", flag.ContinueOnError)
	email := fs.String("email", "", "the key's user (required)")
	name := fs.String("name", "CLI key", "a name to tell keys apart")
	scope := fs.String("scope", models.ScopeReadWrite, "read or read_write")
	expiresIn := fs.Duration("expires-in", 0, "lifetime, such as 720h; 0 never expires")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *email == "" {
		return errors.New("--email is required")
	}
	if !models.ValidScope(*scope) {
		return errors.New("--scope must be read or read_write")
	}
	if *expiresIn < 0 {
		return errors.New("--expires-in must be positive")
	}
	return withStore(ctx, cfg, func(s *models.Store) error {
		u, err := s.UserByEmail(ctx, *email)
		if errors.Is(err, models.ErrNotFound) {
			return fmt.Errorf("no user with email %s", *email)
		}
		if err != nil {
			return err
		}
		k := &models.APIKey{UserID: u.ID, Name: *name, Scope: *scope}
		if *expiresIn > 0 {
			t := time.Now().Add(*expiresIn).UTC()
			k.ExpiresAt = &t
		}
		key, err := s.CreateAPIKey(ctx, u.FamilyID, k)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Created API key %q (%s) for %s. It is shown only once:\n%s\n", k.Name, k.Scope, u.Email, key)
		return nil
	})
}

// Config is every setting of the service, read from the environment once.
type Config struct {
	Env                 string     // COFFER_ENV: development or production
	Host                string     // HOST: address to listen on
	Port                int        // PORT
	AppURL              string     // APP_URL: the public base URL, no trailing slash
	DatabaseURL         string     // DATABASE_URL: PostgreSQL; empty with REDIS_URL empty = embedded
	RedisURL            string     // REDIS_URL
	DataDir             string     // DATA_DIR: the embedded database lives here
	DBMaxConns          int        // DB_MAX_CONNS
	SecretKeyBase       string     // SECRET_KEY_BASE
	APIRateLimitPerHour int        // API_RATE_LIMIT_PER_HOUR; 0 = off
	WorkerConcurrency   int        // WORKER_CONCURRENCY
	BalanceSweepCron    string     // BALANCE_SWEEP_CRON (UTC)
	LogLevel            slog.Level // LOG_LEVEL: debug, info, warn, error
	LogFormat           string     // LOG_FORMAT: text or json

	LocalLoginEnabled   bool     // AUTH_LOCAL_LOGIN_ENABLED
	LocalAdminOverride  bool     // AUTH_LOCAL_ADMIN_OVERRIDE_ENABLED
	JITMode             string   // AUTH_JIT_MODE: create_and_link or link_only
	AllowedOIDCDomains  []string // ALLOWED_OIDC_DOMAINS
	AuthProvidersSource string   // AUTH_PROVIDERS_SOURCE: db or yaml
	AuthProvidersFile   string   // AUTH_PROVIDERS_FILE: the provider file of yaml mode

	SSOHTTPTimeout time.Duration // SSO_HTTP_TIMEOUT: discovery, JWKS, token, userinfo, metadata
	SSOCAFile      string        // SSO_CA_FILE: extra PEM CAs for identity providers' TLS
	SAMLClockSkew  time.Duration // SAML_CLOCK_SKEW

	SessionIdle        time.Duration // SESSION_IDLE_TIMEOUT
	SessionMaxAge      time.Duration // SESSION_MAX_AGE
	MaxFailuresAccount int           // LOGIN_MAX_FAILURES_ACCOUNT
	MaxFailuresIP      int           // LOGIN_MAX_FAILURES_IP
	LockoutWindow      time.Duration // LOGIN_LOCKOUT_WINDOW
	TrustedProxies     []string      // TRUSTED_PROXIES
	AdminRateLimit     int           // RATE_LIMIT_ADMIN_PER_MINUTE

	Retention        jobs.Retention // AUDIT_RETENTION_TIER: standard, extended or compliance
	AuditArchiveDir  string         // AUDIT_ARCHIVE_DIR
	AuditArchiveCron string         // AUDIT_ARCHIVE_CRON (UTC)

	SMTPURL  string // SMTP_URL: smtp://user:password@host:587; empty in development: mail goes to the log
	MailFrom string // MAIL_FROM

	EncryptionKey     []byte   // SECRETS_ENCRYPTION_KEY: Base64 of 32 bytes
	OldEncryptionKeys [][]byte // SECRETS_ENCRYPTION_OLD_KEYS: former keys, decrypt only

	SimpleFINAllowHTTP       bool          // SIMPLEFIN_ALLOW_HTTP (tests only)
	SimpleFINAllowPrivate    bool          // SIMPLEFIN_ALLOW_PRIVATE_HOSTS (tests only)
	SimpleFINClaimTimeout    time.Duration // SIMPLEFIN_CLAIM_TIMEOUT
	SimpleFINAccountsTimeout time.Duration // SIMPLEFIN_ACCOUNTS_TIMEOUT
	// SimpleFIN holds SIMPLEFIN_LOOKBACK_DAYS, _CHUNK_DAYS, _OVERLAP_DAYS,
	// _DAILY_REQUEST_BUDGET, _PENDING_MATCH_DAYS, _STALE_PENDING_DAYS,
	// _SYNC_JITTER, _RATE_LIMIT_COOLDOWN and _MAX_BODY_BYTES.
	SimpleFIN         simplefin.Options
	SimpleFINSyncCron string // SIMPLEFIN_SYNC_CRON, in SIMPLEFIN_SYNC_TZ
	SimpleFINSyncTZ   string // SIMPLEFIN_SYNC_TZ
}

// Embedded reports whether the service runs on the SQLite file and the
// in-process Redis.
func (c *Config) Embedded() bool { return c.DatabaseURL == "" && c.RedisURL == "" }

func (c *Config) requireServerMode(cmd string) error {
	if c.Embedded() {
		return fmt.Errorf("`coffer %s` runs in server mode: set DATABASE_URL and REDIS_URL, or use `coffer dev` for the embedded mode", cmd)
	}
	return nil
}

// String prints the configuration with secrets masked.
func (c *Config) String() string {
	mask := func(s string) string {
		if s == "" {
			return ""
		}
		return "********"
	}
	return fmt.Sprintf("env=%s addr=%s:%d app_url=%s database=%s redis=%s smtp=%s embedded=%v secret_key_base=%s",
		c.Env, c.Host, c.Port, c.AppURL, redactURL(c.DatabaseURL), redactURL(c.RedisURL), redactURL(c.SMTPURL), c.Embedded(), mask(c.SecretKeyBase))
}

func redactURL(s string) string {
	if i := strings.Index(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "****" + s[i:]
		}
	}
	return s
}

// loadConfig reads the environment and reports every invalid variable at
// once, before anything starts.
func loadConfig(getenv func(string) string) (*Config, error) {
	var problems []string
	str := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	num := func(name string, def, lo, hi int) int {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			problems = append(problems, fmt.Sprintf("%s must be a whole number from %d to %d, got %q", name, lo, hi, v))
			return def
		}
		return n
	}
	boolean := func(name string, def bool) bool {
		v := getenv(name)
		if v == "" {
			return def
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s must be true or false, got %q", name, v))
			return def
		}
		return b
	}
	duration := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			problems = append(problems, fmt.Sprintf("%s must be a positive duration such as 15m or 168h, got %q", name, v))
			return def
		}
		return d
	}
	oneOf := func(name, def string, allowed ...string) string {
		v := str(name, def)
		for _, a := range allowed {
			if v == a {
				return v
			}
		}
		problems = append(problems, fmt.Sprintf("%s must be one of %s, got %q", name, strings.Join(allowed, ", "), v))
		return def
	}

	c := &Config{
		Env:                      oneOf("COFFER_ENV", "development", "development", "production"),
		Port:                     num("PORT", 3000, 1, 65535),
		DatabaseURL:              str("DATABASE_URL", ""),
		RedisURL:                 str("REDIS_URL", ""),
		DataDir:                  str("DATA_DIR", "data"),
		DBMaxConns:               num("DB_MAX_CONNS", 20, 1, 1000),
		SecretKeyBase:            str("SECRET_KEY_BASE", ""),
		APIRateLimitPerHour:      num("API_RATE_LIMIT_PER_HOUR", 10_000, 0, 100_000_000),
		WorkerConcurrency:        num("WORKER_CONCURRENCY", 10, 1, 1000),
		BalanceSweepCron:         str("BALANCE_SWEEP_CRON", "5 0 * * *"),
		LogFormat:                oneOf("LOG_FORMAT", "text", "text", "json"),
		LocalLoginEnabled:        boolean("AUTH_LOCAL_LOGIN_ENABLED", true),
		LocalAdminOverride:       boolean("AUTH_LOCAL_ADMIN_OVERRIDE_ENABLED", false),
		JITMode:                  oneOf("AUTH_JIT_MODE", "create_and_link", "create_and_link", "link_only"),
		AuthProvidersSource:      oneOf("AUTH_PROVIDERS_SOURCE", "db", "db", "yaml"),
		AuthProvidersFile:        str("AUTH_PROVIDERS_FILE", "config/auth_providers.yml"),
		SSOHTTPTimeout:           duration("SSO_HTTP_TIMEOUT", 10*time.Second),
		SSOCAFile:                str("SSO_CA_FILE", ""),
		SAMLClockSkew:            duration("SAML_CLOCK_SKEW", 90*time.Second),
		SessionIdle:              duration("SESSION_IDLE_TIMEOUT", 168*time.Hour),
		SessionMaxAge:            duration("SESSION_MAX_AGE", 720*time.Hour),
		MaxFailuresAccount:       num("LOGIN_MAX_FAILURES_ACCOUNT", 5, 1, 1000),
		MaxFailuresIP:            num("LOGIN_MAX_FAILURES_IP", 20, 1, 100000),
		LockoutWindow:            duration("LOGIN_LOCKOUT_WINDOW", 15*time.Minute),
		AdminRateLimit:           num("RATE_LIMIT_ADMIN_PER_MINUTE", 10, 0, 1_000_000),
		AuditArchiveCron:         str("AUDIT_ARCHIVE_CRON", "30 3 * * *"),
		SMTPURL:                  str("SMTP_URL", ""),
		SimpleFINAllowHTTP:       boolean("SIMPLEFIN_ALLOW_HTTP", false),
		SimpleFINAllowPrivate:    boolean("SIMPLEFIN_ALLOW_PRIVATE_HOSTS", false),
		SimpleFINClaimTimeout:    duration("SIMPLEFIN_CLAIM_TIMEOUT", 30*time.Second),
		SimpleFINAccountsTimeout: duration("SIMPLEFIN_ACCOUNTS_TIMEOUT", 120*time.Second),
		MailFrom:                 str("MAIL_FROM", "coffer <no-reply@localhost>"),
		SimpleFIN: simplefin.Options{
			LookbackDays:     num("SIMPLEFIN_LOOKBACK_DAYS", 90, 1, 730),
			ChunkDays:        num("SIMPLEFIN_CHUNK_DAYS", 90, 1, 90),
			OverlapDays:      num("SIMPLEFIN_OVERLAP_DAYS", 7, 0, 60),
			DailyBudget:      num("SIMPLEFIN_DAILY_REQUEST_BUDGET", 24, 1, 48),
			PendingMatchDays: num("SIMPLEFIN_PENDING_MATCH_DAYS", 8, 0, 60),
			StalePendingDays: num("SIMPLEFIN_STALE_PENDING_DAYS", 14, 1, 365),
			Jitter:           duration("SIMPLEFIN_SYNC_JITTER", 30*time.Minute),
			Cooldown:         duration("SIMPLEFIN_RATE_LIMIT_COOLDOWN", time.Hour),
			MaxBody:          int64(num("SIMPLEFIN_MAX_BODY_BYTES", 256<<20, 1<<20, 1<<31-1)),
		},
		SimpleFINSyncCron: str("SIMPLEFIN_SYNC_CRON", "22 2 * * *"),
		SimpleFINSyncTZ:   str("SIMPLEFIN_SYNC_TZ", "UTC"),
	}
	if loc, err := time.LoadLocation(c.SimpleFINSyncTZ); err != nil {
		problems = append(problems, fmt.Sprintf("SIMPLEFIN_SYNC_TZ is not a time zone: %q", c.SimpleFINSyncTZ))
	} else {
		c.SimpleFIN.Location = loc
	}
	production := c.Env == "production"
	defaultHost := "127.0.0.1"
	if production {
		defaultHost = "0.0.0.0"
	}
	c.Host = str("HOST", defaultHost)
	c.AppURL = strings.TrimRight(str("APP_URL", fmt.Sprintf("http://localhost:%d", c.Port)), "/")
	if !strings.HasPrefix(c.AppURL, "http://") && !strings.HasPrefix(c.AppURL, "https://") {
		problems = append(problems, fmt.Sprintf("APP_URL must start with http:// or https://, got %q", c.AppURL))
	}
	if err := c.LogLevel.UnmarshalText([]byte(str("LOG_LEVEL", "info"))); err != nil {
		problems = append(problems, fmt.Sprintf("LOG_LEVEL must be debug, info, warn or error, got %q", getenv("LOG_LEVEL")))
	}
	for _, d := range strings.Split(getenv("ALLOWED_OIDC_DOMAINS"), ",") {
		if d = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(d)), "@"); d != "" {
			c.AllowedOIDCDomains = append(c.AllowedOIDCDomains, d)
		}
	}
	key := func(name, v string) []byte {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		if err != nil || len(b) != 32 {
			problems = append(problems, name+" must be the Base64 of exactly 32 bytes (openssl rand -base64 32)")
			return nil
		}
		return b
	}
	if v := getenv("SECRETS_ENCRYPTION_KEY"); v != "" {
		c.EncryptionKey = key("SECRETS_ENCRYPTION_KEY", v)
	} else if production {
		problems = append(problems, "SECRETS_ENCRYPTION_KEY is required in production (openssl rand -base64 32)")
	}
	for _, v := range strings.Split(getenv("SECRETS_ENCRYPTION_OLD_KEYS"), ",") {
		if strings.TrimSpace(v) != "" {
			c.OldEncryptionKeys = append(c.OldEncryptionKeys, key("SECRETS_ENCRYPTION_OLD_KEYS", v))
		}
	}
	tier := oneOf("AUDIT_RETENTION_TIER", "standard", "standard", "extended", "compliance")
	c.Retention, _ = jobs.RetentionTier(tier)
	c.AuditArchiveDir = str("AUDIT_ARCHIVE_DIR", filepath.Join(c.DataDir, "audit-archive"))
	for _, p := range strings.Split(getenv("TRUSTED_PROXIES"), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		_, _, cidrErr := net.ParseCIDR(p)
		if net.ParseIP(p) == nil && cidrErr != nil {
			problems = append(problems, fmt.Sprintf("TRUSTED_PROXIES: %q is neither an IP nor a CIDR", p))
		}
		c.TrustedProxies = append(c.TrustedProxies, p)
	}
	if (c.DatabaseURL == "") != (c.RedisURL == "") {
		problems = append(problems, "DATABASE_URL and REDIS_URL go together: set both for server mode, or neither for the embedded mode")
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		problems = append(problems, "DATABASE_URL must be a postgres:// URL")
	}
	if c.RedisURL != "" {
		if _, err := asynq.ParseRedisURI(c.RedisURL); err != nil {
			problems = append(problems, fmt.Sprintf("REDIS_URL is not a valid Redis URL: %v", err))
		}
	}
	if production {
		if len(c.SecretKeyBase) < 32 {
			problems = append(problems, "SECRET_KEY_BASE is required in production (at least 32 characters)")
		}
		if getenv("APP_URL") == "" {
			problems = append(problems, "APP_URL is required in production")
		}
		if c.Embedded() {
			problems = append(problems, "production needs DATABASE_URL and REDIS_URL")
		}
	}
	if len(problems) > 0 {
		return nil, errors.New("  " + strings.Join(problems, "\n  "))
	}
	return c, nil
}

// developmentSecrets fills in what development may leave unset: a
// SECRET_KEY_BASE kept in DATA_DIR (so sessions and sealed secrets survive
// a restart and every local process agrees), and an encryption key
// derived from it.
func developmentSecrets(cfg *Config, log *slog.Logger) error {
	if cfg.SecretKeyBase == "" {
		path := filepath.Join(cfg.DataDir, "secret_key_base")
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			raw := make([]byte, 32)
			if _, err := rand.Read(raw); err != nil {
				return err
			}
			b = []byte(hex.EncodeToString(raw))
			if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			log.Warn("SECRET_KEY_BASE is not set: generated one for development", "file", path)
		} else if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		cfg.SecretKeyBase = strings.TrimSpace(string(b))
	}
	if cfg.EncryptionKey == nil {
		log.Warn("SECRETS_ENCRYPTION_KEY is not set: deriving it from SECRET_KEY_BASE (development only)")
		sum := sha256.Sum256([]byte("coffer secrets\x00" + cfg.SecretKeyBase))
		cfg.EncryptionKey = sum[:]
	}
	return nil
}

func parseUUID(s string) (uuid.UUID, error) { return uuid.Parse(strings.TrimSpace(s)) }
