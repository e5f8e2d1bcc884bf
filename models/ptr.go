package models

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }
