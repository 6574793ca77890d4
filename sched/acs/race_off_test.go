//go:build !race

package acs

// Without -race every test runs every case (see race_on_test.go).

// simConfigs are the simulated GPUs the race-freedom tests run on.
func simConfigs() []string { return []string{"rtx3070", "h100"} }

// raceCases keeps every case without the race detector.
func raceCases[T any](cases []T) []T { return cases }
