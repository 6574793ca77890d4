package experiments

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoundOrderShufflesPredecessors: each round of a group runs every row
// once, in an order that the file's seed fixes, and over the rounds of the
// tournament's largest group (26 rows, 7 rounds) no row runs behind the
// same row every time, as it did when rounds rotated by one.
func TestRoundOrderShufflesPredecessors(t *testing.T) {
	const n, rounds = 26, 7
	identity := make([]int, n)
	for i := range identity {
		identity[i] = i
	}
	for group := range 12 {
		before := make([]map[int]bool, n)
		for k := range before {
			before[k] = map[int]bool{}
		}
		for round := range rounds {
			order := roundOrder(n, 1, group, round)
			require.Equal(t, order, roundOrder(n, 1, group, round), "the same seed, group and round give the same order")
			assert.Equal(t, identity, slices.Sorted(slices.Values(order)), "a permutation of the rows")
			for i := 1; i < n; i++ {
				before[order[i]][order[i-1]] = true
			}
		}
		for k := range before {
			assert.NotEqual(t, 1, len(before[k]), "group %d: row %d follows the same row every round", group, k)
		}
	}
	assert.NotEqual(t, roundOrder(n, 1, 0, 1), roundOrder(n, 2, 0, 1), "another seed, another order")
}
