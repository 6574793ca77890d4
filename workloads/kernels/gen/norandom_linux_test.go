package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tools gen runs must see a fixed address-space layout: nvcc's PTX
// depends on it (see runFixedLayout), and a child's personality says whether
// it got one.
func TestRunFixedLayoutDisablesRandomization(t *testing.T) {
	out, err := runFixedLayout(exec.Command("cat", "/proc/self/personality"))
	require.NoError(t, err)
	p, err := strconv.ParseUint(strings.TrimSpace(string(out)), 16, 64)
	require.NoError(t, err)
	assert.NotZero(t, p&addrNoRandomize, "child personality %#x lacks ADDR_NO_RANDOMIZE", p)

}

// Compiling the same module twice gives the same image byte for byte. Before
// randomization was turned off, rl.cu's PTX differed in about one compile in
// six, so this repeats a few times; it needs nvcc and is skipped without it.
// Only the fat binary is built (the cubin compile gives the resources, not
// the image).
func TestCompileIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles rl.cu repeatedly")
	}
	nvcc, err := findNVCC("")
	if err != nil {
		t.Skip(err)
	}
	var first []byte
	compiles := 4
	if raceDetector {
		compiles = 2 // nvcc's time, which the race detector does not check
	}
	for i := 0; i < compiles; i++ {
		m, err := compileModule(nvcc, "../rl.cu", t.TempDir(), false)
		require.NoError(t, err)
		if first == nil {
			first = m.Image
			continue
		}
		require.Equal(t, first, m.Image, "compile %d of rl.cu differs from the first", i+1)
	}
}
