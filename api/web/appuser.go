package web

import (
	"github.com/google/uuid"

	"coffer/models"
)

// AppUser is a user as the reference's mobile app reads it, in the answers
// of its sign-in and of PATCH /api/v1/auth/enable_ai.
type AppUser struct {
	ID        uuid.UUID `json:"id"`
	Email     string    `json:"email"`
	FirstName *string   `json:"first_name"`
	LastName  *string   `json:"last_name"`
	UILayout  string    `json:"ui_layout"`
	AIEnabled bool      `json:"ai_enabled"`
}

// AppUserOf is u as the app reads it.
func AppUserOf(u *models.User) *AppUser {
	return &AppUser{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName, UILayout: "dashboard",
		AIEnabled: u.AIEnabled}
}
