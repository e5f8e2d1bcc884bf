package signin_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/api/rest"
	"coffer/models"
)

// wantBearer fails unless the token gets status on every instance, each
// asked twice (the second answer is the cached one). An instance other
// than the first learns of a revocation by announcement: it is given up
// to 2 s to refuse the token.
func wantBearer(t *testing.T, token string, status int, instances ...*apitest.Env) {
	t.Helper()
	for range 2 {
		for i, in := range instances {
			r := in.DoBearer("GET", "/api/v1/accounts", token)
			for start := time.Now(); i > 0 && status == 401 && r.Status != 401 && time.Since(start) < 2*time.Second; {
				time.Sleep(time.Millisecond)
				r = in.DoBearer("GET", "/api/v1/accounts", token)
			}
			if r.Status != status {
				t.Fatalf("instance %d: %d, want %d: %s", i, r.Status, status, r.Body)
			}
			if status == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("instance %d: a refused token without WWW-Authenticate", i)
			}
		}
	}
}

// TestBearerRevokedEverywhere: an access token cached by two web
// processes stops on both at the next request after any path that ends
// it: RFC 7009 revocation, the authorized-apps screen (the user's own and
// an admin's on another member), and the user's deletion.
func TestBearerRevokedEverywhere(t *testing.T) {
	e := apitest.NewEnv(t)
	other := e.Instance(t)
	ctx := t.Context()
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")

	// RFC 7009, the access token given back.
	access, _ := apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
	wantBearer(t, access, 200, e, other)
	b := e.Browser(t)
	if r := b.Send("POST", "/oauth/revoke", url.Values{"token": {access}, "client_id": {"coffer-mobile"}}, nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	wantBearer(t, access, 401, e, other)

	// A refresh replaces the client's own token: it empties no cache.
	access, refresh := apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
	before, _ := e.RDB.Get(ctx, rest.AuthVersionKey).Int64()
	if r := b.Send("POST", "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"coffer-mobile"}}, nil); r.Status != 200 {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	if after, _ := e.RDB.Get(ctx, rest.AuthVersionKey).Int64(); after != before {
		t.Fatalf("a refresh moved the auth version from %d to %d", before, after)
	}

	// RFC 7009, the refresh token given back: its grant's access token
	// ends too.
	access, refresh = apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
	wantBearer(t, access, 200, e, other)
	if r := b.Send("POST", "/oauth/revoke", url.Values{"token": {refresh}, "token_type_hint": {"refresh_token"}, "client_id": {"coffer-mobile"}}, nil); r.Status != 200 {
		t.Fatalf("revoke refresh: %d %s", r.Status, r.Body)
	}
	wantBearer(t, access, 401, e, other)

	// The user revokes the app on the authorized-apps screen.
	access, _ = apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
	wantBearer(t, access, 200, e, other)
	admin := apitest.SignedInBrowser(t, e)
	admin.Get("/settings/authorized_apps")
	if r := admin.Post("/settings/authorized_apps/revoke", url.Values{"client_id": {"coffer-mobile"}}); r.Status != 303 {
		t.Fatalf("revoke own app: %d %s", r.Status, r.Body)
	}
	wantBearer(t, access, 401, e, other)

	// An admin revokes another member's app; the member may not revoke
	// the admin's.
	member := &models.User{FamilyID: e.Alpha.Family.ID, Email: "member-" + e.Alpha.User.Email, Role: models.RoleMember}
	if err := e.Store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	apitest.SetPassword(t, e, member, "member horse battery")
	memberAccess, _ := apitest.MobileLogin(t, e, member, "member horse battery")
	adminAccess, _ := apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
	wantBearer(t, memberAccess, 200, e, other)
	wantBearer(t, adminAccess, 200, e, other)
	mb := e.Browser(t)
	if r := mb.Login(member.Email, "member horse battery"); r.Status != 303 {
		t.Fatalf("member login: %d", r.Status)
	}
	mb.Get("/settings/authorized_apps")
	if r := mb.Post("/settings/authorized_apps/revoke", url.Values{"client_id": {"coffer-mobile"}, "user_id": {e.Alpha.User.ID.String()}}); r.Status != 404 {
		t.Fatalf("member revoking the admin's app: %d", r.Status)
	}
	wantBearer(t, adminAccess, 200, e, other)
	admin.Get("/settings/authorized_apps")
	if r := admin.Post("/settings/authorized_apps/revoke", url.Values{"client_id": {"coffer-mobile"}, "user_id": {member.ID.String()}}); r.Status != 303 {
		t.Fatalf("admin revoking a member's app: %d %s", r.Status, r.Body)
	}
	wantBearer(t, memberAccess, 401, e, other)
	wantBearer(t, adminAccess, 200, e, other)
	// Another family's admin cannot reach this family's members.
	if err := e.Store.RevokeAuthorizedApp(ctx, e.Beta.Family.ID, e.Alpha.User.ID, "coffer-mobile"); err != models.ErrNotFound {
		t.Fatalf("revoke across families: %v", err)
	}

	// The user deleted: their tokens stop everywhere.
	memberAccess, _ = apitest.MobileLogin(t, e, member, "member horse battery")
	wantBearer(t, memberAccess, 200, e, other)
	if err := e.Store.DeleteUser(ctx, models.AdminChange{ActorID: e.Alpha.User.ID, ActorRole: models.RoleAdmin,
		ActorFamilyID: e.Alpha.Family.ID, TargetID: member.ID}); err != nil {
		t.Fatal(err)
	}
	wantBearer(t, memberAccess, 401, e, other)

}

// TestProtectedResourceMetadata: RFC 9728's document for /mcp, with and
// without the resource's path, names this server as its authorization
// server.
func TestProtectedResourceMetadata(t *testing.T) {
	e := apitest.NewEnv(t)
	b := e.Browser(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r := b.Get(path)
		m := r.WantJSON(t, 200)
		if m["resource"] != "http://example.com/mcp" || fmt.Sprint(m["authorization_servers"]) != "[http://example.com]" ||
			fmt.Sprint(m["scopes_supported"]) != "[read read_write]" || fmt.Sprint(m["bearer_methods_supported"]) != "[header]" {
			t.Fatalf("%s: %v", path, m)
		}
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: content type %s", path, r.Header.Get("Content-Type"))
		}
	}
	// The authorization server it names answers at its RFC 8414 address.
	if m := b.Get("/.well-known/oauth-authorization-server").WantJSON(t, 200); m["issuer"] != "http://example.com" {
		t.Fatalf("authorization server metadata: %v", m)
	}
}

// TestConcurrentRefresh: two refreshes of one refresh token at once, over
// and over; exactly one of each pair succeeds. The writes of a token
// request are one transaction (fosite's storage.Transactional), and the
// rotation claims the presented token only while it is still active.
func TestConcurrentRefresh(t *testing.T) {
	e := apitest.NewEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	for attempt := range 15 {
		_, refresh := apitest.MobileLogin(t, e, e.Alpha.User, "correct horse battery")
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"coffer-mobile"}}
		// Two clients, each from an address of its own (the token
		// endpoint counts per IP).
		bs := []*apitest.Browser{e.Browser(t), e.Browser(t)}
		statuses := make(chan int, 2)
		start := make(chan struct{})
		for _, b := range bs {
			go func() {
				<-start
				statuses <- b.SendAsync("POST", "/oauth/token", form)
			}()
		}
		close(start)
		ok := 0
		for range 2 {
			switch st := <-statuses; st {
			case 200:
				ok++
			case 400:
			default:
				t.Fatalf("attempt %d: status %d", attempt, st)
			}
		}
		if ok != 1 {
			t.Fatalf("attempt %d: %d refreshes of one token succeeded", attempt, ok)
		}
	}
}
