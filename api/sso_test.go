package api_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/models"
	"coffer/sso/ssotest"
)

// ssoEnv is an app with one OIDC provider, "corp", served by an
// in-process identity provider.
type ssoEnv struct {
	*env
	idp  *ssotest.Provider
	prov *models.SSOProvider
}

func newSSOEnv(t *testing.T, strategy string, opts ...func(*api.Options)) *ssoEnv {
	t.Helper()
	e := newEnv(t, opts...)
	idp := ssotest.NewProvider(t)
	p := &models.SSOProvider{Name: "corp", Strategy: strategy, Label: "Corp SSO", Enabled: true,
		ClientID: ptr(idp.ClientID), Scopes: ptr("openid email profile groups"), DefaultRole: models.RoleMember}
	switch strategy {
	case models.StrategyOIDC:
		p.Issuer, p.TokenAuthMethod = ptr(idp.Issuer), ptr(models.AuthBasic)
	case models.StrategyOAuth:
		p.AuthorizationURL, p.TokenURL, p.UserinfoURL = ptr(idp.AuthURL), ptr(idp.TokenURL), ptr(idp.UserinfoURL)
		p.TokenAuthMethod, p.Scopes = ptr(models.AuthPost), ptr("profile email groups")
	}
	models.NewProviderID(p)
	if err := e.store.SetProviderSecret(p, models.ColClientSecret, idp.ClientSecret); err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateSSOProvider(context.Background(), p, models.ProviderChange{ActorID: e.alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	return &ssoEnv{env: e, idp: idp, prov: p}
}

func ptr(s string) *string { return &s }

// update saves s.prov and announces it.
func (s *ssoEnv) update(t *testing.T) {
	t.Helper()
	if err := s.store.UpdateSSOProvider(context.Background(), s.prov, models.ProviderChange{ActorID: s.alpha.User.ID}); err != nil {
		t.Fatal(err)
	}
	s.changed(t)
}

// changed announces a provider change made behind the screens' back.
func (s *ssoEnv) changed(t *testing.T) {
	t.Helper()
	if err := s.rdb.Incr(context.Background(), "sso:providers:version").Err(); err != nil {
		t.Fatal(err)
	}
}

// startSSO follows the app to the identity provider and returns the
// callback the provider sends the browser back to.
func (s *ssoEnv) startSSO(b *browser, path string) *url.URL {
	b.t.Helper()
	r := b.get(path)
	if r.status != 302 {
		b.t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	cb, err := s.idp.Authorize(context.Background(), r.header.Get("Location"))
	if err != nil {
		b.t.Fatal(err)
	}
	return cb
}

// ssoLogin signs b in through "corp" and returns the callback's answer.
func (s *ssoEnv) ssoLogin(b *browser) response {
	b.t.Helper()
	cb := s.startSSO(b, "/auth/corp?return_to=/settings/security")
	return b.get(cb.RequestURI())
}

// refused signs in through the IdP in a new browser and expects a 403
// page saying msg and, when reason is set, one login_failed record of
// that reason.
func (s *ssoEnv) refused(t *testing.T, msg, reason string) {
	t.Helper()
	r := s.ssoLogin(s.browser(t))
	if r.status != 403 || !strings.Contains(string(r.body), msg) {
		t.Fatalf("got %d %s", r.status, r.body)
	}
	if reason != "" && auditCount(t, s.env, models.EventLoginFailed, reason) != 1 {
		t.Errorf("no %s record", reason)
	}
}

func (s *ssoEnv) user(t *testing.T, email string) *models.User {
	t.Helper()
	u, err := s.store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return u
}

func TestOIDCJustInTimeAccount(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	b := s.browser(t)
	if r := b.get("/sessions/new"); !strings.Contains(string(r.body), `href="/auth/corp?return_to=%2f"`) || !strings.Contains(string(r.body), "Corp SSO") {
		t.Fatalf("login page has no provider button: %s", r.body)
	}
	r := s.ssoLogin(b)
	if r.status != 303 || r.header.Get("Location") != "/settings/security" {
		t.Fatalf("callback: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	u := s.user(t, "pat@example.com")
	if u.Role != models.RoleAdmin || u.PasswordHash != nil || models.Str(u.FirstName) != "Pat" {
		t.Fatalf("JIT user = %+v", u)
	}
	if u.FamilyID == s.alpha.Family.ID || u.FamilyID == s.beta.Family.ID {
		t.Fatal("JIT user joined an existing family")
	}
	if r := b.get("/settings/security"); r.status != 200 || !strings.Contains(string(r.body), "Corp SSO") {
		t.Fatalf("signed-in page: %d", r.status)
	}
	if n := auditCount(t, s.env, models.EventJITCreated, ""); n != 1 {
		t.Errorf("jit_account_created = %d", n)
	}
	auth := s.idp.Authorizations()
	if len(auth) != 1 || auth[0].CodeChallengeMethod != "S256" || auth[0].CodeChallenge == "" || auth[0].Nonce == "" || auth[0].State == "" {
		t.Fatalf("authorization request lacks PKCE, nonce or state: %+v", auth)
	}
	idents, _ := s.store.UserIdentities(context.Background(), u.ID)
	if len(idents) != 1 || models.Str(idents[0].Issuer) != s.idp.Issuer || idents[0].Subject != "user-1" {
		t.Fatalf("identity = %+v", idents)
	}

	// The next login finds the identity by subject: same user, no new account.
	b2 := s.browser(t)
	if r := s.ssoLogin(b2); r.status != 303 {
		t.Fatalf("second login: %d %s", r.status, r.body)
	}
	if n := auditCount(t, s.env, models.EventJITCreated, ""); n != 1 {
		t.Errorf("jit_account_created after a second login = %d", n)
	}
	if n := auditCount(t, s.env, models.EventLogin, ""); n != 2 {
		t.Errorf("login records = %d", n)
	}
}

func TestOIDCStateAttacks(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	invalid := func(t *testing.T, r response) {
		t.Helper()
		if r.status != 400 || !strings.Contains(string(r.body), "Sign-in expired or invalid. Please start again.") {
			t.Fatalf("got %d %s", r.status, r.body)
		}
	}
	t.Run("tampered state", func(t *testing.T) {
		b := s.browser(t)
		cb := s.startSSO(b, "/auth/corp")
		q := cb.Query()
		q.Set("state", q.Get("state")+"x")
		invalid(t, b.get(cb.Path+"?"+q.Encode()))
	})
	t.Run("no cookie", func(t *testing.T) {
		b := s.browser(t)
		cb := s.startSSO(b, "/auth/corp")
		delete(b.cookies, "sso_state")
		invalid(t, b.get(cb.RequestURI()))
	})
	t.Run("cookie tampered", func(t *testing.T) {
		b := s.browser(t)
		cb := s.startSSO(b, "/auth/corp")
		v := []byte(b.cookies["sso_state"])
		v[len(v)/2] ^= 1
		b.cookies["sso_state"] = string(v)
		invalid(t, b.get(cb.RequestURI()))
	})
	t.Run("replayed callback", func(t *testing.T) {
		b := s.browser(t)
		cb := s.startSSO(b, "/auth/corp")
		cookie := b.cookies["sso_state"]
		if r := b.get(cb.RequestURI()); r.status != 303 {
			t.Fatalf("first use: %d %s", r.status, r.body)
		}
		b.cookies["sso_state"] = cookie // an attacker replays both
		invalid(t, b.get(cb.RequestURI()))
	})
	t.Run("code injected into another browser", func(t *testing.T) {
		attacker, victim := s.browser(t), s.browser(t)
		cb := s.startSSO(attacker, "/auth/corp")
		s.startSSO(victim, "/auth/corp") // the victim has a flow of their own
		invalid(t, victim.get(cb.RequestURI()))
	})
	if n := auditCount(t, s.env, models.EventLoginFailed, "state_invalid"); n != 5 {
		t.Errorf("state_invalid records = %d, want 5", n)
	}
}

func TestOIDCTokenAttacks(t *testing.T) {
	for name, c := range map[string]struct {
		b      ssotest.Behaviour
		reason string
	}{
		"wrong nonce":        {ssotest.Behaviour{Nonce: "not-the-one-sent"}, "nonce_mismatch"},
		"no nonce":           {ssotest.Behaviour{NoNonce: true}, "nonce_mismatch"},
		"other audience":     {ssotest.Behaviour{Audience: []string{"someone-else"}}, "id_token_invalid"},
		"expired":            {ssotest.Behaviour{IssuedAt: time.Now().Add(-2 * time.Hour), Expires: time.Now().Add(-time.Hour)}, "id_token_invalid"},
		"unadvertised key":   {ssotest.Behaviour{Signing: ssotest.SignUnadvertised}, "id_token_invalid"},
		"alg none":           {ssotest.Behaviour{Signing: ssotest.SignNone}, "id_token_invalid"},
		"HMAC":               {ssotest.Behaviour{Signing: ssotest.SignHS256}, "id_token_invalid"},
		"other issuer":       {ssotest.Behaviour{Issuer: "https://evil.example"}, "id_token_invalid"},
		"no ID token":        {ssotest.Behaviour{NoIDToken: true}, "id_token_invalid"},
		"userinfo other sub": {ssotest.Behaviour{IDTokenOmit: []string{"email"}, UserinfoSubject: "someone-else"}, "userinfo_invalid"},
		"token endpoint 500": {ssotest.Behaviour{TokenStatus: 500}, "token_exchange_failed"},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSSOEnv(t, models.StrategyOIDC)
			s.idp.SetBehaviour(c.b)
			b := s.browser(t)
			r := s.ssoLogin(b)
			if r.status < 400 || r.status >= 500 && r.status != 502 {
				t.Fatalf("got %d %s", r.status, r.body)
			}
			if n := auditCount(t, s.env, models.EventLoginFailed, c.reason); n != 1 {
				t.Errorf("%s records = %d", c.reason, n)
			}
			if _, err := s.store.UserByEmail(context.Background(), "pat@example.com"); err == nil {
				t.Error("an account was created")
			}
			if r := b.get("/settings/security"); r.status != 302 {
				t.Errorf("a session was issued: %d", r.status)
			}
		})
	}
}

func TestOIDCIdentityRules(t *testing.T) {
	ctx := context.Background()
	t.Run("unverified email creates and links nothing", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC)
		u := ssotest.DefaultUser()
		u.EmailVerified = false
		s.idp.SetUser(u)
		s.refused(t, "has not confirmed your email address", "email_unverified")
	})
	t.Run("verified email of an existing user leads to the link page, never a silent link", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC)
		setPassword(t, s.env, s.alpha.User, "correct horse battery")
		u := ssotest.DefaultUser()
		u.Email = strings.ToUpper(s.alpha.User.Email) // case differs
		s.idp.SetUser(u)
		b := s.browser(t)
		r := s.ssoLogin(b)
		if r.status != 303 || r.header.Get("Location") != "/auth/link" {
			t.Fatalf("got %d %s", r.status, r.header.Get("Location"))
		}
		if idents, _ := s.store.UserIdentities(ctx, s.alpha.User.ID); len(idents) != 0 {
			t.Fatal("linked without proof")
		}
		page := b.get("/auth/link")
		if !strings.Contains(string(page.body), "already exists. Confirm it is yours to connect Corp SSO.") {
			t.Fatalf("link page: %s", page.body)
		}
		if r := b.post("/auth/link", url.Values{"password": {"wrong password here"}}); r.status != 422 {
			t.Fatalf("wrong password: %d", r.status)
		}
		if auditCount(t, s.env, models.EventLoginFailed, "link_password_failed") != 1 {
			t.Error("no link_password_failed record")
		}
		if r := b.post("/auth/link", url.Values{"password": {"correct horse battery"}}); r.status != 303 {
			t.Fatalf("right password: %d %s", r.status, r.body)
		}
		if idents, _ := s.store.UserIdentities(ctx, s.alpha.User.ID); len(idents) != 1 {
			t.Fatal("not linked after the password")
		}
		if auditCount(t, s.env, models.EventLink, "") != 1 {
			t.Error("no link record")
		}
		if r := b.get("/settings/security"); r.status != 200 {
			t.Fatalf("not signed in after linking: %d", r.status)
		}
	})
	t.Run("link_only refuses creation", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC, func(o *api.Options) { o.SSO.JITMode = api.JITLinkOnly })
		s.refused(t, "accounts cannot be created through single sign-on here", "jit_disabled")
	})
	t.Run("domain not allowed", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC, func(o *api.Options) { o.SSO.AllowedDomains = []string{"corp.example"} })
		s.refused(t, "New accounts can only be created for approved email domains.", "")
		u := ssotest.DefaultUser()
		u.Email = "pat@CORP.example"
		s.idp.SetUser(u)
		if r := s.ssoLogin(s.browser(t)); r.status != 303 {
			t.Fatalf("listed domain: %d %s", r.status, r.body)
		}
	})
	t.Run("issuer change on a later login", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC)
		if r := s.ssoLogin(s.browser(t)); r.status != 303 {
			t.Fatalf("first login: %d", r.status)
		}
		// The administrator points the provider at another IdP that reuses
		// the subject: the stored issuer no longer matches.
		other := ssotest.NewProvider(t)
		s.prov.Issuer, s.prov.ClientID = ptr(other.Issuer), ptr(other.ClientID)
		if err := s.store.SetProviderSecret(s.prov, models.ColClientSecret, other.ClientSecret); err != nil {
			t.Fatal(err)
		}
		s.update(t)
		s.idp = other
		s.refused(t, "identity provider has changed. Contact an administrator.", "issuer_mismatch")
	})
	t.Run("suspended user", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC)
		if r := s.ssoLogin(s.browser(t)); r.status != 303 {
			t.Fatalf("first login: %d", r.status)
		}
		u := s.user(t, "pat@example.com")
		if _, err := s.store.DB().NewUpdate().Table("users").Set("status = 'suspended'").Where("id = ?", u.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		s.refused(t, "Your account has been suspended.", "")
	})
	t.Run("cancelled at the IdP", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC)
		s.idp.SetBehaviour(ssotest.Behaviour{AuthorizeError: "access_denied"})
		r := s.ssoLogin(s.browser(t))
		if r.status != 400 || !strings.Contains(string(r.body), "Sign-in was cancelled or refused by Corp SSO.") {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		if auditCount(t, s.env, models.EventLoginFailed, "idp_error") != 1 {
			t.Error("no idp_error record")
		}
	})
	t.Run("disabled provider", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC)
		b := s.browser(t)
		cb := s.startSSO(b, "/auth/corp")
		s.prov.Enabled = false
		s.update(t)
		if r := b.get(cb.RequestURI()); r.status != 403 || !strings.Contains(string(r.body), "This sign-in method is disabled.") {
			t.Fatalf("callback after disabling: %d %s", r.status, r.body)
		}
		if r := b.get("/auth/corp"); r.status != 404 {
			t.Fatalf("start of a disabled provider: %d", r.status)
		}
		if r := b.get("/auth/nobody"); r.status != 404 {
			t.Fatalf("unknown provider: %d", r.status)
		}
	})
	t.Run("open redirect through return_to", func(t *testing.T) {
		s := newSSOEnv(t, models.StrategyOIDC)
		b := s.browser(t)
		cb := s.startSSO(b, "/auth/corp?return_to="+url.QueryEscape("//evil.example"))
		if r := b.get(cb.RequestURI()); r.status != 303 || r.header.Get("Location") != "/" {
			t.Fatalf("got %d %q", r.status, r.header.Get("Location"))
		}
	})
}

func TestOIDCRoleMapping(t *testing.T) {
	ctx := context.Background()
	s := newSSOEnv(t, models.StrategyOIDC)
	s.prov.GroupMappings = []models.GroupMapping{{Group: "Finance", Role: models.RoleAdmin}, {Group: "finance", Role: models.RoleSuperAdmin}}
	s.update(t)
	// A member of alpha links the provider, then signs in with mapped groups.
	member := &models.User{FamilyID: s.alpha.Family.ID, Email: "member-map@example.com", Role: models.RoleMember}
	if err := s.store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	if err := s.store.CreateIdentity(ctx, &models.SSOIdentity{UserID: member.ID, ProviderID: s.prov.ID, Subject: "member-sub", Issuer: ptr(s.idp.Issuer)}); err != nil {
		t.Fatal(err)
	}
	login := func(groups ...string) *models.User {
		t.Helper()
		u := ssotest.DefaultUser()
		u.Subject, u.Email, u.Groups = "member-sub", "member-map@example.com", groups
		s.idp.SetUser(u)
		if r := s.ssoLogin(s.browser(t)); r.status != 303 {
			t.Fatalf("login with %v: %d %s", groups, r.status, r.body)
		}
		return s.user(t, "member-map@example.com")
	}
	if u := login("Finance"); u.Role != models.RoleAdmin {
		t.Fatalf("Finance → %s, want admin", u.Role)
	}
	if u := login("FINANCE"); u.Role != models.RoleMember {
		t.Fatalf("case-insensitive match: %s", u.Role)
	}
	if u := login("staff", "Finance"); u.Role != models.RoleAdmin {
		t.Fatalf("mixed groups: %s", u.Role)
	}
	if n := auditCount(t, s.env, models.EventRoleChanged, ""); n != 3 {
		t.Errorf("role_changed records = %d, want 3", n)
	}
	// Groups missing from the token (and userinfo) count as no groups.
	s.idp.SetBehaviour(ssotest.Behaviour{GroupsIn: ssotest.GroupsNowhere})
	if u := login(); u.Role != models.RoleMember {
		t.Fatalf("no groups claim: %s", u.Role)
	}
}

func TestOAuth2ClientAuthentication(t *testing.T) {
	for method, want := range map[string]string{models.AuthPost: "client_secret_post", models.AuthBasic: "client_secret_basic"} {
		t.Run(method, func(t *testing.T) {
			s := newSSOEnv(t, models.StrategyOAuth)
			s.prov.TokenAuthMethod = ptr(method)
			s.update(t)
			if r := s.ssoLogin(s.browser(t)); r.status != 303 {
				t.Fatalf("login: %d %s", r.status, r.body)
			}
			reqs := s.idp.TokenRequests()
			if len(reqs) != 1 || reqs[0].AuthMethod != want {
				t.Fatalf("token requests = %+v, want %s", reqs, want)
			}
		})
	}
}

func TestOIDCLogoutAtTheProvider(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	b := s.browser(t)
	if r := s.ssoLogin(b); r.status != 303 {
		t.Fatalf("login: %d", r.status)
	}
	b.get("/settings/security")
	r := b.post("/sessions/logout", url.Values{})
	loc, _ := url.Parse(r.header.Get("Location"))
	if r.status != 302 || !strings.HasPrefix(r.header.Get("Location"), s.idp.EndSessionURL) {
		t.Fatalf("logout: %d %s", r.status, r.header.Get("Location"))
	}
	q := loc.Query()
	if q.Get("id_token_hint") == "" || q.Get("client_id") != s.idp.ClientID || q.Get("post_logout_redirect_uri") != "http://example.com/sessions/new" {
		t.Fatalf("end-session query = %v", q)
	}
	if auditCount(t, s.env, models.EventLogoutIdP, "") != 1 {
		t.Error("no logout_idp record")
	}
	if r := b.get("/settings/security"); r.status != 302 {
		t.Fatalf("session survived logout: %d", r.status)
	}
}

func TestConnectAndUnlink(t *testing.T) {
	ctx := context.Background()
	s := newSSOEnv(t, models.StrategyOIDC)
	setPassword(t, s.env, s.alpha.User, "correct horse battery")
	b := s.browser(t)
	if r := b.login(s.alpha.User.Email, "correct horse battery"); r.status != 303 {
		t.Fatalf("login: %d", r.status)
	}
	page := b.get("/settings/security")
	if !strings.Contains(string(page.body), "Connect Corp SSO") {
		t.Fatalf("no Connect button: %s", page.body)
	}
	r := b.post("/settings/security/connect/corp", url.Values{})
	cb, err := s.idp.Authorize(ctx, r.header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if r := b.get(cb.RequestURI()); r.status != 303 || r.header.Get("Location") != "/auth/link" {
		t.Fatalf("callback: %d %s", r.status, r.header.Get("Location"))
	}
	if page := b.get("/auth/link"); !strings.Contains(string(page.body), "Connect Corp SSO account pat@example.com to your account") {
		t.Fatalf("link page: %s", page.body)
	}
	if r := b.post("/auth/link", url.Values{}); r.status != 303 {
		t.Fatalf("connect: %d %s", r.status, r.body)
	}
	idents, _ := s.store.UserIdentities(ctx, s.alpha.User.ID)
	if len(idents) != 1 {
		t.Fatalf("identities = %d", len(idents))
	}
	// With a password and local login on, unlinking is allowed.
	b.get("/settings/security")
	if r := b.post("/settings/security/identities/"+idents[0].ID.String()+"/unlink", url.Values{}); r.status != 303 {
		t.Fatalf("unlink: %d %s", r.status, r.body)
	}
	if auditCount(t, s.env, models.EventUnlink, "") != 1 || auditCount(t, s.env, models.EventLink, "") != 1 {
		t.Error("link/unlink not audited")
	}
}

func TestUnlinkOfTheOnlyWayIn(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	b := s.browser(t)
	if r := s.ssoLogin(b); r.status != 303 {
		t.Fatalf("login: %d", r.status)
	}
	u := s.user(t, "pat@example.com")
	idents, _ := s.store.UserIdentities(context.Background(), u.ID)
	page := b.get("/settings/security")
	if !strings.Contains(string(page.body), "Add another sign-in method before disconnecting this one.") {
		t.Fatalf("security page: %s", page.body)
	}
	r := b.post("/settings/security/identities/"+idents[0].ID.String()+"/unlink", url.Values{})
	if r.status != 422 {
		t.Fatalf("unlink of the only way in: %d", r.status)
	}
	if idents, _ := s.store.UserIdentities(context.Background(), u.ID); len(idents) != 1 {
		t.Fatal("the identity was removed")
	}
}

func TestJITRaceMakesOneAccount(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	const tabs = 4
	bs := make([]*browser, tabs)
	cbs := make([]*url.URL, tabs)
	for i := range bs {
		bs[i] = s.browser(t)
		cbs[i] = s.startSSO(bs[i], "/auth/corp")
	}
	done := make(chan int, tabs)
	for i := range bs {
		go func() { done <- bs[i].get(cbs[i].RequestURI()).status }()
	}
	for range tabs {
		if st := <-done; st != 303 {
			t.Errorf("a tab got %d", st)
		}
	}
	n, err := s.store.DB().NewSelect().Table("users").Where("lower(email) = 'pat@example.com'").Count(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("users = %d, %v", n, err)
	}
	if c := auditCount(t, s.env, models.EventJITCreated, ""); c != 1 {
		t.Fatalf("jit records = %d", c)
	}
}

func TestOIDCHostileClaims(t *testing.T) {
	s := newSSOEnv(t, models.StrategyOIDC)
	u := ssotest.DefaultUser()
	u.GivenName = "Pat\x00" + strings.Repeat("é", 300)
	u.FamilyName = "D\u0000oe"
	u.Groups = []string{"staff\x00", strings.Repeat("g", 2000)}
	u.Extra = map[string]any{"nested": map[string]any{"k\x00": []any{"v\x00", nil, 3}}}
	s.idp.SetUser(u)
	b := s.browser(t)
	b.ip = "10.0.0.1" // any address; the user agent below is not UTF-8
	r := b.send("GET", "/sessions/new", nil, map[string]string{"User-Agent": "bad \xff\xfe agent \x00"})
	if r.status != 200 {
		t.Fatalf("login page: %d", r.status)
	}
	if r := s.ssoLogin(b); r.status != 303 {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	got := s.user(t, "pat@example.com")
	if strings.ContainsRune(models.Str(got.FirstName), 0) || len(models.Str(got.FirstName)) > 255 {
		t.Fatalf("first name stored as %q", models.Str(got.FirstName))
	}
	// A subject that no column could hold unchanged is refused, not a 500.
	u = ssotest.DefaultUser()
	u.Subject = "sub\x00ject"
	s.idp.SetUser(u)
	if r := s.ssoLogin(s.browser(t)); r.status != 400 {
		t.Fatalf("NUL in the subject: %d", r.status)
	}
}
