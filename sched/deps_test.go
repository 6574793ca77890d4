package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

func rng(b device.Buffer, m device.Access, off, n int64) device.Arg {
	return device.Arg{Kind: device.ArgBuffer, Buf: b, Mode: m, Off: off, Len: n}
}

func TestDepsHazards(t *testing.T) {
	a := device.Buffer{Addr: 0x1000, Size: 1024}
	b := device.Buffer{Addr: 0x2000, Size: 1024}
	d := NewDeps()
	// op0 writes a; op1 reads a (RAW on 0); op2 reads a (RAW on 0, not on 1:
	// two reads never conflict); op3 writes a (WAW on 0, WAR on 1 and 2);
	// op4 writes b (independent); op5 reads a's upper half (RAW on 3 only:
	// 3 supersedes 0, 1 and 2).
	steps := []struct {
		args []device.Arg
		want []int
	}{
		{[]device.Arg{device.Out(a)}, nil},
		{[]device.Arg{device.In(a)}, []int{0}},
		{[]device.Arg{device.In(a)}, []int{0}},
		{[]device.Arg{device.Out(a)}, []int{0, 1, 2}},
		{[]device.Arg{device.Out(b)}, nil},
		{[]device.Arg{rng(a, device.Read, 512, 512)}, []int{3}},
	}
	for i, s := range steps {
		got := d.Add(i, s.args, nil)
		if s.want == nil {
			assert.Empty(t, got, "op %d", i)
		} else {
			assert.Equal(t, s.want, got, "op %d", i)
		}
	}
}

func TestDepsDisjointRangesAreIndependent(t *testing.T) {
	a := device.Buffer{Addr: 0x1000, Size: 1024}
	d := NewDeps()
	assert.Empty(t, d.Add(0, []device.Arg{rng(a, device.Write, 0, 512)}, nil))
	assert.Empty(t, d.Add(1, []device.Arg{rng(a, device.Write, 512, 512)}, nil), "halves of one buffer do not conflict")
	assert.Equal(t, []int{0, 1}, d.Add(2, []device.Arg{device.In(a)}, nil), "the whole buffer depends on both halves")
	// A partial overwrite does not supersede a wider earlier access.
	assert.Equal(t, []int{0, 2}, d.Add(3, []device.Arg{rng(a, device.Write, 0, 256)}, nil))
	// op 0's bytes [256,512) were never overwritten, so it is still live.
	assert.Equal(t, []int{0, 1, 2, 3}, d.Add(4, []device.Arg{device.Out(a)}, nil))
}

func TestDepsReadWriteSelf(t *testing.T) {
	a := device.Buffer{Addr: 0x1000, Size: 64}
	d := NewDeps()
	// One op that reads and writes the same buffer through two arguments
	// does not depend on itself.
	assert.Empty(t, d.Add(0, []device.Arg{device.In(a), device.Out(a)}, nil))
	assert.Equal(t, []int{0}, d.Add(1, []device.Arg{device.InOut(a)}, nil))
}

func TestPlanWaitsOnlyOnLatestPerStream(t *testing.T) {
	// Ops 0,1 on stream 0; op 2 on stream 1 depends on both: one wait, on 1.
	// Op 3 on stream 0 depends on 2: one wait. Op 4 on stream 1 depends on 2
	// (same stream): no wait.
	deps := [][]int{nil, {0}, {0, 1}, {2}, {2}}
	p, err := NewPlan(0, 5, 2, []int{0, 0, 1, 0, 1}, deps)
	require.NoError(t, err)
	assert.Equal(t, [][]int{nil, nil, {1}, {2}, nil}, p.Waits)
	assert.Equal(t, 2, p.WaitCount())
}

func TestPlanIgnoresEarlierSteps(t *testing.T) {
	deps := [][]int{nil, nil, {0, 1}, {2}}
	p, err := NewPlan(2, 4, 2, []int{0, 1}, deps)
	require.NoError(t, err)
	assert.Equal(t, [][]int{nil, {2}}, p.Waits)
}

func TestPlanRejectsBadInput(t *testing.T) {
	_, err := NewPlan(0, 2, 2, []int{0, 2}, [][]int{nil, nil})
	assert.ErrorContains(t, err, "stream 2 of 2")
	_, err = NewPlan(0, 2, 2, []int{0}, [][]int{nil, nil})
	assert.ErrorContains(t, err, "1 assignments for 2")
	_, err = NewPlan(0, 2, 2, []int{0, 1}, [][]int{{1}, nil})
	assert.ErrorContains(t, err, "later op")
}
