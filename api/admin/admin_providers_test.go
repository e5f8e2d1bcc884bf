package admin_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/secret"
	"coffer/sso/ssotest"
)

func TestProviderScreensPermissions(t *testing.T) {
	e := apitest.NewEnv(t)
	admin := apitest.SignedInBrowser(t, e) // a family admin, not a super admin
	for _, path := range []string{"/admin/sso_providers", "/admin/sso_providers/new"} {
		if r := admin.Get(path); r.Status != 403 {
			t.Errorf("family admin on %s: %d", path, r.Status)
		}
	}
	if r := admin.Post("/admin/sso_providers", url.Values{"name": {"x"}}); r.Status != 403 {
		t.Errorf("family admin creating a provider: %d", r.Status)
	}
	if r := e.Browser(t).Get("/admin/sso_providers"); r.Status != 302 {
		t.Errorf("anonymous: %d", r.Status)
	}
}

func TestProviderFormValidation(t *testing.T) {
	e := apitest.NewEnv(t)
	idp := ssotest.NewProvider(t)
	b := apitest.SuperAdmin(t, e)
	b.Get("/admin/sso_providers/new?strategy=openid_connect")
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
			f := apitest.OIDCForm(idp, "corp")
			if c.edit != nil {
				c.edit(f)
			}
			r := b.Post("/admin/sso_providers", f)
			if r.Status != 422 || !strings.Contains(string(r.Body), htmlEscape(c.want)) {
				t.Fatalf("got %d, want 422 with %q: %s", r.Status, c.want, r.Body)
			}
		})
	}
	ps, _ := e.Store.SSOProviders(context.Background())
	if len(ps) != 0 {
		t.Fatalf("a refused form saved %d providers", len(ps))
	}
	// A valid form saves; the same name again is refused.
	if r := b.Post("/admin/sso_providers", apitest.OIDCForm(idp, "corp")); r.Status != 303 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	b.Get("/admin/sso_providers/new")
	if r := b.Post("/admin/sso_providers", apitest.OIDCForm(idp, "corp")); r.Status != 422 || !strings.Contains(string(r.Body), "Name is already used.") {
		t.Fatalf("duplicate: %d", r.Status)
	}
}

func TestProviderLifecycleOnTwoInstances(t *testing.T) {
	ctx := context.Background()
	a := apitest.NewEnv(t)
	// A second web instance: its own app and provider cache, the same
	// database and Redis.
	b := a.Instance(t)
	idp := ssotest.NewProvider(t)
	root := apitest.SuperAdmin(t, a)
	root.Get("/admin/sso_providers/new")
	if r := root.Post("/admin/sso_providers", apitest.OIDCForm(idp, "corp")); r.Status != 303 {
		t.Fatalf("create on A: %d %s", r.Status, r.Body)
	}
	p := apitest.ProviderNamed(t, a, "corp")
	if models.Str(p.ClientSecretEnc) == idp.ClientSecret || !secret.IsSealed(models.Str(p.ClientSecretEnc)) {
		t.Fatal("client secret stored in clear")
	}
	index := root.Get("/admin/sso_providers")
	if !strings.Contains(string(index.Body), "http://example.com/auth/corp/callback") || strings.Contains(string(index.Body), idp.ClientSecret) {
		t.Fatalf("index: %s", index.Body)
	}
	if edit := root.Get("/admin/sso_providers/" + p.ID.String() + "/edit"); strings.Contains(string(edit.Body), idp.ClientSecret) ||
		!strings.Contains(string(edit.Body), "••• set") {
		t.Fatal("the edit form renders the secret back")
	}

	// B uses it on the next request, without a restart.
	s := &apitest.SSOEnv{Env: b, IdP: idp, Prov: p}
	visitor := b.Browser(t)
	if r := visitor.Get("/sessions/new"); !strings.Contains(string(r.Body), "Corp SSO") {
		t.Fatal("B's login page does not offer the new provider")
	}
	if r := s.SSOLogin(visitor); r.Status != 303 {
		t.Fatalf("login on B: %d %s", r.Status, r.Body)
	}

	// Edited on A (a blank secret keeps the stored one): audited by name only.
	root.Get("/admin/sso_providers/" + p.ID.String() + "/edit")
	f := apitest.OIDCForm(idp, "corp")
	f.Set("label", "Corporate")
	f.Set("client_secret", "")
	if r := root.Post("/admin/sso_providers/"+p.ID.String(), f); r.Status != 303 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if got := apitest.ProviderNamed(t, a, "corp"); got.Label != "Corporate" || models.Str(got.ClientSecretEnc) != models.Str(p.ClientSecretEnc) {
		t.Fatalf("after update: label %q, secret kept %v", got.Label, models.Str(got.ClientSecretEnc) == models.Str(p.ClientSecretEnc))
	}
	logs, _, _ := a.Store.AuditLogs(ctx, models.AuditFilter{EventType: models.EventProviderUpdated}, models.Page{Number: 1, Size: 5})
	if len(logs) != 1 || !strings.Contains(strings.Join(apitest.AnyStrings(logs[0].Metadata["changed_fields"]), ","), "label") ||
		strings.Contains(apitest.MetadataText(logs[0].Metadata), "Corporate") {
		t.Fatalf("provider_updated = %+v", logs)
	}

	// Disabled on A: B refuses the next start.
	root.Get("/admin/sso_providers")
	if r := root.Post("/admin/sso_providers/"+p.ID.String()+"/toggle", url.Values{}); r.Status != 303 {
		t.Fatalf("toggle: %d", r.Status)
	}
	if r := b.Browser(t).Get("/auth/corp"); r.Status != 404 {
		t.Fatalf("B after disabling: %d", r.Status)
	}

	// Test connection saves nothing and reports each check.
	root.Get("/admin/sso_providers")
	if r := root.Post("/admin/sso_providers/"+p.ID.String()+"/test", url.Values{}); r.Status != 200 || !strings.Contains(string(r.Body), "pass") {
		t.Fatalf("test connection: %d %s", r.Status, r.Body)
	}

	// Delete: the confirmation names the users left without a way in.
	confirm := root.Get("/admin/sso_providers/" + p.ID.String() + "/delete")
	if !strings.Contains(string(confirm.Body), "pat@example.com") {
		t.Fatalf("confirmation: %s", confirm.Body)
	}
	if r := root.Post("/admin/sso_providers/"+p.ID.String()+"/delete", url.Values{}); r.Status != 303 {
		t.Fatalf("delete: %d", r.Status)
	}
	for _, ev := range []string{models.EventProviderCreated, models.EventProviderUpdated, models.EventProviderDeleted} {
		if apitest.AuditCount(t, a, ev, "") == 0 {
			t.Errorf("no %s record", ev)
		}
	}
}

func TestSyncRolesFromSSO(t *testing.T) {
	ctx := context.Background()
	s := apitest.NewSSOEnv(t, models.StrategyOIDC)
	apitest.SetPassword(t, s.Env, s.Alpha.User, "correct horse battery")
	m := apitest.Member(t, s.Env, s.Alpha.Family, "synced-"+s.Alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	if err := s.Store.CreateIdentity(ctx, &models.SSOIdentity{FamilyID: m.FamilyID, UserID: m.ID, ProviderID: s.Prov.ID, Subject: "sync-sub",
		Claims: map[string]any{"groups": []any{"Finance"}}}); err != nil {
		t.Fatal(err)
	}
	admin := s.Browser(t)
	admin.Login(s.Alpha.User.Email, "correct horse battery")
	// No mappings yet: no button.
	if page := admin.Get("/admin/users/" + m.ID.String()); strings.Contains(string(page.Body), "Sync Roles from SSO") {
		t.Fatal("button shown for a provider without mappings")
	}
	s.Prov.GroupMappings = []models.GroupMapping{{Group: "Finance", Role: models.RoleAdmin}}
	s.Update(t)
	page := admin.Get("/admin/users/" + m.ID.String())
	if !strings.Contains(string(page.Body), "Sync Roles from SSO") || !strings.Contains(string(page.Body), "managed by Corp SSO group mappings") {
		t.Fatalf("user page: %s", page.Body)
	}
	if r := admin.Post("/admin/users/"+m.ID.String()+"/sync_roles", url.Values{}); r.Status != 303 {
		t.Fatalf("sync: %d", r.Status)
	}
	admin.Get("/admin/users/" + m.ID.String())
	if r := admin.Post("/admin/users/"+m.ID.String()+"/sync_roles", url.Values{}); r.Status != 303 {
		t.Fatalf("second click: %d", r.Status)
	}
	insp := asynq.NewInspector(s.Redis)
	defer insp.Close()
	info, err := insp.GetTaskInfo(jobs.QueueDefault, "roles:sync:"+m.ID.String())
	if err != nil {
		t.Fatalf("task not queued: %v", err)
	}
	_ = insp.DeleteTask(jobs.QueueDefault, info.ID)
	h := &jobs.Handlers{Store: s.Store, Log: s.Logger()}
	for range 2 { // idempotent
		if err := h.RolesSync(ctx, asynq.NewTask(info.Type, info.Payload)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := s.Store.UserByID(ctx, m.ID)
	if got.Role != models.RoleAdmin {
		t.Fatalf("role after sync = %s", got.Role)
	}
	logs, _, _ := s.Store.AuditLogs(ctx, models.AuditFilter{EventType: models.EventRoleChanged}, models.Page{Number: 1, Size: 5})
	if len(logs) != 1 || logs[0].Metadata["source"] != models.RoleSourceSync || *logs[0].UserID != s.Alpha.User.ID {
		t.Fatalf("role_changed = %+v", logs)
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer(`"`, "&#34;", "'", "&#39;").Replace(s)
}
