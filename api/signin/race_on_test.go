//go:build race

package signin_test

// raceShadow is how many bytes of resident memory each byte the program
// touches costs: the race detector keeps shadow memory beside the heap,
// so a peak-memory bound measured under -race scales by it.
const raceShadow = 3
