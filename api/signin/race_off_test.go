//go:build !race

package signin_test

// raceShadow: see race_on_test.go.
const raceShadow = 1
