package acs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCheckCostMatchesThePaper(t *testing.T) {
	cases := []struct {
		window, ranges int
		us             float64
	}{{16, 6, 0.41}, {16, 10, 0.70}, {32, 6, 0.51}, {32, 10, 1.64}}
	for _, c := range cases {
		assert.InDelta(t, c.us*1000, float64(CheckCost(c.window, c.ranges).Nanoseconds()), 1, "window %d ranges %d", c.window, c.ranges)
	}
	// Midpoint of the box: the mean of the four.
	assert.InDelta(t, (0.41+0.70+0.51+1.64)/4*1000, float64(CheckCost(24, 8).Nanoseconds()), 1)
}

func TestCheckCostOutsideTheBox(t *testing.T) {
	assert.Zero(t, CheckCost(0, 6), "an empty window checks nothing")
	assert.Equal(t, CheckCost(32, 6)*2, CheckCost(64, 6), "linear in the window beyond 32")
	assert.Equal(t, CheckCost(16, 6)/2, CheckCost(8, 6), "linear in the window below 16")
	assert.InDelta(t, float64(CheckCost(32, 10))*2, float64(CheckCost(32, 20)), 1, "linear in ranges beyond 10")
	assert.Equal(t, CheckCost(16, 1), CheckCost(16, 0), "at least one range")
	prev := time.Duration(0)
	for w := 1; w <= 128; w++ {
		c := CheckCost(w, 7)
		assert.Greater(t, c, time.Duration(0))
		assert.GreaterOrEqual(t, c, prev, "monotone in the window at %d", w)
		prev = c
	}
}
