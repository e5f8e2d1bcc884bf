package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/term"

	"coffer/models"
	"coffer/models/money"
	"coffer/models/secret"
)

// usersCreate adds a user to a new family, which they administer, or to an
// existing one, and prints the user's id.
func usersCreate(fs *flag.FlagSet, o *Options) func() (Command, error) {
	email := fs.String("email", "", "email address (required)")
	password := fs.String("password", "", "password; read from the terminal when absent")
	role := fs.String("role", models.RoleMember, "member, admin or super_admin")
	familyName := fs.String("family", "", "create a new family with this name (default: the email's local part)")
	familyID := fs.String("family-id", "", "join the existing family with this id")
	currency := fs.String("currency", "USD", "currency of a new family")
	return func() (Command, error) {
		var problems []string
		if !strings.Contains(*email, "@") {
			problems = append(problems, "--email must be an email address")
		}
		if !models.ValidRole(*role) {
			problems = append(problems, "--role must be member, admin or super_admin")
		}
		cur, ok := money.LookupCurrency(*currency)
		if !ok {
			problems = append(problems, "--currency must be an ISO 4217 code")
		}
		join, err := uuid.Parse(strings.TrimSpace(*familyID))
		if *familyID != "" && err != nil {
			problems = append(problems, "--family-id must be a UUID")
		}
		if *familyName != "" && *familyID != "" {
			problems = append(problems, "--family and --family-id cannot both be given")
		}
		if len(problems) > 0 {
			return nil, errors.New(strings.Join(problems, "; "))
		}
		hash, err := passwordHash(*password, o.Stdin)
		if err != nil {
			return nil, err
		}
		local, _, _ := strings.Cut(*email, "@")
		f := &models.Family{Name: cmp.Or(*familyName, local), Currency: cur.Code}
		u := &models.User{Email: *email, Role: *role, PasswordHash: &hash}
		return func(ctx context.Context, s *models.Store) error {
			var exists *models.FamilyExistsError
			switch err := s.AddUser(ctx, u, join, f); {
			case errors.As(err, &exists):
				return fmt.Errorf("%w; add the user to it with --family-id %s, or choose another --family", err, exists.Family.ID)
			case errors.Is(err, models.ErrNotFound):
				return fmt.Errorf("no family with id %s", join)
			case errors.Is(err, models.ErrConflict):
				return fmt.Errorf("a user with email %s already exists", *email)
			case err != nil:
				return err
			}
			fmt.Fprintln(o.Stdout, u.ID)
			return nil
		}, nil
	}
}

// usersSetRole changes a role under the same guards as the admin screen
// (the last super admin stays); it is audited as a manual change with no
// acting user.
func usersSetRole(fs *flag.FlagSet, o *Options) func() (Command, error) {
	email := fs.String("email", "", "email address (required)")
	role := fs.String("role", "", "member, admin or super_admin (required)")
	return func() (Command, error) {
		if !models.ValidRole(*role) {
			return nil, errors.New("--role must be member, admin or super_admin")
		}
		return func(ctx context.Context, s *models.Store) error {
			u, err := userByEmail(ctx, s, *email)
			if err == nil {
				err = s.SetUserRole(ctx, models.AdminChange{ActorRole: models.RoleSuperAdmin, TargetID: u.ID}, *role)
			}
			if err == nil {
				fmt.Fprintf(o.Stdout, "%s is now %s\n", u.Email, *role)
			}
			return err
		}, nil
	}
}

// usersSetPassword sets a user's password and ends their sessions.
func usersSetPassword(fs *flag.FlagSet, o *Options) func() (Command, error) {
	email := fs.String("email", "", "email address (required)")
	password := fs.String("password", "", "password; read from the terminal when absent")
	return func() (Command, error) {
		hash, err := passwordHash(*password, o.Stdin)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, s *models.Store) error {
			u, err := userByEmail(ctx, s, *email)
			if err == nil {
				err = s.ResetPassword(ctx, u.ID, hash, uuid.Nil)
			}
			if err == nil {
				fmt.Fprintf(o.Stdout, "password set for %s; their sessions ended\n", u.Email)
			}
			return err
		}, nil
	}
}

// apikeysCreate makes a key for a user and prints it, once, on the last
// line.
func apikeysCreate(fs *flag.FlagSet, o *Options) func() (Command, error) {
	email := fs.String("email", "", "the key's user (required)")
	name := fs.String("name", "CLI key", "a name to tell keys apart")
	scope := fs.String("scope", models.ScopeReadWrite, "read or read_write")
	expiresIn := fs.Duration("expires-in", 0, "lifetime, such as 720h; 0 never expires")
	return func() (Command, error) {
		switch {
		case *email == "":
			return nil, errors.New("--email is required")
		case !models.ValidScope(*scope):
			return nil, errors.New("--scope must be read or read_write")
		case *expiresIn < 0:
			return nil, errors.New("--expires-in must be positive")
		}
		return func(ctx context.Context, s *models.Store) error {
			k := &models.APIKey{Name: *name, Scope: *scope}
			if *expiresIn > 0 {
				t := time.Now().Add(*expiresIn).UTC()
				k.ExpiresAt = &t
			}
			key, u, err := s.CreateAPIKeyByEmail(ctx, *email, k)
			if errors.Is(err, models.ErrNotFound) {
				return fmt.Errorf("no user with email %s", *email)
			}
			if err == nil {
				fmt.Fprintf(o.Stdout, "Created API key %q (%s) for %s. It is shown only once:\n%s\n", k.Name, k.Scope, u.Email, key)
			}
			return err
		}, nil
	}
}

func userByEmail(ctx context.Context, s *models.Store, email string) (*models.User, error) {
	u, err := s.UserByEmail(ctx, email)
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", email, err)
	}
	return u, nil
}

// passwordHash hashes pw, or a password read from stdin when pw is empty,
// after checking its length.
func passwordHash(pw string, stdin io.Reader) (string, error) {
	if pw == "" {
		var err error
		if pw, err = readPassword(stdin); err != nil {
			return "", err
		}
	}
	if len(pw) < secret.MinPasswordLen || len(pw) > secret.MaxPasswordLen {
		return "", fmt.Errorf("the password must be %d to %d characters long", secret.MinPasswordLen, secret.MaxPasswordLen)
	}
	return secret.HashPassword(pw, secret.DefaultArgon2)
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
