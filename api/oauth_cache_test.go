package api_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"coffer/api/rest"
	"coffer/models"
)

// mobileLogin signs u in through the mobile app's endpoint and returns
// its access and refresh tokens.
func mobileLogin(t *testing.T, e *env, u *models.User, password string) (access, refresh string) {
	t.Helper()
	m := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": u.Email, "password": password, "device": phone}).wantJSON(t, 200)
	return m["access_token"].(string), m["refresh_token"].(string)
}

// wantBearer fails unless the token gets status on every instance, each
// asked twice (the second answer is the cached one). An instance other
// than the first learns of a revocation by announcement: it is given up
// to 2 s to refuse the token.
func wantBearer(t *testing.T, token string, status int, instances ...*env) {
	t.Helper()
	for range 2 {
		for i, in := range instances {
			r := in.doBearer("GET", "/api/v1/accounts", token)
			for start := time.Now(); i > 0 && status == 401 && r.status != 401 && time.Since(start) < 2*time.Second; {
				time.Sleep(time.Millisecond)
				r = in.doBearer("GET", "/api/v1/accounts", token)
			}
			if r.status != status {
				t.Fatalf("instance %d: %d, want %d: %s", i, r.status, status, r.body)
			}
			if status == 401 && r.header.Get("WWW-Authenticate") == "" {
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
	e := newEnv(t)
	other := e.instance(t)
	ctx := t.Context()
	setPassword(t, e, e.alpha.User, "correct horse battery")

	// RFC 7009, the access token given back.
	access, _ := mobileLogin(t, e, e.alpha.User, "correct horse battery")
	wantBearer(t, access, 200, e, other)
	b := e.browser(t)
	if r := b.send("POST", "/oauth/revoke", url.Values{"token": {access}, "client_id": {"coffer-mobile"}}, nil); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	wantBearer(t, access, 401, e, other)

	// A refresh replaces the client's own token: it empties no cache.
	access, refresh := mobileLogin(t, e, e.alpha.User, "correct horse battery")
	before, _ := e.rdb.Get(ctx, rest.AuthVersionKey).Int64()
	if r := b.send("POST", "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"coffer-mobile"}}, nil); r.status != 200 {
		t.Fatalf("refresh: %d %s", r.status, r.body)
	}
	if after, _ := e.rdb.Get(ctx, rest.AuthVersionKey).Int64(); after != before {
		t.Fatalf("a refresh moved the auth version from %d to %d", before, after)
	}

	// RFC 7009, the refresh token given back: its grant's access token
	// ends too.
	access, refresh = mobileLogin(t, e, e.alpha.User, "correct horse battery")
	wantBearer(t, access, 200, e, other)
	if r := b.send("POST", "/oauth/revoke", url.Values{"token": {refresh}, "token_type_hint": {"refresh_token"}, "client_id": {"coffer-mobile"}}, nil); r.status != 200 {
		t.Fatalf("revoke refresh: %d %s", r.status, r.body)
	}
	wantBearer(t, access, 401, e, other)

	// The user revokes the app on the authorized-apps screen.
	access, _ = mobileLogin(t, e, e.alpha.User, "correct horse battery")
	wantBearer(t, access, 200, e, other)
	admin := signedInBrowser(t, e)
	admin.get("/settings/authorized_apps")
	if r := admin.post("/settings/authorized_apps/revoke", url.Values{"client_id": {"coffer-mobile"}}); r.status != 303 {
		t.Fatalf("revoke own app: %d %s", r.status, r.body)
	}
	wantBearer(t, access, 401, e, other)

	// An admin revokes another member's app; the member may not revoke
	// the admin's.
	member := &models.User{FamilyID: e.alpha.Family.ID, Email: "member-" + e.alpha.User.Email, Role: models.RoleMember}
	if err := e.store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	setPassword(t, e, member, "member horse battery")
	memberAccess, _ := mobileLogin(t, e, member, "member horse battery")
	adminAccess, _ := mobileLogin(t, e, e.alpha.User, "correct horse battery")
	wantBearer(t, memberAccess, 200, e, other)
	wantBearer(t, adminAccess, 200, e, other)
	mb := e.browser(t)
	if r := mb.login(member.Email, "member horse battery"); r.status != 303 {
		t.Fatalf("member login: %d", r.status)
	}
	mb.get("/settings/authorized_apps")
	if r := mb.post("/settings/authorized_apps/revoke", url.Values{"client_id": {"coffer-mobile"}, "user_id": {e.alpha.User.ID.String()}}); r.status != 404 {
		t.Fatalf("member revoking the admin's app: %d", r.status)
	}
	wantBearer(t, adminAccess, 200, e, other)
	admin.get("/settings/authorized_apps")
	if r := admin.post("/settings/authorized_apps/revoke", url.Values{"client_id": {"coffer-mobile"}, "user_id": {member.ID.String()}}); r.status != 303 {
		t.Fatalf("admin revoking a member's app: %d %s", r.status, r.body)
	}
	wantBearer(t, memberAccess, 401, e, other)
	wantBearer(t, adminAccess, 200, e, other)
	// Another family's admin cannot reach this family's members.
	if err := e.store.RevokeAuthorizedApp(ctx, e.beta.Family.ID, e.alpha.User.ID, "coffer-mobile"); err != models.ErrNotFound {
		t.Fatalf("revoke across families: %v", err)
	}

	// The user deleted: their tokens stop everywhere.
	memberAccess, _ = mobileLogin(t, e, member, "member horse battery")
	wantBearer(t, memberAccess, 200, e, other)
	if err := e.store.DeleteUser(ctx, models.AdminChange{ActorID: e.alpha.User.ID, ActorRole: models.RoleAdmin,
		ActorFamilyID: e.alpha.Family.ID, TargetID: member.ID}); err != nil {
		t.Fatal(err)
	}
	wantBearer(t, memberAccess, 401, e, other)

}

// TestProtectedResourceMetadata: RFC 9728's document for /mcp, with and
// without the resource's path, names this server as its authorization
// server.
func TestProtectedResourceMetadata(t *testing.T) {
	e := newEnv(t)
	b := e.browser(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r := b.get(path)
		m := r.wantJSON(t, 200)
		if m["resource"] != "http://example.com/mcp" || fmt.Sprint(m["authorization_servers"]) != "[http://example.com]" ||
			fmt.Sprint(m["scopes_supported"]) != "[read read_write]" || fmt.Sprint(m["bearer_methods_supported"]) != "[header]" {
			t.Fatalf("%s: %v", path, m)
		}
		if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: content type %s", path, r.header.Get("Content-Type"))
		}
	}
	// The authorization server it names answers at its RFC 8414 address.
	if m := b.get("/.well-known/oauth-authorization-server").wantJSON(t, 200); m["issuer"] != "http://example.com" {
		t.Fatalf("authorization server metadata: %v", m)
	}
}

// TestConcurrentRefresh: two refreshes of one refresh token at once, over
// and over; exactly one of each pair succeeds. The writes of a token
// request are one transaction (fosite's storage.Transactional), and the
// rotation claims the presented token only while it is still active.
func TestConcurrentRefresh(t *testing.T) {
	e := newEnv(t)
	setPassword(t, e, e.alpha.User, "correct horse battery")
	for attempt := range 15 {
		_, refresh := mobileLogin(t, e, e.alpha.User, "correct horse battery")
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"coffer-mobile"}}
		// Two clients, each from an address of its own (the token
		// endpoint counts per IP).
		bs := []*browser{e.browser(t), e.browser(t)}
		statuses := make(chan int, 2)
		start := make(chan struct{})
		for _, b := range bs {
			go func() {
				<-start
				statuses <- b.sendAsync("POST", "/oauth/token", form)
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

// sendAsync posts a form from another goroutine than the test's: it
// reports the status rather than failing the test.
func (b *browser) sendAsync(method, path string, form url.Values) int {
	req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", b.ip)
	resp, err := b.e.app.Test(req, -1)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
