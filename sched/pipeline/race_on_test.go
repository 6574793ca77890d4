//go:build race

package pipeline

// Under go test -race the slowest tests run fewer cases (never none), so
// that the race detector's run of every package stays within minutes; the
// ordinary run covers every case.

// raceCases keeps every other case under the race detector (the first,
// third, ...), so that every kind of case still runs.
func raceCases[T any](cases []T) []T {
	var out []T
	for i := 0; i < len(cases); i += 2 {
		out = append(out, cases[i])
	}
	return out
}
