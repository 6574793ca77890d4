//go:build !race

package pipeline

// raceDetector is false without -race (see race_on_test.go).
const raceDetector = false

// raceCases keeps every case without the race detector.
func raceCases[T any](cases []T) []T { return cases }
