// Command coffer is the whole service in one binary: the web API, the
// background worker, the scheduler, migrations and admin commands. This
// file is the only reader of the environment; it builds every long-lived
// value and hands it down.
package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

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
                             (--family refuses a name that exists: join it with --family-id)
  coffer users set-role --email E --role member|admin|super_admin
  coffer users set-password --email E [--password P]
                             (the way back in when password sign-in is limited or off)
  coffer families list       every family's id, name and number of members
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
		err = serve(ctx, cfg, log, "web", func(s *services) error { return serveWeb(ctx, cfg, s, log) })
	case args[0] == "worker":
		err = serve(ctx, cfg, log, "worker", func(s *services) error { return worker.Run(ctx, workerOptions(cfg, s, log)) })
	case args[0] == "scheduler":
		err = serve(ctx, cfg, log, "scheduler", func(s *services) error { return worker.RunScheduler(ctx, workerOptions(cfg, s, log)) })
	case args[0] == "migrate":
		err = runMigrate(ctx, cfg, stdout)
	case cmd == "users create":
		err = createUser(ctx, cfg, args[2:], stdin, stdout)
	case cmd == "users set-role":
		err = setUserRole(ctx, cfg, args[2:], stdout)
	case cmd == "users set-password":
		err = setUserPassword(ctx, cfg, args[2:], stdin, stdout)
	case cmd == "families list":
		err = withStore(ctx, cfg, func(s *models.Store) error {
			fams, err := s.Families(ctx)
			for _, f := range fams {
				fmt.Fprintf(stdout, "%s\t%s\t%d members\t%s\n", f.ID, f.Name, f.MembersCount, f.Currency)
			}
			return err
		})
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
func openRedis(cfg *Config, log *slog.Logger) (asynq.RedisConnOpt, func(), error) {
	if cfg.RedisURL != "" {
		opt, err := asynq.ParseRedisURI(cfg.RedisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
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
	if s.store.Secrets, err = models.NewSealer(cfg.EncryptionKey, cfg.OldEncryptionKeys...); err != nil {
		s.close()
		return nil, err
	}
	opt, stopRedis, err := openRedis(cfg, log)
	if err != nil {
		s.close()
		return nil, err
	}
	s.redis, s.rdb = opt, opt.MakeRedisClient().(redis.UniversalClient)
	s.closers = append(s.closers, stopRedis, func() { s.rdb.Close() })
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.close()
		return nil, fmt.Errorf("connect to Redis: %w", err)
	}
	s.queue = asynq.NewClientFromRedisClient(s.rdb)
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
	return fn(s)
}

func workerOptions(cfg *Config, s *services, log *slog.Logger) worker.Options {
	o := cfg.Worker
	o.Redis, o.Logger = s.redis, log
	o.Handlers = &jobs.Handlers{Store: s.store, Queue: s.queue, Log: log, Retention: cfg.Retention, ArchiveDir: cfg.AuditArchiveDir}
	o.SimpleFIN = &simplefin.Handlers{Store: s.store, Queue: s.queue, Log: log, Redis: s.rdb, Options: cfg.SimpleFIN,
		Bridge: bridge.NewClient(cfg.SimpleFINClient)}
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
	opts := api.SSOOptions{Registry: reg, StateKey: stateKey, JITMode: cfg.JITMode, AllowedDomains: cfg.AllowedOIDCDomains}
	if cfg.AuthProvidersSource == "yaml" {
		data, err := os.ReadFile(cfg.AuthProvidersFile)
		if err != nil {
			return api.SSOOptions{}, fmt.Errorf("AUTH_PROVIDERS_FILE: %w", err)
		}
		n, err := reg.MirrorFile(ctx, data, os.Getenv)
		if err != nil {
			return api.SSOOptions{}, fmt.Errorf("AUTH_PROVIDERS_FILE %s: %w", cfg.AuthProvidersFile, err)
		}
		log.Info("providers mirrored from file", "file", cfg.AuthProvidersFile, "providers", n)
		opts.ProvidersFile = cfg.AuthProvidersFile
	}
	return opts, nil
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
	app, err := api.New(api.Options{
		Store: s.store, Redis: s.rdb, Queue: s.queue, Logger: log, SSO: ssoOpts, Web: web, Mail: cfg.Mail,
		APIRateLimitPerHour: cfg.APIRateLimitPerHour,
		Dashboard:           asynqmon.New(asynqmon.Options{RootPath: "/admin/jobs", RedisConnOpt: s.redis}),
		SimpleFINAllowHTTP:  cfg.SimpleFINClient.AllowHTTP, SimpleFINDailyBudget: cfg.SimpleFIN.DailyBudget,
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
	fmt.Printf(welcome, cfg.AppURL, cfg.AppURL, cfg.AppURL)
	g, ctx := errgroup.WithContext(ctx)
	opts := workerOptions(cfg, s, log)
	g.Go(func() error { return worker.Run(ctx, opts) })
	g.Go(func() error { return worker.RunScheduler(ctx, opts) })
	g.Go(func() error { return serveWeb(ctx, cfg, s, log) })
	return g.Wait()
}

const welcome = `
coffer is running at %s  (API docs: %s/api/docs)

Create a first user and an API key in another terminal, in this directory:
  go run . users create --email you@example.com --role super_admin
  go run . apikeys create --email you@example.com
Then:
  curl -H "X-Api-Key: <key>" %s/api/v1/accounts

`

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

// readPassword reads a password without echo from a terminal, else the
// first line of stdin.
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
		if err := s.ResetPassword(ctx, u.ID, hash, uuid.Nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "password set for %s; their sessions ended\n", u.Email)
		return nil
	})
}

// createUser adds a user to a new family, which they administer, or to
// an existing one, and prints the user's id.
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
	u := &models.User{Email: *email, Role: *role, PasswordHash: &hash}
	return withStore(ctx, cfg, func(s *models.Store) error {
		if *familyID == "" {
			name, _, _ := strings.Cut(*email, "@")
			name = cmp.Or(*familyName, name)
			// Two families of one name would be told apart by nobody.
			if f, ferr := s.FamilyByName(ctx, name); ferr == nil {
				return fmt.Errorf("a family named %q already exists (id %s); add the user to it with --family-id %s, or choose another --family", name, f.ID, f.ID)
			} else if !errors.Is(ferr, models.ErrNotFound) {
				return ferr
			}
			err = s.CreateFamilyWithUser(ctx, &models.Family{Name: name, Currency: cur.Code}, u)
		} else if id, perr := uuid.Parse(strings.TrimSpace(*familyID)); perr != nil {
			return errors.New("--family-id must be a UUID")
		} else if err = s.CreateUserInFamily(ctx, id, u); errors.Is(err, models.ErrNotFound) {
			return fmt.Errorf("no family with id %s", id)
		}
		if errors.Is(err, models.ErrConflict) {
			return fmt.Errorf("a user with email %s already exists", *email)
		}
		if err == nil {
			fmt.Fprintln(stdout, u.ID)
		}
		return err
	})
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
		k := &models.APIKey{Name: *name, Scope: *scope}
		if *expiresIn > 0 {
			t := time.Now().Add(*expiresIn).UTC()
			k.ExpiresAt = &t
		}
		key, u, err := s.CreateAPIKeyByEmail(ctx, *email, k)
		if errors.Is(err, models.ErrNotFound) {
			return fmt.Errorf("no user with email %s", *email)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Created API key %q (%s) for %s. It is shown only once:\n%s\n", k.Name, k.Scope, u.Email, key)
		return nil
	})
}

// Config is every setting of the service, read from the environment once;
// loadConfig names each variable beside its default. The parts that a
// package takes whole are that package's own options.
type Config struct {
	Env                 string     // COFFER_ENV: development or production
	Host                string     // HOST: address to listen on
	Port                int        // PORT
	AppURL              string     // APP_URL: the public base URL, no trailing slash
	DatabaseURL         string     // DATABASE_URL: PostgreSQL; empty with REDIS_URL empty = embedded
	RedisURL            string     // REDIS_URL
	DataDir             string     // DATA_DIR: the embedded database lives here
	DBMaxConns          int        // DB_MAX_CONNS
	SecretKeyBase       string     // SECRET_KEY_BASE: also signs the screens' forms
	APIRateLimitPerHour int        // API_RATE_LIMIT_PER_HOUR; 0 = off
	LogLevel            slog.Level // LOG_LEVEL: debug, info, warn, error
	LogFormat           string     // LOG_FORMAT: text or json

	JITMode             string        // AUTH_JIT_MODE: create_and_link or link_only
	AllowedOIDCDomains  []string      // ALLOWED_OIDC_DOMAINS
	AuthProvidersSource string        // AUTH_PROVIDERS_SOURCE: db or yaml
	AuthProvidersFile   string        // AUTH_PROVIDERS_FILE: the provider file of yaml mode
	SSOHTTPTimeout      time.Duration // SSO_HTTP_TIMEOUT: discovery, JWKS, token, userinfo, metadata
	SSOCAFile           string        // SSO_CA_FILE: extra PEM CAs for identity providers' TLS
	SSOAllowPrivate     bool          // SSO_ALLOW_PRIVATE_HOSTS: identity providers may be on loopback and private addresses
	SAMLClockSkew       time.Duration // SAML_CLOCK_SKEW

	// Web holds AUTH_LOCAL_LOGIN_ENABLED, AUTH_LOCAL_ADMIN_OVERRIDE_ENABLED, AUTH_SIGNUP_ENABLED,
	// SESSION_IDLE_TIMEOUT, SESSION_MAX_AGE, LOGIN_MAX_FAILURES_ACCOUNT,
	// LOGIN_MAX_FAILURES_IP, LOGIN_LOCKOUT_WINDOW, TRUSTED_PROXIES and
	// RATE_LIMIT_ADMIN_PER_MINUTE; serveWeb adds what APP_URL and
	// SECRET_KEY_BASE give.
	Web api.WebOptions
	// Mail holds SMTP_URL (smtp://user:password@host:587; empty in
	// development: mail goes to the log) and MAIL_FROM.
	Mail api.MailOptions
	// Worker holds WORKER_CONCURRENCY, BALANCE_SWEEP_CRON and
	// AUDIT_ARCHIVE_CRON (UTC), SIMPLEFIN_SYNC_CRON and SIMPLEFIN_SYNC_TZ.
	Worker worker.Options

	Retention       jobs.Retention // AUDIT_RETENTION_TIER: standard, extended or compliance
	AuditArchiveDir string         // AUDIT_ARCHIVE_DIR

	EncryptionKey     []byte   // SECRETS_ENCRYPTION_KEY: Base64 of 32 bytes
	OldEncryptionKeys [][]byte // SECRETS_ENCRYPTION_OLD_KEYS: former keys, decrypt only

	// SimpleFINClient holds SIMPLEFIN_ALLOW_HTTP and
	// SIMPLEFIN_ALLOW_PRIVATE_HOSTS (tests only), SIMPLEFIN_CLAIM_TIMEOUT
	// and SIMPLEFIN_ACCOUNTS_TIMEOUT.
	SimpleFINClient bridge.Options
	// SimpleFIN holds SIMPLEFIN_LOOKBACK_DAYS, _CHUNK_DAYS, _OVERLAP_DAYS,
	// _DAILY_REQUEST_BUDGET, _PENDING_MATCH_DAYS, _STALE_PENDING_DAYS,
	// _SYNC_JITTER, _RATE_LIMIT_COOLDOWN and _MAX_BODY_BYTES, and the time
	// zone of SIMPLEFIN_SYNC_TZ.
	SimpleFIN simplefin.Options
}

// Embedded reports whether the service runs on the SQLite file and the
// in-process Redis.
func (c *Config) Embedded() bool { return c.DatabaseURL == "" && c.RedisURL == "" }

// String prints the configuration with secrets masked.
func (c *Config) String() string {
	mask := func(s string) string {
		if s == "" {
			return ""
		}
		return "********"
	}
	return fmt.Sprintf("env=%s addr=%s:%d app_url=%s database=%s redis=%s smtp=%s embedded=%v secret_key_base=%s",
		c.Env, c.Host, c.Port, c.AppURL, redactURL(c.DatabaseURL), redactURL(c.RedisURL), redactURL(c.Mail.SMTPURL), c.Embedded(), mask(c.SecretKeyBase))
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
	e := &envReader{getenv: getenv}
	c := &Config{
		Env:                 e.oneOf("COFFER_ENV", "development", "development", "production"),
		Port:                e.num("PORT", 3000, 1, 65535),
		DatabaseURL:         e.str("DATABASE_URL", ""),
		RedisURL:            e.str("REDIS_URL", ""),
		DataDir:             e.str("DATA_DIR", "data"),
		DBMaxConns:          e.num("DB_MAX_CONNS", 20, 1, 1000),
		SecretKeyBase:       e.str("SECRET_KEY_BASE", ""),
		APIRateLimitPerHour: e.num("API_RATE_LIMIT_PER_HOUR", 10_000, 0, 100_000_000),
		LogFormat:           e.oneOf("LOG_FORMAT", "text", "text", "json"),
		JITMode:             e.oneOf("AUTH_JIT_MODE", "create_and_link", "create_and_link", "link_only"),
		AuthProvidersSource: e.oneOf("AUTH_PROVIDERS_SOURCE", "db", "db", "yaml"),
		AuthProvidersFile:   e.str("AUTH_PROVIDERS_FILE", "config/auth_providers.yml"),
		SSOHTTPTimeout:      e.duration("SSO_HTTP_TIMEOUT", 10*time.Second),
		SSOCAFile:           e.str("SSO_CA_FILE", ""),
		SAMLClockSkew:       e.duration("SAML_CLOCK_SKEW", 90*time.Second),
		Web: api.WebOptions{
			LocalLogin:         e.boolean("AUTH_LOCAL_LOGIN_ENABLED", true),
			AdminOverride:      e.boolean("AUTH_LOCAL_ADMIN_OVERRIDE_ENABLED", false),
			SessionIdle:        e.duration("SESSION_IDLE_TIMEOUT", 168*time.Hour),
			SessionMaxAge:      e.duration("SESSION_MAX_AGE", 720*time.Hour),
			MaxFailuresAccount: e.num("LOGIN_MAX_FAILURES_ACCOUNT", 5, 1, 1000),
			MaxFailuresIP:      e.num("LOGIN_MAX_FAILURES_IP", 20, 1, 100000),
			LockoutWindow:      e.duration("LOGIN_LOCKOUT_WINDOW", 15*time.Minute),
			AdminRateLimit:     e.num("RATE_LIMIT_ADMIN_PER_MINUTE", 10, 0, 1_000_000),
			Argon2:             models.DefaultArgon2,
		},
		Mail: api.MailOptions{SMTPURL: e.str("SMTP_URL", ""), From: e.str("MAIL_FROM", "coffer <no-reply@localhost>")},
		Worker: worker.Options{
			Concurrency:       e.num("WORKER_CONCURRENCY", 10, 1, 1000),
			BalanceSweepCron:  e.str("BALANCE_SWEEP_CRON", "5 0 * * *"),
			AuditArchiveCron:  e.str("AUDIT_ARCHIVE_CRON", "30 3 * * *"),
			SimplefinSyncCron: e.str("SIMPLEFIN_SYNC_CRON", "22 2 * * *"),
			SimplefinSyncTZ:   e.str("SIMPLEFIN_SYNC_TZ", "UTC"),
		},
		SimpleFINClient: bridge.Options{
			AllowHTTP:         e.boolean("SIMPLEFIN_ALLOW_HTTP", false),
			AllowPrivateHosts: e.boolean("SIMPLEFIN_ALLOW_PRIVATE_HOSTS", false),
			ClaimTimeout:      e.duration("SIMPLEFIN_CLAIM_TIMEOUT", 30*time.Second),
			AccountsTimeout:   e.duration("SIMPLEFIN_ACCOUNTS_TIMEOUT", 120*time.Second),
		},
		SimpleFIN: simplefin.Options{
			LookbackDays:     e.num("SIMPLEFIN_LOOKBACK_DAYS", 90, 1, 730),
			ChunkDays:        e.num("SIMPLEFIN_CHUNK_DAYS", 90, 1, 90),
			OverlapDays:      e.num("SIMPLEFIN_OVERLAP_DAYS", 7, 0, 60),
			DailyBudget:      e.num("SIMPLEFIN_DAILY_REQUEST_BUDGET", 24, 1, 48),
			PendingMatchDays: e.num("SIMPLEFIN_PENDING_MATCH_DAYS", 8, 0, 60),
			StalePendingDays: e.num("SIMPLEFIN_STALE_PENDING_DAYS", 14, 1, 365),
			Jitter:           e.duration("SIMPLEFIN_SYNC_JITTER", 30*time.Minute),
			Cooldown:         e.duration("SIMPLEFIN_RATE_LIMIT_COOLDOWN", time.Hour),
			MaxBody:          int64(e.num("SIMPLEFIN_MAX_BODY_BYTES", 256<<20, 1<<20, 1<<31-1)),
		},
	}
	if loc, err := time.LoadLocation(c.Worker.SimplefinSyncTZ); err != nil {
		e.problem("SIMPLEFIN_SYNC_TZ is not a time zone: %q", c.Worker.SimplefinSyncTZ)
	} else {
		c.SimpleFIN.Location = loc
	}
	// Open sign-up suits a laptop; a public server lets families in by
	// invitation unless the operator opens it.
	c.Web.SignupEnabled = e.boolean("AUTH_SIGNUP_ENABLED", c.Env != "production")
	c.SSOAllowPrivate = e.boolean("SSO_ALLOW_PRIVATE_HOSTS", c.Env != "production") // Dex or Keycloak on localhost
	production := c.Env == "production"
	defaultHost := "127.0.0.1"
	if production {
		defaultHost = "0.0.0.0"
	}
	c.Host = e.str("HOST", defaultHost)
	c.Mail.LogOnly = c.Mail.SMTPURL == "" && !production
	c.AppURL = strings.TrimRight(e.str("APP_URL", fmt.Sprintf("http://localhost:%d", c.Port)), "/")
	if !strings.HasPrefix(c.AppURL, "http://") && !strings.HasPrefix(c.AppURL, "https://") {
		e.problem("APP_URL must start with http:// or https://, got %q", c.AppURL)
	}
	if err := c.LogLevel.UnmarshalText([]byte(e.str("LOG_LEVEL", "info"))); err != nil {
		e.problem("LOG_LEVEL must be debug, info, warn or error, got %q", getenv("LOG_LEVEL"))
	}
	for _, d := range e.list("ALLOWED_OIDC_DOMAINS") {
		if d = strings.TrimPrefix(strings.ToLower(d), "@"); d != "" {
			c.AllowedOIDCDomains = append(c.AllowedOIDCDomains, d)
		}
	}
	if v := getenv("SECRETS_ENCRYPTION_KEY"); v != "" {
		c.EncryptionKey = e.key("SECRETS_ENCRYPTION_KEY", v)
	} else if production {
		e.problem("SECRETS_ENCRYPTION_KEY is required in production (openssl rand -base64 32)")
	}
	for _, v := range e.list("SECRETS_ENCRYPTION_OLD_KEYS") {
		c.OldEncryptionKeys = append(c.OldEncryptionKeys, e.key("SECRETS_ENCRYPTION_OLD_KEYS", v))
	}
	c.Retention, _ = jobs.RetentionTier(e.oneOf("AUDIT_RETENTION_TIER", "standard", "standard", "extended", "compliance"))
	c.AuditArchiveDir = e.str("AUDIT_ARCHIVE_DIR", filepath.Join(c.DataDir, "audit-archive"))
	for _, p := range e.list("TRUSTED_PROXIES") {
		if _, _, err := net.ParseCIDR(p); net.ParseIP(p) == nil && err != nil {
			e.problem("TRUSTED_PROXIES: %q is neither an IP nor a CIDR", p)
		}
		c.Web.TrustedProxies = append(c.Web.TrustedProxies, p)
	}
	if (c.DatabaseURL == "") != (c.RedisURL == "") {
		e.problem("DATABASE_URL and REDIS_URL go together: set both for server mode, or neither for the embedded mode")
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		e.problem("DATABASE_URL must be a postgres:// URL")
	}
	if _, err := asynq.ParseRedisURI(c.RedisURL); c.RedisURL != "" && err != nil {
		e.problem("REDIS_URL is not a valid Redis URL: %v", err)
	}
	if production && len(c.SecretKeyBase) < 32 {
		e.problem("SECRET_KEY_BASE is required in production (at least 32 characters)")
	}
	if production && getenv("APP_URL") == "" {
		e.problem("APP_URL is required in production")
	}
	if production && c.Embedded() {
		e.problem("production needs DATABASE_URL and REDIS_URL")
	}
	if len(e.problems) > 0 {
		return nil, errors.New("  " + strings.Join(e.problems, "\n  "))
	}
	return c, nil
}

// envReader reads variables for loadConfig and notes every bad one.
type envReader struct {
	getenv   func(string) string
	problems []string
}

func (e *envReader) problem(format string, args ...any) {
	e.problems = append(e.problems, fmt.Sprintf(format, args...))
}

// str is the trimmed value of name, or def when it is blank.
func (e *envReader) str(name, def string) string {
	return cmp.Or(strings.TrimSpace(e.getenv(name)), def)
}

// list is the non-blank items of a comma-separated variable, trimmed.
func (e *envReader) list(name string) []string {
	var out []string
	for _, v := range strings.Split(e.getenv(name), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// parsed is what read makes of a set variable; def when it is unset or
// when read refuses it, noting then that the variable must be want.
func parsed[T any](e *envReader, name string, def T, want string, read func(string) (T, bool)) T {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	if x, ok := read(strings.TrimSpace(v)); ok {
		return x
	}
	e.problem("%s must be %s, got %q", name, want, v)
	return def
}

func (e *envReader) num(name string, def, lo, hi int) int {
	return parsed(e, name, def, fmt.Sprintf("a whole number from %d to %d", lo, hi), func(v string) (int, bool) {
		n, err := strconv.Atoi(v)
		return n, err == nil && n >= lo && n <= hi
	})
}

func (e *envReader) boolean(name string, def bool) bool {
	return parsed(e, name, def, "true or false", func(v string) (bool, bool) {
		b, err := strconv.ParseBool(v)
		return b, err == nil
	})
}

func (e *envReader) duration(name string, def time.Duration) time.Duration {
	return parsed(e, name, def, "a positive duration such as 15m or 168h", func(v string) (time.Duration, bool) {
		d, err := time.ParseDuration(v)
		return d, err == nil && d > 0
	})
}

func (e *envReader) oneOf(name, def string, allowed ...string) string {
	v := e.str(name, def)
	if !slices.Contains(allowed, v) {
		e.problem("%s must be one of %s, got %q", name, strings.Join(allowed, ", "), v)
		return def
	}
	return v
}

// key decodes a secrets key: the Base64 of 32 bytes.
func (e *envReader) key(name, v string) []byte {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(b) != 32 {
		e.problem("%s must be the Base64 of exactly 32 bytes (openssl rand -base64 32)", name)
		return nil
	}
	return b
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
