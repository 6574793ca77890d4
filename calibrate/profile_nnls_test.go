package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Two sizes of a kernel, the larger beyond the L2, fit a constant plus
// the beyond-L2 term and Bytes plus it equally well (both exactly): the
// per-byte model is kept, so that a launch of fewer bytes per block is
// timed shorter; points that a per-byte model does not fit keep the
// constant.
func TestWorkTermReplacesAConstantItTies(t *testing.T) {
	// 0.03 ns a byte, and 0.02 more a byte beyond the L2.
	xs := [][nTerms]float64{{1, 0, 0, 1e6, 0}, {1, 0, 0, 4e6, 4e6}}
	ys := []float64{30000, 200000}
	var flat [nTerms]float64
	flat[termConst], flat[termBeyondL2] = 30000, (200000-30000)/4e6

	c := workOverConstant(xs, ys, flat)
	assert.Zero(t, c[termConst])
	assert.InDelta(t, 0.03, c[termBytes], 1e-9)
	assert.InDelta(t, 0.02, c[termBeyondL2], 1e-9)
	eighth := [nTerms]float64{1, 0, 0, 1e6 / 8, 0}
	assert.InDelta(t, 3750, termTime(c, eighth, termBytes)+c[termConst], 1e-6)

	// Flops above 10 per byte: the per-flop model.
	flopXs := [][nTerms]float64{{1, 0, 2e7, 1e6, 0}, {1, 0, 8e7, 4e6, 4e6}}
	c = workOverConstant(flopXs, ys, flat)
	assert.Zero(t, c[termConst])
	assert.InDelta(t, 30000/2e7, c[termFlops], 1e-12)

	// The same time at three sizes within the L2: Bytes alone misses by
	// up to 50%, the constant stays.
	xs = [][nTerms]float64{{1, 0, 0, 1e6, 0}, {1, 0, 0, 2e6, 0}, {1, 0, 0, 4e6, 0}}
	ys = []float64{30000, 30000, 30000}
	var constant [nTerms]float64
	constant[termConst] = 30000
	assert.Equal(t, constant, workOverConstant(xs, ys, constant))

	// A model with a Work term already is left as it is.
	var perByte [nTerms]float64
	perByte[termConst], perByte[termBytes] = 100, 0.03
	assert.Equal(t, perByte, workOverConstant(xs, ys, perByte))
}
