package importfile

import "strings"

// Error says why a file cannot be read at all (not text, not the format,
// too large, too wide); the problems are written for the person who sent
// it. Callers answer it as a validation failure (422).
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	return "importfile: " + strings.Join(e.Problems, "; ")
}

func invalid(problem string) error {
	return &Error{Problems: []string{problem}}
}
