// Package cli is the operator at a terminal: the admin subcommands (users,
// families, API keys, the audit archive, the secrets backfill, the balance
// check), each a few
// lines over the store methods the admin screens use. main opens the store
// and hands it in; nothing here reads the environment.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// ErrUnknown is Parse's answer when args name no admin command.
var ErrUnknown = errors.New("unknown command")

// Options is what the commands need beside the store.
type Options struct {
	Stdin  io.Reader // passwords, when not given as a flag
	Stdout io.Writer
	Log    *slog.Logger
	// Retention and ArchiveDir are the audit archive's settings.
	Retention  jobs.Retention
	ArchiveDir string
}

// Command is an admin command read from the command line, its flags
// checked, ready to run on a store.
type Command func(ctx context.Context, s *models.Store) error

// command is one line of the table: its name, the synopsis of its flags,
// and define, which declares its flags on fs and returns what builds the
// Command once they are parsed.
type command struct {
	name, synopsis string
	define         func(fs *flag.FlagSet, o *Options) func() (Command, error)
}

func commands() []command {
	return []command{
		{"users create", "--email E [--password P] [--role member|admin|super_admin]\n" +
			"       [--family NAME | --family-id ID] [--currency CUR]\n" +
			"    adds a user to a new family (--family refuses a name that exists)\n" +
			"    or to an existing one (--family-id, as `families list` shows)", usersCreate},
		{"users set-role", "--email E --role member|admin|super_admin", usersSetRole},
		{"users set-password", "--email E [--password P]\n" +
			"    the way back in when password sign-in is limited or off", usersSetPassword},
		{"families list", "\n    every family's id, name, number of members and currency", familiesList},
		{"apikeys create", "--email E [--name N] [--scope read|read_write] [--expires-in 720h]", apikeysCreate},
		{"audit archive", "\n    applies the audit retention tier now (also a scheduled job)", auditArchive},
		{"secrets backfill", "[--dry-run]\n" +
			"    seals plaintext secrets and re-seals old-key values (also a job at every worker start)", secretsBackfill},
		{"balances check", "[--fix]\n" +
			"    compares every account's kept balance and valuation adjustments with the full\n" +
			"    recalculation, prints each difference, and with --fix rewrites those accounts", balancesCheck},
		{"sums check", "[--fix]\n" +
			"    compares every family's kept sums (the reports' and balance series' source) with the\n" +
			"    sums of their rows, prints each difference, and with --fix rebuilds those families' sums", sumsCheck},
	}
}

// Usage is the admin part of the service's usage text.
func Usage() string {
	var b strings.Builder
	for _, c := range commands() {
		b.WriteString("  " + c.line() + "\n")
	}
	return b.String()
}

// line is the command's name and synopsis.
func (c command) line() string {
	if strings.HasPrefix(c.synopsis, "\n") {
		return "coffer " + c.name + c.synopsis
	}
	return "coffer " + c.name + " " + c.synopsis
}

// Parse reads args ("users create --email …") into a command, which reads
// o when it runs: main fills in what comes from the config after parsing,
// so that --help needs no valid config. Asked for
// help (-h, --help, or a group alone such as `coffer users`), it prints
// the usage of the command or group to o.Stdout and returns flag.ErrHelp:
// the caller exits 0 and runs nothing.
func Parse(args []string, o *Options) (Command, error) {
	var group []command
	for _, c := range commands() {
		name := strings.Fields(c.name)
		if len(args) >= 2 && args[0] == name[0] && args[1] == name[1] {
			return parse(c, args[2:], o)
		}
		if len(args) > 0 && args[0] == name[0] {
			group = append(group, c)
		}
	}
	if len(group) == 0 || len(args) > 1 && !isHelp(args[1]) {
		return nil, fmt.Errorf("%w %q", ErrUnknown, strings.Join(args, " "))
	}
	for _, c := range group {
		fmt.Fprintln(o.Stdout, c.line())
	}
	return nil, flag.ErrHelp
}

func parse(c command, args []string, o *Options) (Command, error) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	build := c.define(fs, o)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(o.Stdout, "Usage:", c.line())
		fs.SetOutput(o.Stdout)
		fs.PrintDefaults()
		return nil, err
	} else if err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%s: unexpected argument %q", c.name, fs.Arg(0))
	}
	return build()
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

func familiesList(_ *flag.FlagSet, o *Options) func() (Command, error) {
	return func() (Command, error) {
		return func(ctx context.Context, s *models.Store) error {
			fams, err := s.Families(ctx)
			for _, f := range fams {
				fmt.Fprintf(o.Stdout, "%s\t%s\t%d members\t%s\n", f.ID, f.Name, f.MembersCount, f.Currency)
			}
			return err
		}, nil
	}
}

func auditArchive(_ *flag.FlagSet, o *Options) func() (Command, error) {
	return func() (Command, error) {
		return func(ctx context.Context, s *models.Store) error {
			h := &jobs.Handlers{Store: s, Log: o.Log, Retention: o.Retention, ArchiveDir: o.ArchiveDir}
			n, err := h.ArchiveAudit(ctx)
			if err == nil {
				fmt.Fprintf(o.Stdout, "audit retention (%s): %d records left the database\n", o.Retention.Name, n)
			}
			return err
		}, nil
	}
}

func secretsBackfill(fs *flag.FlagSet, o *Options) func() (Command, error) {
	dry := fs.Bool("dry-run", false, "count what would change, change nothing")
	return func() (Command, error) {
		return func(ctx context.Context, s *models.Store) error {
			r, err := s.BackfillSecrets(ctx, *dry)
			if err == nil {
				fmt.Fprintf(o.Stdout, "secrets backfill (dry run: %t): scanned %d, encrypted %d, re-encrypted %d, already current %d, unreadable %d\n",
					*dry, r.Scanned, r.Encrypted, r.Reencrypted, r.Current, r.Unreadable)
			}
			return err
		}, nil
	}
}

// ErrBalanceDrift is balances check's answer when it found differences
// and was not asked to fix them: the command exits non-zero.
var ErrBalanceDrift = errors.New("balances differ from their full recalculation; run with --fix to rewrite them")

func balancesCheck(fs *flag.FlagSet, o *Options) func() (Command, error) {
	fix := fs.Bool("fix", false, "rewrite every account that differs from the full recalculation")
	return func() (Command, error) {
		return func(ctx context.Context, s *models.Store) error {
			drifts, err := s.CheckBalances(ctx, *fix)
			accounts := map[string]bool{}
			for _, d := range drifts {
				accounts[d.AccountID.String()] = true
				fmt.Fprintf(o.Stdout, "family %s account %s %s on %s: stored %s, computed %s\n", d.FamilyID, d.AccountID, d.What,
					dayOrOpening(d.Day), figure(d.Stored, d.StoredOverflow), figure(d.Computed, d.ComputedOverflow))
			}
			if err != nil {
				return err
			}
			switch {
			case len(drifts) == 0:
				fmt.Fprintln(o.Stdout, "balances check: every account agrees with its full recalculation")
			case *fix:
				fmt.Fprintf(o.Stdout, "balances check: %d differences in %d accounts, fixed\n", len(drifts), len(accounts))
			default:
				fmt.Fprintf(o.Stdout, "balances check: %d differences in %d accounts\n", len(drifts), len(accounts))
				return ErrBalanceDrift
			}
			return nil
		}, nil
	}
}

// ErrSumsDrift is sums check's answer when it found differences and was
// not asked to fix them: the command exits non-zero.
var ErrSumsDrift = errors.New("kept sums differ from the sums of their rows; run with --fix to rebuild them")

func sumsCheck(fs *flag.FlagSet, o *Options) func() (Command, error) {
	fix := fs.Bool("fix", false, "rebuild the sums of every family that differs from its rows")
	return func() (Command, error) {
		return func(ctx context.Context, s *models.Store) error {
			fams, err := s.Families(ctx)
			if err != nil {
				return err
			}
			drifted, n := 0, 0
			for _, f := range fams {
				drifts, err := s.CheckTransactionSums(ctx, f.ID)
				if err != nil {
					return err
				}
				for _, d := range drifts {
					fmt.Fprintf(o.Stdout, "family %s %s\n", f.ID, d)
				}
				if len(drifts) == 0 {
					continue
				}
				drifted, n = drifted+1, n+len(drifts)
				if *fix {
					if err := s.RebuildTransactionSums(ctx, f.ID); err != nil {
						return err
					}
				}
			}
			switch {
			case drifted == 0:
				fmt.Fprintln(o.Stdout, "sums check: every family's kept sums agree with its rows")
			case *fix:
				fmt.Fprintf(o.Stdout, "sums check: %d differences in %d families, rebuilt\n", n, drifted)
			default:
				fmt.Fprintf(o.Stdout, "sums check: %d differences in %d families\n", n, drifted)
				return ErrSumsDrift
			}
			return nil
		}, nil
	}
}

func dayOrOpening(d civil.Date) string {
	if d == "" {
		return "the undated opening"
	}
	return string(d)
}

func figure(a money.Amount, overflow bool) string {
	if overflow {
		return "out of range"
	}
	return a.String()
}

// Welcome is what `coffer dev` prints once it listens at appURL.
func Welcome(appURL string) string {
	return strings.ReplaceAll(welcome, "APP_URL", appURL)
}

const welcome = `
coffer is running at APP_URL  (API docs: APP_URL/api/docs)

Create a first user and an API key in another terminal, in this directory:
  go run . users create --email you@example.com --role super_admin
  go run . apikeys create --email you@example.com
Then:
  curl -H "X-Api-Key: <key>" APP_URL/api/v1/accounts

`
