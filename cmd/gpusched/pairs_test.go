package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --spin-shared takes comma-separated bytes; an entry that is not a
// number, or outside 1 to 232448, is refused naming it.
func TestParseSpinShared(t *testing.T) {
	got, err := parseSpinShared("20000, 70000")
	require.NoError(t, err)
	assert.Equal(t, []int{20000, 70000}, got)
	got, err = parseSpinShared("")
	require.NoError(t, err)
	assert.Empty(t, got)
	for _, bad := range []string{"20k", "0", "300000", "20000,"} {
		_, err := parseSpinShared(bad)
		assert.ErrorContains(t, err, "--spin-shared", bad)
	}
}
