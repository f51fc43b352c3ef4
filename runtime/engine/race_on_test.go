//go:build race

package engine_test

// raceDetector is set when the tests run with -race, which allocates more.
const raceDetector = true
