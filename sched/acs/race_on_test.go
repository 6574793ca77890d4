//go:build race

package acs

// Under go test -race the slowest tests run fewer cases (never none), so
// that the race detector's run of every package stays within minutes; the
// ordinary run covers every case.

// simConfigs are the simulated GPUs the race-freedom tests run on: the
// H100 alone under the race detector.
func simConfigs() []string { return []string{"h100"} }

// raceCases keeps every other case under the race detector (the first,
// third, ...), so that every kind of case still runs.
func raceCases[T any](cases []T) []T {
	var out []T
	for i := 0; i < len(cases); i += 2 {
		out = append(out, cases[i])
	}
	return out
}
