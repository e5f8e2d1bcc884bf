package worker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestRolesSyncSurvivesWorkerKill syncs the roles of 16 members whose
// provider now maps their group to admin, and kills the worker after the
// third change committed (the runs beside it held where they were). A
// fresh worker finishes: every member is an admin, with exactly one
// role_changed record each.
func TestRolesSyncSurvivesWorkerKill(t *testing.T) {
	const members = 16
	r := newKillRig(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, r.store, "roles-kill")
	prov := &models.SSOProvider{Name: "corp", Strategy: models.StrategyOAuth, Label: "Corp", Enabled: true,
		DefaultRole: models.RoleMember, GroupMappings: []models.GroupMapping{{Group: "Finance", Role: models.RoleAdmin}}}
	models.NewProviderID(prov)
	if err := r.store.CreateSSOProvider(ctx, prov, models.ProviderChange{ActorID: f.User.ID}); err != nil {
		t.Fatal(err)
	}
	var users []uuid.UUID
	for i := range members {
		u := &models.User{FamilyID: f.Family.ID, Email: fmt.Sprintf("member%d-%s@example.com", i, f.Family.ID.String()[:8]), Role: models.RoleMember}
		if err := r.store.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if err := r.store.CreateIdentity(ctx, &models.SSOIdentity{FamilyID: u.FamilyID, UserID: u.ID, ProviderID: prov.ID, Subject: fmt.Sprintf("sub-%d", i),
			Claims: map[string]any{"groups": []any{"Finance"}}}); err != nil {
			t.Fatal(err)
		}
		users = append(users, u.ID)
	}

	k := newKiller(jobs.HookRoleApplied, 3)
	var ids []string
	r.kill(t, r.options(r.handlers(nil, k.hook), nil), k, func() {
		for _, u := range users {
			task, err := jobs.NewRolesSyncTask(u, f.User.ID)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.enqueue(t, task))
		}
	})
	runWorker(t, r.options(r.handlers(nil, nil), nil))
	r.waitGone(t, jobs.QueueDefault, ids...)

	logs, _, err := r.store.AuditLogs(ctx, models.AuditFilter{EventType: models.EventRoleChanged}, models.Page{Number: 1, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]int{}
	for _, l := range logs {
		changes[fmt.Sprint(l.Metadata["target_user_id"])]++
	}
	for _, id := range users {
		u, err := r.store.UserByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if u.Role != models.RoleAdmin || changes[id.String()] != 1 {
			t.Errorf("%s: role %s, %d role_changed records", u.Email, u.Role, changes[id.String()])
		}
	}
	if len(logs) != members {
		t.Fatalf("%d role_changed records, want %d", len(logs), members)
	}
}
