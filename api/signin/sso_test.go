package signin_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
	"coffer/sso/ssotest"
)

func TestOIDCJustInTimeAccount(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	b := s.Browser(t)
	if r := b.Get("/sessions/new"); !strings.Contains(string(r.Body), `href="/auth/corp?return_to=%2f"`) || !strings.Contains(string(r.Body), "Corp SSO") {
		t.Fatalf("login page has no provider button: %s", r.Body)
	}
	r := s.SSOLogin(b)
	if r.Status != 303 || r.Header.Get("Location") != "/settings/security" {
		t.Fatalf("callback: %d %s %s", r.Status, r.Header.Get("Location"), r.Body)
	}
	u := s.User(t, "pat@example.com")
	if u.Role != models.RoleAdmin || u.PasswordHash != nil || models.Str(u.FirstName) != "Pat" {
		t.Fatalf("JIT user = %+v", u)
	}
	if u.FamilyID == s.Alpha.Family.ID || u.FamilyID == s.Beta.Family.ID {
		t.Fatal("JIT user joined an existing family")
	}
	if r := b.Get("/settings/security"); r.Status != 200 || !strings.Contains(string(r.Body), "Corp SSO") {
		t.Fatalf("signed-in page: %d", r.Status)
	}
	if n := apitest.AuditCount(t, s.Env, models.EventJITCreated, ""); n != 1 {
		t.Errorf("jit_account_created = %d", n)
	}
	auth := s.IdP.Authorizations()
	if len(auth) != 1 || auth[0].CodeChallengeMethod != "S256" || auth[0].CodeChallenge == "" || auth[0].Nonce == "" || auth[0].State == "" {
		t.Fatalf("authorization request lacks PKCE, nonce or state: %+v", auth)
	}
	idents, _ := s.Store.UserIdentities(context.Background(), u.FamilyID, u.ID)
	if len(idents) != 1 || models.Str(idents[0].Issuer) != s.IdP.Issuer || idents[0].Subject != "user-1" {
		t.Fatalf("identity = %+v", idents)
	}

	// The next login finds the identity by subject: same user, no new account.
	b2 := s.Browser(t)
	if r := s.SSOLogin(b2); r.Status != 303 {
		t.Fatalf("second login: %d %s", r.Status, r.Body)
	}
	if n := apitest.AuditCount(t, s.Env, models.EventJITCreated, ""); n != 1 {
		t.Errorf("jit_account_created after a second login = %d", n)
	}
	if n := apitest.AuditCount(t, s.Env, models.EventLogin, ""); n != 2 {
		t.Errorf("login records = %d", n)
	}
}

func TestOIDCStateAttacks(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	invalid := func(t *testing.T, r apitest.Response) {
		t.Helper()
		if r.Status != 400 || !strings.Contains(string(r.Body), "Sign-in expired or invalid. Please start again.") {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	}
	t.Run("tampered state", func(t *testing.T) {
		b := s.Browser(t)
		cb := s.StartSSO(b, "/auth/corp")
		q := cb.Query()
		q.Set("state", q.Get("state")+"x")
		invalid(t, b.Get(cb.Path+"?"+q.Encode()))
	})
	t.Run("no cookie", func(t *testing.T) {
		b := s.Browser(t)
		cb := s.StartSSO(b, "/auth/corp")
		delete(b.Cookies, "sso_state")
		invalid(t, b.Get(cb.RequestURI()))
	})
	t.Run("cookie tampered", func(t *testing.T) {
		b := s.Browser(t)
		cb := s.StartSSO(b, "/auth/corp")
		v := []byte(b.Cookies["sso_state"])
		v[len(v)/2] ^= 1
		b.Cookies["sso_state"] = string(v)
		invalid(t, b.Get(cb.RequestURI()))
	})
	t.Run("replayed callback", func(t *testing.T) {
		b := s.Browser(t)
		cb := s.StartSSO(b, "/auth/corp")
		cookie := b.Cookies["sso_state"]
		if r := b.Get(cb.RequestURI()); r.Status != 303 {
			t.Fatalf("first use: %d %s", r.Status, r.Body)
		}
		b.Cookies["sso_state"] = cookie // an attacker replays both
		invalid(t, b.Get(cb.RequestURI()))
	})
	t.Run("code injected into another browser", func(t *testing.T) {
		attacker, victim := s.Browser(t), s.Browser(t)
		cb := s.StartSSO(attacker, "/auth/corp")
		s.StartSSO(victim, "/auth/corp") // the victim has a flow of their own
		invalid(t, victim.Get(cb.RequestURI()))
	})
	if n := apitest.AuditCount(t, s.Env, models.EventLoginFailed, "state_invalid"); n != 5 {
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
			s := apitest.NewSSOEnv(t, models.StrategyOIDC)
			s.IdP.SetBehaviour(c.b)
			b := s.Browser(t)
			r := s.SSOLogin(b)
			if r.Status < 400 || r.Status >= 500 && r.Status != 502 {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if n := apitest.AuditCount(t, s.Env, models.EventLoginFailed, c.reason); n != 1 {
				t.Errorf("%s records = %d", c.reason, n)
			}
			if _, err := s.Store.UserByEmail(context.Background(), "pat@example.com"); err == nil {
				t.Error("an account was created")
			}
			if r := b.Get("/settings/security"); r.Status != 302 {
				t.Errorf("a session was issued: %d", r.Status)
			}
		})
	}
}

func TestOIDCIdentityRules(t *testing.T) {
	ctx := context.Background()
	t.Run("unverified email creates and links nothing", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC)
		u := ssotest.DefaultUser()
		u.EmailVerified = false
		s.IdP.SetUser(u)
		s.Refused(t, "has not confirmed your email address", "email_unverified")
	})
	t.Run("verified email of an existing user leads to the link page, never a silent link", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC)
		apitest.SetPassword(t, s.Env, s.Alpha.User, "correct horse battery")
		u := ssotest.DefaultUser()
		u.Email = strings.ToUpper(s.Alpha.User.Email) // case differs
		s.IdP.SetUser(u)
		b := s.Browser(t)
		r := s.SSOLogin(b)
		if r.Status != 303 || r.Header.Get("Location") != "/auth/link" {
			t.Fatalf("got %d %s", r.Status, r.Header.Get("Location"))
		}
		if idents, _ := s.Store.UserIdentities(ctx, s.Alpha.User.FamilyID, s.Alpha.User.ID); len(idents) != 0 {
			t.Fatal("linked without proof")
		}
		page := b.Get("/auth/link")
		if !strings.Contains(string(page.Body), "already exists. Confirm it is yours to connect Corp SSO.") {
			t.Fatalf("link page: %s", page.Body)
		}
		if r := b.Post("/auth/link", url.Values{"password": {"wrong password here"}}); r.Status != 422 {
			t.Fatalf("wrong password: %d", r.Status)
		}
		if apitest.AuditCount(t, s.Env, models.EventLoginFailed, "link_password_failed") != 1 {
			t.Error("no link_password_failed record")
		}
		if r := b.Post("/auth/link", url.Values{"password": {"correct horse battery"}}); r.Status != 303 {
			t.Fatalf("right password: %d %s", r.Status, r.Body)
		}
		if idents, _ := s.Store.UserIdentities(ctx, s.Alpha.User.FamilyID, s.Alpha.User.ID); len(idents) != 1 {
			t.Fatal("not linked after the password")
		}
		if apitest.AuditCount(t, s.Env, models.EventLink, "") != 1 {
			t.Error("no link record")
		}
		if r := b.Get("/settings/security"); r.Status != 200 {
			t.Fatalf("not signed in after linking: %d", r.Status)
		}
	})
	t.Run("link_only refuses creation", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC, func(o *api.Options) { o.SSO.JITMode = api.JITLinkOnly })
		s.Refused(t, "accounts cannot be created through single sign-on here", "jit_disabled")
	})
	t.Run("domain not allowed", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC, func(o *api.Options) { o.SSO.AllowedDomains = []string{"corp.example"} })
		s.Refused(t, "New accounts can only be created for approved email domains.", "")
		u := ssotest.DefaultUser()
		u.Email = "pat@CORP.example"
		s.IdP.SetUser(u)
		if r := s.SSOLogin(s.Browser(t)); r.Status != 303 {
			t.Fatalf("listed domain: %d %s", r.Status, r.Body)
		}
	})
	t.Run("issuer change on a later login", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC)
		if r := s.SSOLogin(s.Browser(t)); r.Status != 303 {
			t.Fatalf("first login: %d", r.Status)
		}
		// The administrator points the provider at another IdP that reuses
		// the subject: the stored issuer no longer matches.
		other := ssotest.NewProvider(t)
		s.Prov.Issuer, s.Prov.ClientID = apitest.Ptr(other.Issuer), apitest.Ptr(other.ClientID)
		if err := s.Store.SetProviderSecret(s.Prov, models.ColClientSecret, other.ClientSecret); err != nil {
			t.Fatal(err)
		}
		s.Update(t)
		s.IdP = other
		s.Refused(t, "identity provider has changed. Contact an administrator.", "issuer_mismatch")
	})
	t.Run("suspended user", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC)
		if r := s.SSOLogin(s.Browser(t)); r.Status != 303 {
			t.Fatalf("first login: %d", r.Status)
		}
		u := s.User(t, "pat@example.com")
		if _, err := s.Store.DB().NewUpdate().Table("users").Set("status = 'suspended'").Where("id = ?", u.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		s.Refused(t, "Your account has been suspended.", "")
	})
	t.Run("cancelled at the IdP", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC)
		s.IdP.SetBehaviour(ssotest.Behaviour{AuthorizeError: "access_denied"})
		r := s.SSOLogin(s.Browser(t))
		if r.Status != 400 || !strings.Contains(string(r.Body), "Sign-in was cancelled or refused by Corp SSO.") {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if apitest.AuditCount(t, s.Env, models.EventLoginFailed, "idp_error") != 1 {
			t.Error("no idp_error record")
		}
	})
	t.Run("disabled provider", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC)
		b := s.Browser(t)
		cb := s.StartSSO(b, "/auth/corp")
		s.Prov.Enabled = false
		s.Update(t)
		if r := b.Get(cb.RequestURI()); r.Status != 403 || !strings.Contains(string(r.Body), "This sign-in method is disabled.") {
			t.Fatalf("callback after disabling: %d %s", r.Status, r.Body)
		}
		if r := b.Get("/auth/corp"); r.Status != 404 {
			t.Fatalf("start of a disabled provider: %d", r.Status)
		}
		if r := b.Get("/auth/nobody"); r.Status != 404 {
			t.Fatalf("unknown provider: %d", r.Status)
		}
	})
	t.Run("open redirect through return_to", func(t *testing.T) {
		s := apitest.NewSSOEnv(t, models.StrategyOIDC)
		b := s.Browser(t)
		cb := s.StartSSO(b, "/auth/corp?return_to="+url.QueryEscape("//evil.example"))
		if r := b.Get(cb.RequestURI()); r.Status != 303 || r.Header.Get("Location") != "/" {
			t.Fatalf("got %d %q", r.Status, r.Header.Get("Location"))
		}
	})
}

func TestOIDCRoleMapping(t *testing.T) {
	ctx := context.Background()
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	s.Prov.GroupMappings = []models.GroupMapping{{Group: "Finance", Role: models.RoleAdmin}, {Group: "finance", Role: models.RoleSuperAdmin}}
	s.Update(t)
	// A member of alpha links the provider, then signs in with mapped groups.
	member := &models.User{FamilyID: s.Alpha.Family.ID, Email: "member-map@example.com", Role: models.RoleMember}
	if err := s.Store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.CreateIdentity(ctx, &models.SSOIdentity{FamilyID: member.FamilyID, UserID: member.ID, ProviderID: s.Prov.ID, Subject: "member-sub", Issuer: apitest.Ptr(s.IdP.Issuer)}); err != nil {
		t.Fatal(err)
	}
	login := func(groups ...string) *models.User {
		t.Helper()
		u := ssotest.DefaultUser()
		u.Subject, u.Email, u.Groups = "member-sub", "member-map@example.com", groups
		s.IdP.SetUser(u)
		if r := s.SSOLogin(s.Browser(t)); r.Status != 303 {
			t.Fatalf("login with %v: %d %s", groups, r.Status, r.Body)
		}
		return s.User(t, "member-map@example.com")
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
	if n := apitest.AuditCount(t, s.Env, models.EventRoleChanged, ""); n != 3 {
		t.Errorf("role_changed records = %d, want 3", n)
	}
	// Groups missing from the token (and userinfo) count as no groups.
	s.IdP.SetBehaviour(ssotest.Behaviour{GroupsIn: ssotest.GroupsNowhere})
	if u := login(); u.Role != models.RoleMember {
		t.Fatalf("no groups claim: %s", u.Role)
	}
}

func TestOAuth2ClientAuthentication(t *testing.T) {
	for method, want := range map[string]string{models.AuthPost: "client_secret_post", models.AuthBasic: "client_secret_basic"} {
		t.Run(method, func(t *testing.T) {
			s := apitest.NewSSOEnv(t, models.StrategyOAuth)
			s.Prov.TokenAuthMethod = apitest.Ptr(method)
			s.Update(t)
			if r := s.SSOLogin(s.Browser(t)); r.Status != 303 {
				t.Fatalf("login: %d %s", r.Status, r.Body)
			}
			reqs := s.IdP.TokenRequests()
			if len(reqs) != 1 || reqs[0].AuthMethod != want {
				t.Fatalf("token requests = %+v, want %s", reqs, want)
			}
		})
	}
}

func TestOIDCLogoutAtTheProvider(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	b := s.Browser(t)
	if r := s.SSOLogin(b); r.Status != 303 {
		t.Fatalf("login: %d", r.Status)
	}
	b.Get("/settings/security")
	r := b.Post("/sessions/logout", url.Values{})
	loc, _ := url.Parse(r.Header.Get("Location"))
	if r.Status != 302 || !strings.HasPrefix(r.Header.Get("Location"), s.IdP.EndSessionURL) {
		t.Fatalf("logout: %d %s", r.Status, r.Header.Get("Location"))
	}
	q := loc.Query()
	if q.Get("id_token_hint") == "" || q.Get("client_id") != s.IdP.ClientID || q.Get("post_logout_redirect_uri") != "http://example.com/sessions/new" {
		t.Fatalf("end-session query = %v", q)
	}
	if apitest.AuditCount(t, s.Env, models.EventLogoutIdP, "") != 1 {
		t.Error("no logout_idp record")
	}
	if r := b.Get("/settings/security"); r.Status != 302 {
		t.Fatalf("session survived logout: %d", r.Status)
	}
}

func TestConnectAndUnlink(t *testing.T) {
	ctx := context.Background()
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	apitest.SetPassword(t, s.Env, s.Alpha.User, "correct horse battery")
	b := s.Browser(t)
	if r := b.Login(s.Alpha.User.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("login: %d", r.Status)
	}
	page := b.Get("/settings/security")
	if !strings.Contains(string(page.Body), "Connect Corp SSO") {
		t.Fatalf("no Connect button: %s", page.Body)
	}
	r := b.Post("/settings/security/connect/corp", url.Values{})
	cb, err := s.IdP.Authorize(ctx, r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if r := b.Get(cb.RequestURI()); r.Status != 303 || r.Header.Get("Location") != "/auth/link" {
		t.Fatalf("callback: %d %s", r.Status, r.Header.Get("Location"))
	}
	if page := b.Get("/auth/link"); !strings.Contains(string(page.Body), "Connect Corp SSO account pat@example.com to your account") {
		t.Fatalf("link page: %s", page.Body)
	}
	if r := b.Post("/auth/link", url.Values{}); r.Status != 303 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	idents, _ := s.Store.UserIdentities(ctx, s.Alpha.User.FamilyID, s.Alpha.User.ID)
	if len(idents) != 1 {
		t.Fatalf("identities = %d", len(idents))
	}
	// With a password and local login on, unlinking is allowed.
	b.Get("/settings/security")
	if r := b.Post("/settings/security/identities/"+idents[0].ID.String()+"/unlink", url.Values{}); r.Status != 303 {
		t.Fatalf("unlink: %d %s", r.Status, r.Body)
	}
	if apitest.AuditCount(t, s.Env, models.EventUnlink, "") != 1 || apitest.AuditCount(t, s.Env, models.EventLink, "") != 1 {
		t.Error("link/unlink not audited")
	}
}

func TestUnlinkOfTheOnlyWayIn(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	b := s.Browser(t)
	if r := s.SSOLogin(b); r.Status != 303 {
		t.Fatalf("login: %d", r.Status)
	}
	u := s.User(t, "pat@example.com")
	idents, _ := s.Store.UserIdentities(context.Background(), u.FamilyID, u.ID)
	page := b.Get("/settings/security")
	if !strings.Contains(string(page.Body), "Add another sign-in method before disconnecting this one.") {
		t.Fatalf("security page: %s", page.Body)
	}
	r := b.Post("/settings/security/identities/"+idents[0].ID.String()+"/unlink", url.Values{})
	if r.Status != 422 {
		t.Fatalf("unlink of the only way in: %d", r.Status)
	}
	if idents, _ := s.Store.UserIdentities(context.Background(), u.FamilyID, u.ID); len(idents) != 1 {
		t.Fatal("the identity was removed")
	}
}

func TestJITRaceMakesOneAccount(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	const tabs = 4
	bs := make([]*apitest.Browser, tabs)
	cbs := make([]*url.URL, tabs)
	for i := range bs {
		bs[i] = s.Browser(t)
		cbs[i] = s.StartSSO(bs[i], "/auth/corp")
	}
	done := make(chan int, tabs)
	for i := range bs {
		go func() { done <- bs[i].Get(cbs[i].RequestURI()).Status }()
	}
	for range tabs {
		if st := <-done; st != 303 {
			t.Errorf("a tab got %d", st)
		}
	}
	n, err := s.Store.DB().NewSelect().Table("users").Where("lower(email) = 'pat@example.com'").Count(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("users = %d, %v", n, err)
	}
	if c := apitest.AuditCount(t, s.Env, models.EventJITCreated, ""); c != 1 {
		t.Fatalf("jit records = %d", c)
	}
}

func TestOIDCHostileClaims(t *testing.T) {
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	u := ssotest.DefaultUser()
	u.GivenName = "Pat\x00" + strings.Repeat("é", 300)
	u.FamilyName = "D\u0000oe"
	u.Groups = []string{"staff\x00", strings.Repeat("g", 2000)}
	u.Extra = map[string]any{"nested": map[string]any{"k\x00": []any{"v\x00", nil, 3}}}
	s.IdP.SetUser(u)
	b := s.Browser(t)
	b.IP = "10.0.0.1" // any address; the user agent below is not UTF-8
	r := b.Send("GET", "/sessions/new", nil, map[string]string{"User-Agent": "bad \xff\xfe agent \x00"})
	if r.Status != 200 {
		t.Fatalf("login page: %d", r.Status)
	}
	if r := s.SSOLogin(b); r.Status != 303 {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	got := s.User(t, "pat@example.com")
	if strings.ContainsRune(models.Str(got.FirstName), 0) || len(models.Str(got.FirstName)) > 255 {
		t.Fatalf("first name stored as %q", models.Str(got.FirstName))
	}
	// A subject that no column could hold unchanged is refused, not a 500.
	u = ssotest.DefaultUser()
	u.Subject = "sub\x00ject"
	s.IdP.SetUser(u)
	if r := s.SSOLogin(s.Browser(t)); r.Status != 400 {
		t.Fatalf("NUL in the subject: %d", r.Status)
	}
}
