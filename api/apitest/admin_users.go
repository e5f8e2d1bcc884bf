package apitest

import (
	"testing"

	"coffer/models"
)

// Member adds a member with a password to a fixture family.
func Member(t *testing.T, e *Env, familyID any, email, role string) *models.User {
	t.Helper()
	u := &models.User{Email: email, Role: role}
	switch f := familyID.(type) {
	case *models.Family:
		u.FamilyID = f.ID
	}
	if err := e.Store.CreateUser(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	SetPassword(t, e, u, "correct horse battery")
	return u
}

// NewSuperAdmin adds a super admin, named after the family, to f.
func NewSuperAdmin(t *testing.T, e *Env, f *models.Family) *models.User {
	t.Helper()
	return Member(t, e, f, "root-"+f.ID.String()[:8]+"@example.com", models.RoleSuperAdmin)
}
