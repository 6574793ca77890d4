package graph

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/dnn"
	"github.com/gpusched/gpusched/workloads/kesco"
)

func forkJoin(t *testing.T, width int) *DAG {
	var e [][2]int
	for i := 1; i <= width; i++ {
		e = append(e, [2]int{0, i}, [2]int{i, width + 1})
	}
	return mustDAG(t, width+2, e...)
}

func uniformCosts(n int, c time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = c
	}
	return out
}

func TestPartitionCutsAtNarrowPoints(t *testing.T) {
	// Three fork-joins of width 3 in a row: 5 nodes each, joined
	// head to tail; cutting after a join crosses one edge.
	var e [][2]int
	for b := 0; b < 3; b++ {
		o := 5 * b
		e = append(e, [2]int{o, o + 1}, [2]int{o, o + 2}, [2]int{o, o + 3}, [2]int{o + 1, o + 4}, [2]int{o + 2, o + 4}, [2]int{o + 3, o + 4})
		if b > 0 {
			e = append(e, [2]int{o - 1, o})
		}
	}
	d := mustDAG(t, 15, e...)
	parts, err := Partition(d, 7)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {10, 11, 12, 13, 14}}, parts)
}

func TestSearchAlphaTradesParallelismForWaits(t *testing.T) {
	d := forkJoin(t, 4)
	cost := uniformCosts(6, 100*time.Microsecond)
	o := DefaultSearchOptions()
	o.Verify = 1
	o.WaitCost = 2 * time.Microsecond
	o.Alpha = 0 // only the total counts: no waits, one stream
	res, err := Search(d, cost, o)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Plans[0].Streams)
	assert.Equal(t, 0, res.Plans[0].NumWaits())
	o.Alpha = 10 // the critical path dominates: the four branches in parallel
	res, err = Search(d, cost, o)
	require.NoError(t, err)
	p := res.Plans[0]
	assert.Equal(t, 4, p.Streams)
	// One branch continues the fork's stream; the other three wait on the
	// fork, and the join waits on the three foreign branches.
	assert.Equal(t, 6, p.NumWaits())
	assert.InDelta(t, 10*300e3+600e3+6*2e3, res.Estimates[0], 1)
	require.NoError(t, p.Verify(d))
	o.MaxStreams = 2
	res, err = Search(d, cost, o)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Plans[0].Streams)
}

func TestSearchErrors(t *testing.T) {
	d := forkJoin(t, 2)
	_, err := Search(d, uniformCosts(3, time.Microsecond), DefaultSearchOptions())
	require.ErrorContains(t, err, "3 costs for 4 nodes")
	o := DefaultSearchOptions()
	o.Alpha = -1
	_, err = NewAutoGraph(o)
	require.ErrorContains(t, err, "alpha")
	io := DefaultIOSOptions()
	io.MaxGroups = 0
	_, err = NewIOS(io)
	require.ErrorContains(t, err, "max_groups")
}

func TestIOSStagesOnForkJoin(t *testing.T) {
	d := forkJoin(t, 4)
	stages, err := IOSStages(d, uniformCosts(6, 100*time.Microsecond), DefaultIOSOptions())
	require.NoError(t, err)
	assert.Equal(t, [][][]int{{{0}}, {{1}, {2}, {3}, {4}}, {{5}}}, stages)
	p, err := stagePlan(d, stages)
	require.NoError(t, err)
	assert.Equal(t, 4, p.Streams)
	// A chain collapses into one group: 0 -> 1 -> 2 is one stage of one group.
	chain := mustDAG(t, 3, [2]int{0, 1}, [2]int{1, 2})
	stages, err = IOSStages(chain, uniformCosts(3, 100*time.Microsecond), DefaultIOSOptions())
	require.NoError(t, err)
	assert.Equal(t, [][][]int{{{0, 1, 2}}}, stages)
	// Groups are capped at 2 ops: two stages.
	o := DefaultIOSOptions()
	o.MaxGroupOps = 2
	stages, err = IOSStages(chain, uniformCosts(3, 100*time.Microsecond), o)
	require.NoError(t, err)
	assert.Len(t, stages, 2)
}

func TestSearchedSchedulersOnTheSimulator(t *testing.T) {
	dev := newH100(t)
	m1, err := kesco.New("M1", kesco.Params{Scale: 1.0 / 64}, 1)
	require.NoError(t, err)
	sp := dnn.DefaultStatic("inception-v3")
	sp.Scale = 8
	inc, err := dnn.Static(sp, 1)
	require.NoError(t, err)
	serial, _ := New(Options{Policy: PolicySerial, Graph: true})
	ag, err := NewAutoGraph(DefaultSearchOptions())
	require.NoError(t, err)
	ios, err := NewIOS(DefaultIOSOptions())
	require.NoError(t, err)
	for _, p := range []struct {
		name string
		p    *workloads.Program
	}{{"M1", m1}, {"inception-v3", inc}} {
		ts, _ := simRun(t, dev, serial, p.p)
		ta, races := simRun(t, dev, ag, p.p)
		assert.Empty(t, races, p.name)
		ti, races := simRun(t, dev, ios, p.p)
		assert.Empty(t, races, p.name)
		st := ag.Stats()
		assert.Greater(t, st["partitions"], 0.0)
		assert.Greater(t, st["states"], 0.0)
		assert.Greater(t, ios.Stats()["stages"], 0.0)
		t.Logf("%s: serial+graph %v, autograph %v (%v), ios %v (%v)", p.name, ts, ta, st, ti, ios.Stats())
		assert.Less(t, ta, ts, "%s: autograph should beat one stream", p.name)
	}
}

// TestFrozenRunsWhatTheSearchChose: after a Prepare, AutoGraph's and IOS's
// Frozen schedules run the plan that Prepare chose, to the nanosecond on
// the simulator (to its rounding), without measuring or searching (their
// Prepare runs no kernel); before a Prepare there is none.
func TestFrozenRunsWhatTheSearchChose(t *testing.T) {
	sp := dnn.DefaultStatic("inception-v3")
	sp.Scale = 8
	inc, err := dnn.Static(sp, 1)
	require.NoError(t, err)
	ag, err := NewAutoGraph(DefaultSearchOptions())
	require.NoError(t, err)
	ios, err := NewIOS(DefaultIOSOptions())
	require.NoError(t, err)
	serial, err := New(Options{Policy: PolicySerial})
	require.NoError(t, err)
	dev := newH100(t)
	simRun(t, dev, serial, inc)
	oneRun := dev.Stats().Kernels // of the last Run
	for _, s := range []interface {
		Name() string
		Frozen() sched.Scheduler
	}{ag, ios} {
		assert.Nil(t, s.Frozen(), s.Name())
		searched, _ := simRun(t, dev, s.(sched.Scheduler), inc)
		frozen, _ := simRun(t, dev, s.Frozen(), inc)
		// 1 ns: the simulator rounds some durations from absolute times.
		assert.InDelta(t, searched, frozen, 1, s.Name())
		assert.Equal(t, oneRun, dev.Stats().Kernels, "%s: the frozen schedule measures nothing in Prepare", s.Name())
	}
}
