package api_test

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynqmon"

	"coffer/api"
	"coffer/models"
	"coffer/models/modelstest"
)

func TestAuditView(t *testing.T) {
	e := newEnv(t)
	root := newSuperAdmin(t, e, e.beta.Family)
	now := time.Now().UTC()
	for i, ev := range []struct {
		event string
		age   time.Duration
		ua    string
	}{
		{models.EventLoginFailed, time.Hour, "=cmd|' /C calc'!A0"},
		{models.EventLoginFailed, 3 * 24 * time.Hour, "curl"},
		{models.EventLoginFailed, 20 * 24 * time.Hour, "old"},
		{models.EventUserDeleted, 2 * time.Hour, "x"},
	} {
		at := now.Add(-ev.age)
		e.store.Now = func() time.Time { return at }
		ua := ev.ua
		if err := e.store.CreateAuditLog(t.Context(), &models.AuditLog{EventType: ev.event, UserID: &e.alpha.User.ID, UserAgent: &ua,
			Metadata: map[string]any{"reason": "bad_credentials", "i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	e.store.Now = func() time.Time { return time.Now().UTC() }

	admin := signedInBrowser(t, e)
	if r := admin.get("/admin/sso_audit_logs"); r.status != 403 {
		t.Errorf("family admin on the audit log: %d", r.status)
	}

	b := e.browser(t)
	b.login(root.Email, "correct horse battery")
	r := b.get("/admin/sso_audit_logs?event_type=login_failed&range=7d")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if n := strings.Count(string(r.body), `<td class="event">login_failed</td>`); n != 2 {
		t.Errorf("login_failed in 7 days: %d rows", n)
	}
	if r := b.get("/admin/sso_audit_logs?event_type=login_failed&range=all"); strings.Count(string(r.body), `<td class="event">login_failed</td>`) != 3 {
		t.Error("range=all")
	}
	if r := b.get("/admin/sso_audit_logs?event_type=bogus&range=1y"); !strings.Contains(string(r.body), "Unknown filter value ignored.") {
		t.Error("unknown filters not reported")
	}

	csvResp := b.get("/admin/sso_audit_logs/export.csv?event_type=login_failed&range=7d")
	if csvResp.status != 200 || !strings.HasPrefix(csvResp.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("export: %d %v", csvResp.status, csvResp.header)
	}
	rows, err := csv.NewReader(strings.NewReader(string(csvResp.body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || strings.Join(rows[0], ",") != "id,created_at,event_type,user_id,user_email,provider,ip,user_agent,metadata" {
		t.Fatalf("csv: %v", rows)
	}
	if rows[1][7] != "'=cmd|' /C calc'!A0" {
		t.Errorf("formula not defused: %q", rows[1][7])
	}
	if rows[1][4] != e.alpha.User.Email || rows[1][2] != "login_failed" {
		t.Errorf("row: %v", rows[1])
	}
}

func TestJobDashboard(t *testing.T) {
	e := newEnv(t, func(o *api.Options) {
		o.Dashboard = asynqmon.New(asynqmon.Options{RootPath: "/admin/jobs", RedisConnOpt: modelstest.Redis(t, redisDB)})
	})
	root := newSuperAdmin(t, e, e.beta.Family)
	anon := e.browser(t)
	if r := anon.get("/admin/jobs"); r.status != 302 {
		t.Errorf("anonymous: %d", r.status)
	}
	admin := signedInBrowser(t, e)
	if r := admin.get("/admin/jobs"); r.status != 403 {
		t.Errorf("family admin: %d", r.status)
	}
	b := e.browser(t)
	b.login(root.Email, "correct horse battery")
	if r := b.get("/admin/jobs"); r.status != 200 || !strings.Contains(string(r.body), "<html") {
		t.Errorf("super admin: %d", r.status)
	}
	if r := b.get("/admin/jobs/api/queues"); r.status != 200 || !strings.Contains(string(r.body), "queues") {
		t.Errorf("dashboard API: %d %s", r.status, r.body)
	}
	if r := b.send("DELETE", "/admin/jobs/api/queues/default", nil, map[string]string{"Origin": "https://evil.example"}); r.status != 403 {
		t.Errorf("cross-site write: %d", r.status)
	}
}
