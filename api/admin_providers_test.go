package api_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/secret"
	"coffer/sso/ssotest"
)

// superAdmin signs a super admin of alpha in and returns the browser.
func superAdmin(t *testing.T, e *env) *browser {
	t.Helper()
	root := newSuperAdmin(t, e, e.alpha.Family)
	b := e.browser(t)
	if r := b.login(root.Email, "correct horse battery"); r.status != 303 {
		t.Fatalf("super admin login: %d", r.status)
	}
	return b
}

// oidcForm is a valid new-provider form for idp.
func oidcForm(idp *ssotest.Provider, name string) url.Values {
	return url.Values{
		"strategy": {models.StrategyOIDC}, "name": {name}, "label": {"Corp SSO"}, "enabled": {"1"},
		"issuer": {idp.Issuer}, "client_id": {idp.ClientID}, "client_secret": {idp.ClientSecret},
		"scopes": {"openid email profile groups"}, "default_role": {models.RoleMember},
		"mapping_group": {"Finance", ""}, "mapping_role": {models.RoleAdmin, models.RoleMember},
	}
}

func TestProviderScreensPermissions(t *testing.T) {
	e := newEnv(t)
	admin := signedInBrowser(t, e) // a family admin, not a super admin
	for _, path := range []string{"/admin/sso_providers", "/admin/sso_providers/new"} {
		if r := admin.get(path); r.status != 403 {
			t.Errorf("family admin on %s: %d", path, r.status)
		}
	}
	if r := admin.post("/admin/sso_providers", url.Values{"name": {"x"}}); r.status != 403 {
		t.Errorf("family admin creating a provider: %d", r.status)
	}
	if r := e.browser(t).get("/admin/sso_providers"); r.status != 302 {
		t.Errorf("anonymous: %d", r.status)
	}
}

func TestProviderFormValidation(t *testing.T) {
	e := newEnv(t)
	idp := ssotest.NewProvider(t)
	b := superAdmin(t, e)
	b.get("/admin/sso_providers/new?strategy=openid_connect")
	for name, c := range map[string]struct {
		edit func(url.Values)
		idp  ssotest.Behaviour // of the IdP while the form is saved
		want string
	}{
		"not a slug":    {edit: func(f url.Values) { f.Set("name", "Okta!") }, want: "Use lowercase letters, digits, - and _; start with a letter."},
		"reserved name": {edit: func(f url.Values) { f.Set("name", "saml") }, want: "This name is reserved."},
		"bad rules": {edit: func(f url.Values) { f.Set("rules", `{"conditions": [{"value": 1, "role": "admin"}]}`) },
			want: "rules.conditions[0]: attribute is required"},
		"super admin unconfirmed": {edit: func(f url.Values) { f.Set("default_role", models.RoleSuperAdmin) },
			want: "Every account created through this provider becomes a super admin."},
		"no groups scope":             {edit: func(f url.Values) { f.Set("scopes", "openid email") }, want: "Group mappings need the groups scope."},
		"discovery of another issuer": {idp: ssotest.Behaviour{DiscoveryIssuer: "https://other.example"}, want: "Issuer mismatch"},
		"discovery answering HTML":    {idp: ssotest.Behaviour{DiscoveryBody: "<html>login</html>"}, want: "The discovery document is not valid JSON."},
	} {
		t.Run(name, func(t *testing.T) {
			idp.SetBehaviour(c.idp)
			defer idp.SetBehaviour(ssotest.Behaviour{})
			f := oidcForm(idp, "corp")
			if c.edit != nil {
				c.edit(f)
			}
			r := b.post("/admin/sso_providers", f)
			if r.status != 422 || !strings.Contains(string(r.body), htmlEscape(c.want)) {
				t.Fatalf("got %d, want 422 with %q: %s", r.status, c.want, r.body)
			}
		})
	}
	ps, _ := e.store.SSOProviders(context.Background())
	if len(ps) != 0 {
		t.Fatalf("a refused form saved %d providers", len(ps))
	}
	// A valid form saves; the same name again is refused.
	if r := b.post("/admin/sso_providers", oidcForm(idp, "corp")); r.status != 303 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	b.get("/admin/sso_providers/new")
	if r := b.post("/admin/sso_providers", oidcForm(idp, "corp")); r.status != 422 || !strings.Contains(string(r.body), "Name is already used.") {
		t.Fatalf("duplicate: %d", r.status)
	}
}

func TestProviderLifecycleOnTwoInstances(t *testing.T) {
	ctx := context.Background()
	a := newEnv(t)
	// A second web instance: its own app and provider cache, the same
	// database and Redis.
	b := a.instance(t)
	idp := ssotest.NewProvider(t)
	root := superAdmin(t, a)
	root.get("/admin/sso_providers/new")
	if r := root.post("/admin/sso_providers", oidcForm(idp, "corp")); r.status != 303 {
		t.Fatalf("create on A: %d %s", r.status, r.body)
	}
	p := providerNamed(t, a, "corp")
	if models.Str(p.ClientSecretEnc) == idp.ClientSecret || !secret.IsSealed(models.Str(p.ClientSecretEnc)) {
		t.Fatal("client secret stored in clear")
	}
	index := root.get("/admin/sso_providers")
	if !strings.Contains(string(index.body), "http://example.com/auth/corp/callback") || strings.Contains(string(index.body), idp.ClientSecret) {
		t.Fatalf("index: %s", index.body)
	}
	if edit := root.get("/admin/sso_providers/" + p.ID.String() + "/edit"); strings.Contains(string(edit.body), idp.ClientSecret) ||
		!strings.Contains(string(edit.body), "••• set") {
		t.Fatal("the edit form renders the secret back")
	}

	// B uses it on the next request, without a restart.
	s := &ssoEnv{env: b, idp: idp, prov: p}
	visitor := b.browser(t)
	if r := visitor.get("/sessions/new"); !strings.Contains(string(r.body), "Corp SSO") {
		t.Fatal("B's login page does not offer the new provider")
	}
	if r := s.ssoLogin(visitor); r.status != 303 {
		t.Fatalf("login on B: %d %s", r.status, r.body)
	}

	// Edited on A (a blank secret keeps the stored one): audited by name only.
	root.get("/admin/sso_providers/" + p.ID.String() + "/edit")
	f := oidcForm(idp, "corp")
	f.Set("label", "Corporate")
	f.Set("client_secret", "")
	if r := root.post("/admin/sso_providers/"+p.ID.String(), f); r.status != 303 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	if got := providerNamed(t, a, "corp"); got.Label != "Corporate" || models.Str(got.ClientSecretEnc) != models.Str(p.ClientSecretEnc) {
		t.Fatalf("after update: label %q, secret kept %v", got.Label, models.Str(got.ClientSecretEnc) == models.Str(p.ClientSecretEnc))
	}
	logs, _, _ := a.store.AuditLogs(ctx, models.AuditFilter{EventType: models.EventProviderUpdated}, models.Page{Number: 1, Size: 5})
	if len(logs) != 1 || !strings.Contains(strings.Join(anyStrings(logs[0].Metadata["changed_fields"]), ","), "label") ||
		strings.Contains(metadataText(logs[0].Metadata), "Corporate") {
		t.Fatalf("provider_updated = %+v", logs)
	}

	// Disabled on A: B refuses the next start.
	root.get("/admin/sso_providers")
	if r := root.post("/admin/sso_providers/"+p.ID.String()+"/toggle", url.Values{}); r.status != 303 {
		t.Fatalf("toggle: %d", r.status)
	}
	if r := b.browser(t).get("/auth/corp"); r.status != 404 {
		t.Fatalf("B after disabling: %d", r.status)
	}

	// Test connection saves nothing and reports each check.
	root.get("/admin/sso_providers")
	if r := root.post("/admin/sso_providers/"+p.ID.String()+"/test", url.Values{}); r.status != 200 || !strings.Contains(string(r.body), "pass") {
		t.Fatalf("test connection: %d %s", r.status, r.body)
	}

	// Delete: the confirmation names the users left without a way in.
	confirm := root.get("/admin/sso_providers/" + p.ID.String() + "/delete")
	if !strings.Contains(string(confirm.body), "pat@example.com") {
		t.Fatalf("confirmation: %s", confirm.body)
	}
	if r := root.post("/admin/sso_providers/"+p.ID.String()+"/delete", url.Values{}); r.status != 303 {
		t.Fatalf("delete: %d", r.status)
	}
	for _, ev := range []string{models.EventProviderCreated, models.EventProviderUpdated, models.EventProviderDeleted} {
		if auditCount(t, a, ev, "") == 0 {
			t.Errorf("no %s record", ev)
		}
	}
}

func TestSyncRolesFromSSO(t *testing.T) {
	ctx := context.Background()
	s := newSSOEnv(t, models.StrategyOIDC)
	setPassword(t, s.env, s.alpha.User, "correct horse battery")
	m := member(t, s.env, s.alpha.Family, "synced-"+s.alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	if err := s.store.CreateIdentity(ctx, &models.SSOIdentity{UserID: m.ID, ProviderID: s.prov.ID, Subject: "sync-sub",
		Claims: map[string]any{"groups": []any{"Finance"}}}); err != nil {
		t.Fatal(err)
	}
	admin := s.browser(t)
	admin.login(s.alpha.User.Email, "correct horse battery")
	// No mappings yet: no button.
	if page := admin.get("/admin/users/" + m.ID.String()); strings.Contains(string(page.body), "Sync Roles from SSO") {
		t.Fatal("button shown for a provider without mappings")
	}
	s.prov.GroupMappings = []models.GroupMapping{{Group: "Finance", Role: models.RoleAdmin}}
	s.update(t)
	page := admin.get("/admin/users/" + m.ID.String())
	if !strings.Contains(string(page.body), "Sync Roles from SSO") || !strings.Contains(string(page.body), "managed by Corp SSO group mappings") {
		t.Fatalf("user page: %s", page.body)
	}
	if r := admin.post("/admin/users/"+m.ID.String()+"/sync_roles", url.Values{}); r.status != 303 {
		t.Fatalf("sync: %d", r.status)
	}
	admin.get("/admin/users/" + m.ID.String())
	if r := admin.post("/admin/users/"+m.ID.String()+"/sync_roles", url.Values{}); r.status != 303 {
		t.Fatalf("second click: %d", r.status)
	}
	insp := asynq.NewInspector(s.redis)
	defer insp.Close()
	info, err := insp.GetTaskInfo(jobs.QueueDefault, "roles:sync:"+m.ID.String())
	if err != nil {
		t.Fatalf("task not queued: %v", err)
	}
	_ = insp.DeleteTask(jobs.QueueDefault, info.ID)
	h := &jobs.Handlers{Store: s.store, Log: s.logger()}
	for range 2 { // idempotent
		if err := h.RolesSync(ctx, asynq.NewTask(info.Type, info.Payload)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := s.store.UserByID(ctx, m.ID)
	if got.Role != models.RoleAdmin {
		t.Fatalf("role after sync = %s", got.Role)
	}
	logs, _, _ := s.store.AuditLogs(ctx, models.AuditFilter{EventType: models.EventRoleChanged}, models.Page{Number: 1, Size: 5})
	if len(logs) != 1 || logs[0].Metadata["source"] != models.RoleSourceSync || *logs[0].UserID != s.alpha.User.ID {
		t.Fatalf("role_changed = %+v", logs)
	}
}

func providerNamed(t *testing.T, e *env, name string) *models.SSOProvider {
	t.Helper()
	ps, err := e.store.SSOProviders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	t.Fatalf("no provider %q", name)
	return nil
}

func anyStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func metadataText(m map[string]any) string {
	var b strings.Builder
	for k, v := range m {
		b.WriteString(k)
		if s, ok := v.(string); ok {
			b.WriteString(s)
		}
		for _, s := range anyStrings(v) {
			b.WriteString(s)
		}
	}
	return b.String()
}

func htmlEscape(s string) string {
	return strings.NewReplacer(`"`, "&#34;", "'", "&#39;").Replace(s)
}
