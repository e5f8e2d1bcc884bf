package ssotest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// DexUser is one of Dex's static password users.
type DexUser struct {
	Email      string // what the user types into Dex's login form
	Password   string
	Username   string // Dex's "username": the name claim unless Name is set
	Name       string
	UserID     string // Dex's user id; the ID token's sub is Dex.Subject(UserID)
	Groups     []string
	Unverified bool // emailVerified: false, so the ID token says email_verified false
}

// DefaultDexUsers are the users StartDex creates when DexOptions.Users is
// empty: alice (admins, staff), bob (staff) and eve, whose email is not
// verified (staff). Each password is the name followed by "-password".
func DefaultDexUsers() []DexUser {
	return []DexUser{
		{Email: "alice@example.com", Password: "alice-password", Username: "alice", Name: "Alice Admin", UserID: "alice-id", Groups: []string{"admins", "staff"}},
		{Email: "bob@example.com", Password: "bob-password", Username: "bob", Name: "Bob Member", UserID: "bob-id", Groups: []string{"staff"}},
		{Email: "eve@example.com", Password: "eve-password", Username: "eve", Name: "Eve Unverified", UserID: "eve-id", Groups: []string{"staff"}, Unverified: true},
	}
}

// DexOptions configure StartDex. Only RedirectURIs is required.
type DexOptions struct {
	ClientID     string    // default "coffer"
	ClientSecret string    // default random
	RedirectURIs []string  // the static client's redirect URIs
	Users        []DexUser // default DefaultDexUsers()
}

// Dex is a running Dex identity provider (v2.45.1) with one static client
// and the password database as its only connector. Dex v2.45.1 has no
// end-session endpoint, so RP-initiated logout is tested against Provider.
type Dex struct {
	Issuer       string // http://127.0.0.1:<port>/dex
	ClientID     string
	ClientSecret string
	RedirectURIs []string
	Users        []DexUser

	// The endpoints, for the generic OAuth 2.0 strategy.
	AuthURL     string
	TokenURL    string
	UserinfoURL string

	log *syncBuffer
}

// StartDex starts Dex on a free loopback port for the test's lifetime,
// waits until discovery answers, and prints Dex's log if the test failed.
// The binary is $COFFER_DEX_BIN, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/coffer/dex-v2.45.1; when it is missing,
// StartDex runs deploy/tools/dex/build.sh first (minutes, once per
// machine; a file lock keeps parallel test packages from building twice).
func StartDex(t testing.TB, opts DexOptions) *Dex {
	t.Helper()
	if len(opts.RedirectURIs) == 0 {
		t.Fatal("ssotest: StartDex needs at least one redirect URI")
	}
	bin := dexBinary(t)
	d := &Dex{
		ClientID:     opts.ClientID,
		ClientSecret: opts.ClientSecret,
		RedirectURIs: append([]string(nil), opts.RedirectURIs...),
		Users:        append([]DexUser(nil), opts.Users...),
	}
	if d.ClientID == "" {
		d.ClientID = "coffer"
	}
	if d.ClientSecret == "" {
		d.ClientSecret = random(24)
	}
	if len(d.Users) == 0 {
		d.Users = DefaultDexUsers()
	}
	// Another process can take the free port between our probe and Dex's
	// listen, so a lost race is retried on a new port.
	for attempt := 1; ; attempt++ {
		err := d.start(t, bin)
		if err == nil {
			return d
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			t.Fatalf("ssotest: start dex: %v\ndex log:\n%s", err, d.Log())
		}
	}
}

var errPortTaken = errors.New("port already in use")

func (d *Dex) start(t testing.TB, bin string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	d.Issuer = "http://" + addr + "/dex"
	d.AuthURL, d.TokenURL, d.UserinfoURL = d.Issuer+"/auth", d.Issuer+"/token", d.Issuer+"/userinfo"

	config, err := d.config(addr)
	if err != nil {
		return err
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "dex.yaml")
	if err := os.WriteFile(path, config, 0o600); err != nil {
		return err
	}

	d.log = &syncBuffer{}
	cmd := exec.Command(bin, "serve", path)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = d.log, d.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit status is in the log; a kill is expected
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Kill() // fails only when it already exited
		<-exited
	}

	if err := waitReady(d.Issuer+"/.well-known/openid-configuration", exited, 30*time.Second); err != nil {
		stop()
		if strings.Contains(d.Log(), "address already in use") {
			return errPortTaken
		}
		return err
	}
	log := d.log
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("dex log:\n%s", log.String())
		}
	})
	return nil
}

// config is Dex's configuration file. JSON is YAML, so it is written with
// encoding/json; the keys are those of Dex v2.45.1 (cmd/dex/config.go,
// storage.Client, storage.Password).
func (d *Dex) config(addr string) ([]byte, error) {
	type password struct {
		Email         string   `json:"email"`
		Hash          string   `json:"hash"`
		Username      string   `json:"username"`
		Name          string   `json:"name,omitempty"`
		UserID        string   `json:"userID"`
		Groups        []string `json:"groups,omitempty"`
		EmailVerified *bool    `json:"emailVerified,omitempty"` // absent means true
	}
	passwords := make([]password, 0, len(d.Users))
	for _, u := range d.Users {
		// Dex refuses hashes cheaper than bcrypt's default cost of 10.
		hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), bcrypt.DefaultCost)
		if err != nil {
			return nil, fmt.Errorf("hash the password of %s: %w", u.Email, err)
		}
		p := password{Email: u.Email, Hash: string(hash), Username: u.Username, Name: u.Name, UserID: u.UserID, Groups: u.Groups}
		if u.Unverified {
			p.EmailVerified = new(bool)
		}
		passwords = append(passwords, p)
	}
	return json.MarshalIndent(map[string]any{
		"issuer":  d.Issuer,
		"storage": map[string]any{"type": "memory"},
		"web":     map[string]any{"http": addr},
		"logger":  map[string]any{"level": "debug", "format": "text"},
		"oauth2":  map[string]any{"skipApprovalScreen": true},
		"staticClients": []map[string]any{{
			"id": d.ClientID, "secret": d.ClientSecret, "name": "coffer", "redirectURIs": d.RedirectURIs,
		}},
		"enablePasswordDB": true,
		"staticPasswords":  passwords,
	}, "", "  ")
}

// Log is what Dex has written to stdout and stderr so far.
func (d *Dex) Log() string {
	if d.log == nil {
		return ""
	}
	return d.log.String()
}

// Subject is the sub Dex puts in ID tokens for the password user userID:
// the protobuf message {user_id: userID, conn_id: "local"}, base64url
// without padding (Dex's internal.IDTokenSubject).
func (d *Dex) Subject(userID string) string {
	var b []byte
	b = protoString(b, 1, userID)
	b = protoString(b, 2, "local")
	return base64.RawURLEncoding.EncodeToString(b)
}

func protoString(b []byte, field byte, s string) []byte {
	b = append(b, field<<3|2) // wire type 2: length-delimited
	for n := uint64(len(s)); ; n >>= 7 {
		if n < 0x80 {
			b = append(b, byte(n))
			break
		}
		b = append(b, byte(n)|0x80)
	}
	return append(b, s...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// waitReady polls url until it answers 200, the process exits or the
// deadline passes.
func waitReady(url string, exited <-chan struct{}, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-exited:
			return errors.New("dex exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("dex not ready after %s: %s", limit, last)
		case <-tick.C:
		}
	}
}

// syncBuffer is a bytes.Buffer that Dex's stdout and stderr copiers and
// the test can use at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
