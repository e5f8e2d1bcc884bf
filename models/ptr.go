package models

// Optional columns are pointers; these two cross between them and values.

// Str returns the value of an optional column, "" when unset.
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }
