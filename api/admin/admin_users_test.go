package admin_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
)

func TestAdminUsers(t *testing.T) {
	e := apitest.NewEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	bob := apitest.Member(t, e, e.Alpha.Family, "bob-"+e.Alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	boss := apitest.Member(t, e, e.Beta.Family, "boss-"+e.Beta.Family.ID.String()[:8]+"@example.com", models.RoleSuperAdmin)
	bobKey, _ := e.Store.CreateAPIKey(t.Context(), e.Alpha.Family.ID, &models.APIKey{UserID: bob.ID, Name: "k", Scope: models.ScopeRead})

	// A member is refused the admin area.
	bobBrowser := e.Browser(t)
	bobBrowser.Login(bob.Email, "correct horse battery")
	if r := bobBrowser.Get("/admin/users"); r.Status != 403 || !strings.Contains(string(r.Body), "You are not authorized to access this area.") {
		t.Fatalf("member on /admin/users: %d", r.Status)
	}

	admin := e.Browser(t)
	admin.Login(e.Alpha.User.Email, "correct horse battery")
	list := admin.Get("/admin/users")
	if list.Status != 200 || !strings.Contains(string(list.Body), bob.Email) || strings.Contains(string(list.Body), boss.Email) {
		t.Fatalf("family admin's list: %d", list.Status)
	}
	if r := admin.Get("/admin/users?q=" + url.QueryEscape(strings.ToUpper(bob.Email[:5])) + "&role=member"); !strings.Contains(string(r.Body), bob.Email) || strings.Contains(string(r.Body), e.Alpha.User.Email) {
		t.Error("search and role filter")
	}
	// Another family's user does not exist for a family admin.
	if r := admin.Get("/admin/users/" + boss.ID.String()); r.Status != 404 {
		t.Errorf("other family's user: %d", r.Status)
	}
	if r := admin.Post("/admin/users/"+boss.ID.String()+"/suspend", nil); r.Status != 404 {
		t.Errorf("suspend another family's user: %d", r.Status)
	}
	// Nobody acts on themselves.
	admin.Get("/admin/users/" + e.Alpha.User.ID.String())
	if r := admin.Post("/admin/users/"+e.Alpha.User.ID.String()+"/suspend", nil); r.Status != 422 ||
		!strings.Contains(string(r.Body), "You cannot suspend or delete your own account.") {
		t.Errorf("self-suspend: %d", r.Status)
	}
	if r := admin.Post("/admin/users/"+e.Alpha.User.ID.String()+"/role", url.Values{"role": {"member"}}); r.Status != 403 {
		t.Errorf("own role: %d", r.Status)
	}
	// A family admin cannot grant super admin.
	if r := admin.Post("/admin/users/"+bob.ID.String()+"/role", url.Values{"role": {"super_admin"}}); r.Status != 403 {
		t.Errorf("grant super admin: %d", r.Status)
	}

	// Suspend: Bob's session and key stop at once.
	if r := admin.Post("/admin/users/"+bob.ID.String()+"/suspend", nil); r.Status != 303 {
		t.Fatalf("suspend: %d %s", r.Status, r.Body)
	}
	if r := bobBrowser.Get("/"); r.Status != 302 {
		t.Errorf("suspended member's session: %d", r.Status)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/accounts", bobKey, nil), 401, "unauthorized")
	if r := admin.Post("/admin/users/"+bob.ID.String()+"/reactivate", nil); r.Status != 303 {
		t.Fatalf("reactivate: %d", r.Status)
	}
	if r := e.Do("GET", "/api/v1/accounts", bobKey, nil); r.Status != 200 {
		t.Errorf("reactivated key: %d", r.Status)
	}

	// Promote Bob, then the admin may step down: the family keeps an admin.
	if r := admin.Post("/admin/users/"+bob.ID.String()+"/role", url.Values{"role": {"admin"}}); r.Status != 303 {
		t.Fatalf("promote: %d %s", r.Status, r.Body)
	}
	bobBrowser.Login(bob.Email, "correct horse battery")
	bobBrowser.Get("/admin/users/" + e.Alpha.User.ID.String())
	if r := bobBrowser.Post("/admin/users/"+e.Alpha.User.ID.String()+"/role", url.Values{"role": {"member"}}); r.Status != 303 {
		t.Fatalf("demote the other admin: %d %s", r.Status, r.Body)
	}
	// Now Bob is the family's only admin: the first admin (a member now)
	// cannot be made to leave it without one... but Bob cannot demote himself.
	if r := bobBrowser.Post("/admin/users/"+bob.ID.String()+"/role", url.Values{"role": {"member"}}); r.Status != 403 {
		t.Errorf("self demotion: %d", r.Status)
	}

	// Delete needs the typed email.
	if r := bobBrowser.Post("/admin/users/"+e.Alpha.User.ID.String()+"/delete", url.Values{"confirm_email": {"nope@example.com"}}); r.Status != 422 ||
		!strings.Contains(string(r.Body), "The email did not match; nothing was deleted.") {
		t.Fatalf("mistyped delete: %d", r.Status)
	}
	if r := bobBrowser.Post("/admin/users/"+e.Alpha.User.ID.String()+"/delete", url.Values{"confirm_email": {"  " + strings.ToUpper(e.Alpha.User.Email)}}); r.Status != 303 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if _, err := e.Store.UserByID(t.Context(), e.Alpha.User.ID); err == nil {
		t.Error("the user is still there")
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/accounts", e.Alpha.Key, nil), 401, "unauthorized")
	for ev, want := range map[string]int{models.EventUserSuspended: 1, models.EventUserReactivated: 1, models.EventRoleChanged: 2, models.EventUserDeleted: 1} {
		if n := apitest.AuditCount(t, e, ev, ""); n != want {
			t.Errorf("%s: %d records, want %d", ev, n, want)
		}
	}
}

func TestAdminGuards(t *testing.T) {
	e := apitest.NewEnv(t)
	// beta's super admin is the only one of the instance in this database.
	root := apitest.NewSuperAdmin(t, e, e.Beta.Family)
	other := apitest.Member(t, e, e.Beta.Family, "other-"+e.Beta.Family.ID.String()[:8]+"@example.com", models.RoleSuperAdmin)
	b := e.Browser(t)
	b.Login(other.Email, "correct horse battery")
	// The other super admin may see every family.
	if r := b.Get("/admin/users"); !strings.Contains(string(r.Body), e.Alpha.User.Email) {
		t.Error("super admin does not see every family")
	}
	b.Get("/admin/users/" + root.ID.String())
	if r := b.Post("/admin/users/"+root.ID.String()+"/suspend", nil); r.Status != 303 {
		t.Fatalf("suspend a super admin while another remains: %d %s", r.Status, r.Body)
	}
	// Now `other` is the last active super admin: a family admin cannot touch
	// it, and nobody can remove it.
	admin := apitest.SignedInBrowser(t, e)
	if r := admin.Post("/admin/users/"+other.ID.String()+"/suspend", nil); r.Status != 404 {
		t.Errorf("family admin on another family's super admin: %d", r.Status)
	}
	if err := e.Store.SuspendUser(t.Context(), models.AdminChange{ActorID: root.ID, ActorRole: models.RoleSuperAdmin, TargetID: other.ID}); err == nil ||
		!strings.Contains(err.Error(), models.MsgLastSuperAdmin) {
		t.Errorf("suspending the last super admin: %v", err)
	}
	// The only admin of a family with members cannot be demoted.
	kid := apitest.Member(t, e, e.Alpha.Family, "kid-"+e.Alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	_ = kid
	b.Get("/admin/users/" + e.Alpha.User.ID.String())
	if r := b.Post("/admin/users/"+e.Alpha.User.ID.String()+"/role", url.Values{"role": {"member"}}); r.Status != 422 ||
		!strings.Contains(string(r.Body), models.MsgLastFamilyAdmin) {
		t.Errorf("last family admin: %d", r.Status)
	}
}

// TestAdminRateLimit: clicking through the admin screens is never
// limited; changes and exports share RATE_LIMIT_ADMIN_PER_MINUTE per IP.
func TestAdminRateLimit(t *testing.T) {
	// A stopped clock keeps every request in one minute's window.
	now := time.Now()
	e := apitest.NewEnv(t, func(o *api.Options) {
		o.Web.AdminRateLimit = 10
		o.Clock = func() time.Time { return now }
	})
	root := apitest.NewSuperAdmin(t, e, e.Alpha.Family)
	kid := apitest.Member(t, e, e.Alpha.Family, "kid-"+e.Alpha.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	signIn := func() *apitest.Browser { // each browser has an IP, and a budget, of its own
		b := e.Browser(t)
		if r := b.Login(root.Email, "correct horse battery"); r.Status != 303 {
			t.Fatalf("login: %d", r.Status)
		}
		return b
	}
	kidPage, setRole := "/admin/users/"+kid.ID.String(), "/admin/users/"+kid.ID.String()+"/role"
	tooMany := func(what string, r apitest.Response) {
		t.Helper()
		if r.Status != 429 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), "Too many requests. Try again in") {
			t.Fatalf("%s: %d, Retry-After %q", what, r.Status, r.Header.Get("Retry-After"))
		}
	}

	b := signIn()
	pages := []string{"/admin/users", kidPage, "/admin/sso_providers", "/admin/sso_providers/new", "/admin/sso_audit_logs"}
	for i := range 30 {
		if r := b.Get(pages[i%len(pages)]); r.Status != 200 {
			t.Fatalf("page view %d, %s: %d", i+1, pages[i%len(pages)], r.Status)
		}
	}

	b = signIn()
	b.Get(kidPage)
	for i := range 10 {
		if r := b.Post(setRole, url.Values{"role": {models.RoleMember}}); r.Status != 303 {
			t.Fatalf("change %d: %d", i+1, r.Status)
		}
	}
	tooMany("11th change", b.Post(setRole, url.Values{"role": {models.RoleMember}}))
	if r := b.Get(kidPage); r.Status != 200 {
		t.Fatalf("a page view over the limit: %d", r.Status)
	}

	// An export costs as much as a change.
	b = signIn()
	for i := range 10 {
		if r := b.Get("/admin/sso_audit_logs/export.csv"); r.Status != 200 {
			t.Fatalf("export %d: %d", i+1, r.Status)
		}
	}
	tooMany("11th export", b.Get("/admin/sso_audit_logs/export.csv"))
	b.Get(kidPage)
	tooMany("a change after 10 exports", b.Post(setRole, url.Values{"role": {models.RoleMember}}))
}
