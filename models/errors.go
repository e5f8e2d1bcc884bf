package models

import (
	"errors"
	"strings"
)

var (
	// ErrNotFound is returned when a row does not exist in the caller's family.
	ErrNotFound = errors.New("not found")
	// ErrConflict is returned when a write would break a uniqueness rule the
	// caller can fix, such as a tag name already in use.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable is returned when the database cannot be reached: no
	// connection to PostgreSQL, a connection lost mid-query, or an SQLite
	// file that cannot be opened. Callers answer "try again later" without
	// knowing which driver said so.
	ErrUnavailable = errors.New("database unavailable")
	// ErrBalanceOverflow is returned when an account's transactions add up
	// to more than a balance holds; the account records it (BalanceError).
	ErrBalanceOverflow = errors.New("balance out of range")
)

// InvalidError lists every reason a write was refused; callers turn it into
// one 422 response. The messages are written for end users.
type InvalidError struct {
	Problems []string
}

func (e *InvalidError) Error() string {
	return "invalid: " + strings.Join(e.Problems, "; ")
}

// Invalid returns an *InvalidError with the given problems.
func Invalid(problems ...string) error {
	return &InvalidError{Problems: problems}
}
