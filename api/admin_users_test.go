package api_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/models"
)

// member adds a member with a password to a fixture family.
func member(t *testing.T, e *env, familyID any, email, role string) *models.User {
	t.Helper()
	u := &models.User{Email: email, Role: role}
	switch f := familyID.(type) {
	case *models.Family:
		u.FamilyID = f.ID
	}
	if err := e.store.CreateUser(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	setPassword(t, e, u, "correct horse battery")
	return u
}

// newSuperAdmin adds a super admin, named after the family, to f.
func newSuperAdmin(t *testing.T, e *env, f *models.Family) *models.User {
	t.Helper()
	return member(t, e, f, "root-"+f.ID.String()[:8]+"@example.com", models.RoleSuperAdmin)
}

func TestAdminUsers(t *testing.T) {
	e := newEnv(t)
	setPassword(t, e, e.alpha.User, "correct horse battery")
	bob := member(t, e, e.alpha.Family, "bob-"+e.alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	boss := member(t, e, e.beta.Family, "boss-"+e.beta.Family.ID.String()[:8]+"@example.com", models.RoleSuperAdmin)
	bobKey, _ := e.store.CreateAPIKey(t.Context(), e.alpha.Family.ID, &models.APIKey{UserID: bob.ID, Name: "k", Scope: models.ScopeRead})

	// A member is refused the admin area.
	bobBrowser := e.browser(t)
	bobBrowser.login(bob.Email, "correct horse battery")
	if r := bobBrowser.get("/admin/users"); r.status != 403 || !strings.Contains(string(r.body), "You are not authorized to access this area.") {
		t.Fatalf("member on /admin/users: %d", r.status)
	}

	admin := e.browser(t)
	admin.login(e.alpha.User.Email, "correct horse battery")
	list := admin.get("/admin/users")
	if list.status != 200 || !strings.Contains(string(list.body), bob.Email) || strings.Contains(string(list.body), boss.Email) {
		t.Fatalf("family admin's list: %d", list.status)
	}
	if r := admin.get("/admin/users?q=" + url.QueryEscape(strings.ToUpper(bob.Email[:5])) + "&role=member"); !strings.Contains(string(r.body), bob.Email) || strings.Contains(string(r.body), e.alpha.User.Email) {
		t.Error("search and role filter")
	}
	// Another family's user does not exist for a family admin.
	if r := admin.get("/admin/users/" + boss.ID.String()); r.status != 404 {
		t.Errorf("other family's user: %d", r.status)
	}
	if r := admin.post("/admin/users/"+boss.ID.String()+"/suspend", nil); r.status != 404 {
		t.Errorf("suspend another family's user: %d", r.status)
	}
	// Nobody acts on themselves.
	admin.get("/admin/users/" + e.alpha.User.ID.String())
	if r := admin.post("/admin/users/"+e.alpha.User.ID.String()+"/suspend", nil); r.status != 422 ||
		!strings.Contains(string(r.body), "You cannot suspend or delete your own account.") {
		t.Errorf("self-suspend: %d", r.status)
	}
	if r := admin.post("/admin/users/"+e.alpha.User.ID.String()+"/role", url.Values{"role": {"member"}}); r.status != 403 {
		t.Errorf("own role: %d", r.status)
	}
	// A family admin cannot grant super admin.
	if r := admin.post("/admin/users/"+bob.ID.String()+"/role", url.Values{"role": {"super_admin"}}); r.status != 403 {
		t.Errorf("grant super admin: %d", r.status)
	}

	// Suspend: Bob's session and key stop at once.
	if r := admin.post("/admin/users/"+bob.ID.String()+"/suspend", nil); r.status != 303 {
		t.Fatalf("suspend: %d %s", r.status, r.body)
	}
	if r := bobBrowser.get("/"); r.status != 302 {
		t.Errorf("suspended member's session: %d", r.status)
	}
	wantError(t, e.do("GET", "/api/v1/accounts", bobKey, nil), 401, "unauthorized")
	if r := admin.post("/admin/users/"+bob.ID.String()+"/reactivate", nil); r.status != 303 {
		t.Fatalf("reactivate: %d", r.status)
	}
	if r := e.do("GET", "/api/v1/accounts", bobKey, nil); r.status != 200 {
		t.Errorf("reactivated key: %d", r.status)
	}

	// Promote Bob, then the admin may step down: the family keeps an admin.
	if r := admin.post("/admin/users/"+bob.ID.String()+"/role", url.Values{"role": {"admin"}}); r.status != 303 {
		t.Fatalf("promote: %d %s", r.status, r.body)
	}
	bobBrowser.login(bob.Email, "correct horse battery")
	bobBrowser.get("/admin/users/" + e.alpha.User.ID.String())
	if r := bobBrowser.post("/admin/users/"+e.alpha.User.ID.String()+"/role", url.Values{"role": {"member"}}); r.status != 303 {
		t.Fatalf("demote the other admin: %d %s", r.status, r.body)
	}
	// Now Bob is the family's only admin: the first admin (a member now)
	// cannot be made to leave it without one... but Bob cannot demote himself.
	if r := bobBrowser.post("/admin/users/"+bob.ID.String()+"/role", url.Values{"role": {"member"}}); r.status != 403 {
		t.Errorf("self demotion: %d", r.status)
	}

	// Delete needs the typed email.
	if r := bobBrowser.post("/admin/users/"+e.alpha.User.ID.String()+"/delete", url.Values{"confirm_email": {"nope@example.com"}}); r.status != 422 ||
		!strings.Contains(string(r.body), "The email did not match; nothing was deleted.") {
		t.Fatalf("mistyped delete: %d", r.status)
	}
	if r := bobBrowser.post("/admin/users/"+e.alpha.User.ID.String()+"/delete", url.Values{"confirm_email": {"  " + strings.ToUpper(e.alpha.User.Email)}}); r.status != 303 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if _, err := e.store.UserByID(t.Context(), e.alpha.User.ID); err == nil {
		t.Error("the user is still there")
	}
	wantError(t, e.do("GET", "/api/v1/accounts", e.alpha.Key, nil), 401, "unauthorized")
	for ev, want := range map[string]int{models.EventUserSuspended: 1, models.EventUserReactivated: 1, models.EventRoleChanged: 2, models.EventUserDeleted: 1} {
		if n := auditCount(t, e, ev, ""); n != want {
			t.Errorf("%s: %d records, want %d", ev, n, want)
		}
	}
}

func TestAdminGuards(t *testing.T) {
	e := newEnv(t)
	// beta's super admin is the only one of the instance in this database.
	root := newSuperAdmin(t, e, e.beta.Family)
	other := member(t, e, e.beta.Family, "other-"+e.beta.Family.ID.String()[:8]+"@example.com", models.RoleSuperAdmin)
	b := e.browser(t)
	b.login(other.Email, "correct horse battery")
	// The other super admin may see every family.
	if r := b.get("/admin/users"); !strings.Contains(string(r.body), e.alpha.User.Email) {
		t.Error("super admin does not see every family")
	}
	b.get("/admin/users/" + root.ID.String())
	if r := b.post("/admin/users/"+root.ID.String()+"/suspend", nil); r.status != 303 {
		t.Fatalf("suspend a super admin while another remains: %d %s", r.status, r.body)
	}
	// Now `other` is the last active super admin: a family admin cannot touch
	// it, and nobody can remove it.
	admin := signedInBrowser(t, e)
	if r := admin.post("/admin/users/"+other.ID.String()+"/suspend", nil); r.status != 404 {
		t.Errorf("family admin on another family's super admin: %d", r.status)
	}
	if err := e.store.SuspendUser(t.Context(), models.AdminChange{ActorID: root.ID, ActorRole: models.RoleSuperAdmin, TargetID: other.ID}); err == nil ||
		!strings.Contains(err.Error(), models.MsgLastSuperAdmin) {
		t.Errorf("suspending the last super admin: %v", err)
	}
	// The only admin of a family with members cannot be demoted.
	kid := member(t, e, e.alpha.Family, "kid-"+e.alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	_ = kid
	b.get("/admin/users/" + e.alpha.User.ID.String())
	if r := b.post("/admin/users/"+e.alpha.User.ID.String()+"/role", url.Values{"role": {"member"}}); r.status != 422 ||
		!strings.Contains(string(r.body), models.MsgLastFamilyAdmin) {
		t.Errorf("last family admin: %d", r.status)
	}
}

// TestAdminRateLimit: clicking through the admin screens is never
// limited; changes and exports share RATE_LIMIT_ADMIN_PER_MINUTE per IP.
func TestAdminRateLimit(t *testing.T) {
	// A stopped clock keeps every request in one minute's window.
	now := time.Now()
	e := newEnv(t, func(o *api.Options) {
		o.Web.AdminRateLimit = 10
		o.Clock = func() time.Time { return now }
	})
	root := newSuperAdmin(t, e, e.alpha.Family)
	kid := member(t, e, e.alpha.Family, "kid-"+e.alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	signIn := func() *browser { // each browser has an IP, and a budget, of its own
		b := e.browser(t)
		if r := b.login(root.Email, "correct horse battery"); r.status != 303 {
			t.Fatalf("login: %d", r.status)
		}
		return b
	}
	kidPage, setRole := "/admin/users/"+kid.ID.String(), "/admin/users/"+kid.ID.String()+"/role"
	tooMany := func(what string, r response) {
		t.Helper()
		if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "Too many requests. Try again in") {
			t.Fatalf("%s: %d, Retry-After %q", what, r.status, r.header.Get("Retry-After"))
		}
	}

	b := signIn()
	pages := []string{"/admin/users", kidPage, "/admin/sso_providers", "/admin/sso_providers/new", "/admin/sso_audit_logs"}
	for i := range 30 {
		if r := b.get(pages[i%len(pages)]); r.status != 200 {
			t.Fatalf("page view %d, %s: %d", i+1, pages[i%len(pages)], r.status)
		}
	}

	b = signIn()
	b.get(kidPage)
	for i := range 10 {
		if r := b.post(setRole, url.Values{"role": {models.RoleMember}}); r.status != 303 {
			t.Fatalf("change %d: %d", i+1, r.status)
		}
	}
	tooMany("11th change", b.post(setRole, url.Values{"role": {models.RoleMember}}))
	if r := b.get(kidPage); r.status != 200 {
		t.Fatalf("a page view over the limit: %d", r.status)
	}

	// An export costs as much as a change.
	b = signIn()
	for i := range 10 {
		if r := b.get("/admin/sso_audit_logs/export.csv"); r.status != 200 {
			t.Fatalf("export %d: %d", i+1, r.status)
		}
	}
	tooMany("11th export", b.get("/admin/sso_audit_logs/export.csv"))
	b.get(kidPage)
	tooMany("a change after 10 exports", b.post(setRole, url.Values{"role": {models.RoleMember}}))
}
