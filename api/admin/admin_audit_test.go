package admin_test

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynqmon"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/modelstest"
)

func TestAuditView(t *testing.T) {
	e := apitest.NewEnv(t)
	root := apitest.NewSuperAdmin(t, e, e.Beta.Family)
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
		e.Store.Now = func() time.Time { return at }
		ua := ev.ua
		if err := e.Store.CreateAuditLog(t.Context(), &models.AuditLog{EventType: ev.event, UserID: &e.Alpha.User.ID, UserAgent: &ua,
			Metadata: map[string]any{"reason": "bad_credentials", "i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	e.Store.Now = func() time.Time { return time.Now().UTC() }

	admin := apitest.SignedInBrowser(t, e)
	if r := admin.Get("/admin/sso_audit_logs"); r.Status != 403 {
		t.Errorf("family admin on the audit log: %d", r.Status)
	}

	b := e.Browser(t)
	b.Login(root.Email, "correct horse battery")
	r := b.Get("/admin/sso_audit_logs?event_type=login_failed&range=7d")
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if n := strings.Count(string(r.Body), `<td class="event">login_failed</td>`); n != 2 {
		t.Errorf("login_failed in 7 days: %d rows", n)
	}
	if r := b.Get("/admin/sso_audit_logs?event_type=login_failed&range=all"); strings.Count(string(r.Body), `<td class="event">login_failed</td>`) != 3 {
		t.Error("range=all")
	}
	if r := b.Get("/admin/sso_audit_logs?event_type=bogus&range=1y"); !strings.Contains(string(r.Body), "Unknown filter value ignored.") {
		t.Error("unknown filters not reported")
	}

	csvResp := b.Get("/admin/sso_audit_logs/export.csv?event_type=login_failed&range=7d")
	if csvResp.Status != 200 || !strings.HasPrefix(csvResp.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("export: %d %v", csvResp.Status, csvResp.Header)
	}
	rows, err := csv.NewReader(strings.NewReader(string(csvResp.Body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || strings.Join(rows[0], ",") != "id,created_at,event_type,user_id,user_email,provider,ip,user_agent,metadata" {
		t.Fatalf("csv: %v", rows)
	}
	if rows[1][7] != "'=cmd|' /C calc'!A0" {
		t.Errorf("formula not defused: %q", rows[1][7])
	}
	if rows[1][4] != e.Alpha.User.Email || rows[1][2] != "login_failed" {
		t.Errorf("row: %v", rows[1])
	}
}

func TestJobDashboard(t *testing.T) {
	e := apitest.NewEnv(t, func(o *api.Options) {
		o.Dashboard = asynqmon.New(asynqmon.Options{RootPath: "/admin/jobs", RedisConnOpt: modelstest.Redis(t, apitest.RedisDB())})
	})
	root := apitest.NewSuperAdmin(t, e, e.Beta.Family)
	anon := e.Browser(t)
	if r := anon.Get("/admin/jobs"); r.Status != 302 {
		t.Errorf("anonymous: %d", r.Status)
	}
	admin := apitest.SignedInBrowser(t, e)
	if r := admin.Get("/admin/jobs"); r.Status != 403 {
		t.Errorf("family admin: %d", r.Status)
	}
	b := e.Browser(t)
	b.Login(root.Email, "correct horse battery")
	if r := b.Get("/admin/jobs"); r.Status != 200 || !strings.Contains(string(r.Body), "<html") {
		t.Errorf("super admin: %d", r.Status)
	}
	if r := b.Get("/admin/jobs/api/queues"); r.Status != 200 || !strings.Contains(string(r.Body), "queues") {
		t.Errorf("dashboard API: %d %s", r.Status, r.Body)
	}
	if r := b.Send("DELETE", "/admin/jobs/api/queues/default", nil, map[string]string{"Origin": "https://evil.example"}); r.Status != 403 {
		t.Errorf("cross-site write: %d", r.Status)
	}
}
