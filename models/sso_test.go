package models_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/secret"
)

func ptr(s string) *string { return &s }

func TestSSOProviderLifecycle(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "sso")
	change := models.ProviderChange{ActorID: f.User.ID}

	p := &models.SSOProvider{Name: "corp", Strategy: models.StrategyOIDC, Label: "Corp", Enabled: true,
		Issuer: ptr("https://idp.example"), ClientID: ptr("coffer"), DefaultRole: models.RoleMember,
		GroupMappings: []models.GroupMapping{{Group: "Admins", Role: models.RoleAdmin}}}
	models.NewProviderID(p)
	if err := s.SetProviderSecret(p, models.ColClientSecret, "s3cret"); err != nil {
		t.Fatal(err)
	}
	if !secret.IsSealed(*p.ClientSecretEnc) {
		t.Fatalf("secret stored as %q", *p.ClientSecretEnc)
	}
	if err := s.CreateSSOProvider(ctx, p, change); err != nil {
		t.Fatal(err)
	}
	dup := &models.SSOProvider{Name: "corp", Strategy: models.StrategyOAuth, Label: "Again", DefaultRole: models.RoleMember}
	if err := s.CreateSSOProvider(ctx, dup, change); !errors.Is(err, models.ErrConflict) {
		t.Fatalf("duplicate name: %v", err)
	}

	got, err := s.SSOProvider(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if secret, err := s.ProviderSecret(got, models.ColClientSecret); err != nil || secret != "s3cret" {
		t.Fatalf("secret = %q, %v", secret, err)
	}
	if !got.HasMappings() || len(got.GroupMappings) != 1 || got.GroupMappings[0].Group != "Admins" {
		t.Fatalf("mappings = %+v", got.GroupMappings)
	}
	// A sealed value copied to another row does not open there.
	other := *got
	models.NewProviderID(&other)
	if _, err := s.ProviderSecret(&other, models.ColClientSecret); !errors.Is(err, secret.ErrSealed) {
		t.Fatalf("moved secret: %v", err)
	}

	ident := &models.SSOIdentity{FamilyID: f.User.FamilyID, UserID: f.User.ID, ProviderID: p.ID, Subject: "sub-1",
		Claims: map[string]any{"groups": []any{"Admins"}}}
	if err := s.CreateIdentity(ctx, ident); err != nil {
		t.Fatal(err)
	}
	again := &models.SSOIdentity{FamilyID: f.User.FamilyID, UserID: f.User.ID, ProviderID: p.ID, Subject: "sub-2"}
	if err := s.CreateIdentity(ctx, again); !errors.Is(err, models.ErrConflict) {
		t.Fatalf("second identity at one provider: %v", err)
	}
	found, err := s.IdentityBySubject(ctx, p.ID, "sub-1")
	if err != nil || found.UserID != f.User.ID || found.Provider.Name != "corp" {
		t.Fatalf("by subject: %+v, %v", found, err)
	}
	latest, err := s.LatestMappedIdentity(ctx, f.User.FamilyID, f.User.ID, (*models.SSOProvider).HasMappings)
	if err != nil || latest.ID != ident.ID {
		t.Fatalf("latest mapped: %+v, %v", latest, err)
	}

	// The user has no password: the only identity cannot be unlinked.
	err = s.UnlinkIdentity(ctx, f.User.FamilyID, f.User.ID, ident.ID, func(*models.User) bool { return true }, &models.AuditLog{EventType: models.EventUnlink})
	var inv *models.InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("unlink of the last method: %v", err)
	}

	if err := s.DeleteSSOProvider(ctx, p.ID, change); err != nil {
		t.Fatal(err)
	}
	if _, err := s.IdentityBySubject(ctx, p.ID, "sub-1"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("identity after provider delete: %v", err)
	}
	logs, _, err := s.AuditLogs(ctx, models.AuditFilter{}, models.Page{Number: 1, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, l := range logs {
		events = append(events, l.EventType)
	}
	if len(events) != 2 || events[0] != models.EventProviderDeleted || events[1] != models.EventProviderCreated {
		t.Fatalf("audit = %v", events)
	}
	if logs[0].Metadata["identities_deleted"] != float64(1) {
		t.Errorf("identities_deleted = %v", logs[0].Metadata["identities_deleted"])
	}
}

func TestApplyMappedRoleGuards(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "guard")
	// The family's only admin keeps admin even when mappings say member.
	role, guard, err := s.ApplyMappedRole(ctx, models.MappedRole{UserID: f.User.ID, Target: models.RoleMember, Source: models.RoleSourceLogin, Provider: "corp"})
	if err != nil || role != models.RoleAdmin || guard != models.GuardLastFamilyAdmin {
		t.Fatalf("only admin: role=%s guard=%s err=%v", role, guard, err)
	}
	// The only super admin keeps super_admin.
	if err := s.SetUserRole(ctx, models.AdminChange{ActorRole: models.RoleSuperAdmin, TargetID: f.User.ID}, models.RoleSuperAdmin); err != nil {
		t.Fatal(err)
	}
	role, guard, err = s.ApplyMappedRole(ctx, models.MappedRole{UserID: f.User.ID, Target: models.RoleAdmin, Source: models.RoleSourceLogin, Provider: "corp"})
	if err != nil || role != models.RoleSuperAdmin || guard != models.GuardLastSuperAdmin {
		t.Fatalf("only super admin: role=%s guard=%s err=%v", role, guard, err)
	}
	// A member is promoted, and the change is recorded.
	m := &models.User{FamilyID: f.Family.ID, Email: "member-guard@example.com", Role: models.RoleMember}
	if err := s.CreateUser(ctx, m); err != nil {
		t.Fatal(err)
	}
	role, guard, err = s.ApplyMappedRole(ctx, models.MappedRole{UserID: m.ID, Target: models.RoleAdmin, Source: models.RoleSourceLogin, Provider: "corp"})
	if err != nil || role != models.RoleAdmin || guard != "" {
		t.Fatalf("promotion: role=%s guard=%s err=%v", role, guard, err)
	}
	logs, _, _ := s.AuditLogs(ctx, models.AuditFilter{EventType: models.EventRoleChanged}, models.Page{Number: 1, Size: 10})
	if len(logs) == 0 || logs[0].Metadata["source"] != models.RoleSourceLogin || *logs[0].UserID != m.ID {
		t.Fatalf("role_changed = %+v", logs)
	}
}

func TestBackfillSecrets(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "backfill")
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	var err error
	if s.Secrets, err = secret.NewSealer(oldKey); err != nil {
		t.Fatal(err)
	}
	mk := func(name string) *models.SSOProvider {
		p := &models.SSOProvider{Name: name, Strategy: models.StrategyOAuth, Label: name, DefaultRole: models.RoleMember}
		models.NewProviderID(p)
		return p
	}
	plain := mk("plain")
	plain.ClientSecretEnc = ptr("legacy-plaintext")
	old := mk("old")
	if err := s.SetProviderSecret(old, models.ColClientSecret, "old-key-secret"); err != nil {
		t.Fatal(err)
	}
	broken := mk("broken")
	broken.ClientSecretEnc = ptr("enc:v1:deadbeef:AAAA")
	for _, p := range []*models.SSOProvider{plain, old, broken} {
		if err := s.CreateSSOProvider(ctx, p, models.ProviderChange{ActorID: f.User.ID}); err != nil {
			t.Fatal(err)
		}
	}
	// A second factor's secret, keyed by its user (the table has no id).
	const totp = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	if err := s.EnableTOTP(ctx, f.User, totp, 0, nil, &models.AuditLog{EventType: models.EventSecondFactorEnabled, UserID: &f.User.ID}); err != nil {
		t.Fatal(err)
	}
	// Rotate: the new key is current, the old one only decrypts.
	if s.Secrets, err = secret.NewSealer(newKey, oldKey); err != nil {
		t.Fatal(err)
	}
	dry, err := s.BackfillSecrets(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	want := models.BackfillReport{Scanned: 4, Encrypted: 1, Reencrypted: 2, Unreadable: 1}
	if dry != want {
		t.Fatalf("dry run = %+v, want %+v", dry, want)
	}
	if got, _ := s.SSOProvider(ctx, plain.ID); models.Str(got.ClientSecretEnc) != "legacy-plaintext" {
		t.Fatal("the dry run wrote")
	}
	first, err := s.BackfillSecrets(ctx, false)
	if err != nil || first != want {
		t.Fatalf("first run = %+v, %v", first, err)
	}
	second, err := s.BackfillSecrets(ctx, false)
	if err != nil || second != (models.BackfillReport{Scanned: 4, Current: 3, Unreadable: 1}) {
		t.Fatalf("second run = %+v, %v", second, err)
	}
	for id, want := range map[*models.SSOProvider]string{plain: "legacy-plaintext", old: "old-key-secret"} {
		got, err := s.SSOProvider(ctx, id.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Secrets.Current(models.Str(got.ClientSecretEnc)) {
			t.Errorf("%s: not sealed with the current key", got.Name)
		}
		// The old key alone no longer opens it: it was re-sealed.
		if secret, err := s.ProviderSecret(got, models.ColClientSecret); err != nil || secret != want {
			t.Errorf("%s: %q, %v", got.Name, secret, err)
		}
	}
	if u, err := s.UserTOTP(ctx, f.Family.ID, f.User.ID); err != nil || !s.Secrets.Current(u.SecretEnc) {
		t.Errorf("totp not re-sealed: %v", err)
	} else if got, err := s.TOTPSecret(u); err != nil || got != totp {
		t.Errorf("totp secret = %q, %v", got, err)
	}
	if got, _ := s.SSOProvider(ctx, broken.ID); models.Str(got.ClientSecretEnc) != "enc:v1:deadbeef:AAAA" {
		t.Error("an unreadable value was overwritten")
	}
}

func TestMirrorFileProviders(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	mk := func(name string) *models.SSOProvider {
		p := &models.SSOProvider{Name: name, Strategy: models.StrategyOIDC, Label: name, Enabled: true,
			Issuer: ptr("https://" + name + ".example"), DefaultRole: models.RoleMember}
		models.NewProviderID(p)
		return p
	}
	a, b := mk("alpha"), mk("beta")
	if err := s.MirrorFileProviders(ctx, []*models.SSOProvider{a, b}); err != nil {
		t.Fatal(err)
	}
	// An edited file: alpha relabelled, beta gone.
	a2 := *a
	a2.Label = "Alpha SSO"
	if err := s.MirrorFileProviders(ctx, []*models.SSOProvider{&a2}); err != nil {
		t.Fatal(err)
	}
	ps, err := s.SSOProviders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("providers = %d, want 2 (a removed entry is disabled, not deleted)", len(ps))
	}
	for _, p := range ps {
		switch {
		case p.Source != models.SourceYAML:
			t.Errorf("%s: source %q", p.Name, p.Source)
		case p.Name == "alpha" && (p.Label != "Alpha SSO" || !p.Enabled):
			t.Errorf("alpha = %+v", p)
		case p.Name == "beta" && p.Enabled:
			t.Error("beta, removed from the file, is still enabled")
		}
	}
}

func TestMappedRoleDemotesAFormerSuperAdmin(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "former")
	other := modelstest.NewFamily(t, s, "other")
	for _, u := range []*models.User{f.User, other.User} {
		if err := s.SetUserRole(ctx, models.AdminChange{ActorRole: models.RoleSuperAdmin, TargetID: u.ID}, models.RoleSuperAdmin); err != nil {
			t.Fatal(err)
		}
	}
	// Another super admin exists, so f's user loses super_admin; being the
	// family's only admin, they keep admin.
	role, guard, err := s.ApplyMappedRole(ctx, models.MappedRole{UserID: f.User.ID, Target: models.RoleMember, Source: models.RoleSourceLogin, Provider: "corp"})
	if err != nil || role != models.RoleAdmin || guard != models.GuardLastFamilyAdmin {
		t.Fatalf("role=%s guard=%s err=%v", role, guard, err)
	}
	logs, _, _ := s.AuditLogs(ctx, models.AuditFilter{EventType: models.EventRoleChanged}, models.Page{Number: 1, Size: 1})
	if len(logs) != 1 || logs[0].Metadata["from"] != models.RoleSuperAdmin || logs[0].Metadata["to"] != models.RoleAdmin {
		t.Fatalf("role_changed = %+v", logs)
	}
}
