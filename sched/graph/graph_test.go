package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

var testKernel = &device.Kernel{Module: "test", Name: "k", Regs: 16}

func kop(name string, args ...workloads.ArgSpec) workloads.Op {
	return workloads.Op{Name: name, Kind: workloads.OpKernel, Kernel: testKernel, Grid: device.D1(1), Block: device.D1(32), Args: args}
}

func bind(t *testing.T, p *workloads.Program) (*fakeDev, *fakeHost, *workloads.Instance) {
	t.Helper()
	d := newFakeDev()
	h := d.host()
	in, err := workloads.Bind(h, p)
	require.NoError(t, err)
	d.done = nil // forget the uploads
	return d, h, in
}

func edgesOf(d *DAG) [][2]int {
	var out [][2]int
	for u, ss := range d.Succ {
		for _, v := range ss {
			out = append(out, [2]int{u, v})
		}
	}
	return out
}

func TestFromInstanceHazards(t *testing.T) {
	const R, W, RW = device.Read, device.Write, device.ReadWrite
	bufs := []workloads.BufferSpec{{Name: "a", Bytes: 1024}, {Name: "b", Bytes: 1024}, {Name: "c", Bytes: 1024}}
	tests := []struct {
		name  string
		ops   []workloads.Op
		edges [][2]int
	}{
		{"read after write", []workloads.Op{kop("w", workloads.BufArg(0, W)), kop("r", workloads.BufArg(0, R))}, [][2]int{{0, 1}}},
		{"write after read", []workloads.Op{kop("r", workloads.BufArg(0, R)), kop("w", workloads.BufArg(0, W))}, [][2]int{{0, 1}}},
		{"write after write", []workloads.Op{kop("w1", workloads.BufArg(0, W)), kop("w2", workloads.BufArg(0, RW))}, [][2]int{{0, 1}}},
		{"read after read is free", []workloads.Op{kop("r1", workloads.BufArg(0, R)), kop("r2", workloads.BufArg(0, R))}, nil},
		{"different buffers", []workloads.Op{kop("w1", workloads.BufArg(0, W)), kop("w2", workloads.BufArg(1, W))}, nil},
		{"disjoint ranges of one buffer", []workloads.Op{
			kop("lo", workloads.BufRange(0, W, 0, 512)), kop("hi", workloads.BufRange(0, W, 512, 512)),
		}, nil},
		{"overlapping ranges", []workloads.Op{
			kop("lo", workloads.BufRange(0, W, 0, 513)), kop("hi", workloads.BufRange(0, R, 512, 512)),
		}, [][2]int{{0, 1}}},
		{"chain keeps transitive edge", []workloads.Op{
			kop("a", workloads.BufArg(0, W)), kop("b", workloads.BufArg(0, R), workloads.BufArg(1, W)),
			kop("c", workloads.BufArg(0, R), workloads.BufArg(1, R), workloads.BufArg(2, W)),
		}, [][2]int{{0, 1}, {0, 2}, {1, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, in := bind(t, &workloads.Program{Name: tc.name, Buffers: bufs, Steps: []workloads.Step{{Ops: tc.ops}}})
			d, err := FromInstance(in, 0, in.N())
			require.NoError(t, err)
			assert.Equal(t, tc.edges, edgesOf(d))
		})
	}
}

func TestFromInstanceRejectsBadRange(t *testing.T) {
	_, _, in := bind(t, &workloads.Program{Name: "p", Buffers: []workloads.BufferSpec{{Name: "a", Bytes: 8}},
		Steps: []workloads.Step{{Ops: []workloads.Op{kop("k", workloads.BufArg(0, device.Write))}}}})
	_, err := FromInstance(in, 0, 2)
	require.ErrorContains(t, err, "outside the program's 1 operations")
}

func mustDAG(t *testing.T, n int, edges ...[2]int) *DAG {
	t.Helper()
	d, err := FromEdges(n, edges)
	require.NoError(t, err)
	return d
}

func TestFromEdgesErrors(t *testing.T) {
	_, err := FromEdges(3, [][2]int{{0, 1}, {1, 2}, {2, 0}})
	require.ErrorContains(t, err, "cycle")
	require.ErrorContains(t, err, "1 -> 2 -> 0 -> 1")
	_, err = FromEdges(2, [][2]int{{0, 2}})
	require.ErrorContains(t, err, "outside [0,2)")
	_, err = FromEdges(2, [][2]int{{1, 1}})
	require.ErrorContains(t, err, "self loop on node 1")
}

func TestTransitiveReduction(t *testing.T) {
	// Diamond 0->{1,2}->3 plus shortcuts 0->3 and 1->4, 3->4.
	d := mustDAG(t, 5, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 3}, [2]int{2, 3}, [2]int{0, 3}, [2]int{3, 4}, [2]int{1, 4})
	r, err := d.TransitiveReduction()
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}}, edgesOf(r))
	assert.Equal(t, [][]int{{}, {0}, {0}, {1, 2}, {3}}, nonNil(r.Pred))
	// Reduction preserves reachability.
	rc, _ := r.Closure()
	dc, _ := d.Closure()
	assert.Equal(t, dc, rc)
}

func nonNil(a [][]int) [][]int {
	out := make([][]int, len(a))
	for i, x := range a {
		out[i] = append([]int{}, x...)
	}
	return out
}

func TestLevels(t *testing.T) {
	d := mustDAG(t, 6, [2]int{0, 2}, [2]int{1, 2}, [2]int{2, 3}, [2]int{0, 4}, [2]int{4, 3})
	lv, err := d.Levels()
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 1, 5}, {2, 4}, {3}}, lv)
}

func TestChainCoverIsWidth(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges [][2]int
		width int
	}{
		{"empty", 0, nil, 0},
		{"chain", 4, [][2]int{{0, 1}, {1, 2}, {2, 3}}, 1},
		{"antichain", 5, nil, 5},
		{"diamond", 4, [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}}, 2},
		// Path cover of the reduction needs 3 (0-2-3, 1, 4); chains may
		// skip through 2, so 1 -> 4 is a chain: width 2.
		{"skip through hub", 5, [][2]int{{0, 2}, {1, 2}, {2, 3}, {2, 4}}, 2},
		{"M1 shape", 17, m1Edges(), 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := mustDAG(t, tc.n, tc.edges...)
			chains, err := d.MinChainCover()
			require.NoError(t, err)
			assert.Len(t, chains, tc.width)
			// A partition into chains: every node once, consecutive nodes ordered.
			r, _ := d.Closure()
			seen := map[int]bool{}
			for _, c := range chains {
				for i, v := range c {
					assert.False(t, seen[v], "node %d in two chains", v)
					seen[v] = true
					if i > 0 {
						assert.True(t, r.Has(c[i-1], v), "chain %v: %d does not reach %d", c, c[i-1], v)
					}
				}
			}
			assert.Len(t, seen, tc.n)
			w, err := d.Width()
			require.NoError(t, err)
			assert.Equal(t, tc.width, w)
		})
	}
}

// m1Edges is KeSCo's M1 shape: 8 sources, 4 joins of pairs, 4 followers,
// one reduction.
func m1Edges() [][2]int {
	var e [][2]int
	for i := 0; i < 4; i++ {
		e = append(e, [2]int{2 * i, 8 + i}, [2]int{2*i + 1, 8 + i}, [2]int{8 + i, 12 + i}, [2]int{12 + i, 16})
	}
	return e
}

// keSCoExample is worked by hand in TestKeSCoHandWorked.
func keSCoExample(t *testing.T) *DAG {
	return mustDAG(t, 8,
		[2]int{0, 2}, [2]int{1, 3}, [2]int{0, 4}, [2]int{2, 4}, [2]int{3, 4}, [2]int{1, 4},
		[2]int{1, 5}, [2]int{3, 5}, [2]int{4, 6}, [2]int{5, 6}, [2]int{2, 6}, [2]int{3, 6},
		[2]int{6, 7}, [2]int{3, 7})
}

func TestKeSCoHandWorked(t *testing.T) {
	// Reduction: 0->2, 1->3, 2->4, 3->4, 3->5, 4->6, 5->6, 6->7; width 2.
	// Levels {0,1} {2,3} {4,5} {6} {7}. Distribution: 0 -> s0, 1 -> s1
	// (round-robin); 2 -> s0, 3 -> s1 (single parent); 4: parents 2 (one
	// unassigned successor) and 3 (two) -> s0; 5 -> s1; 6: parents 4, 5 tie
	// -> first, s0; 7 -> s0. Streams: s0 = 0 2 4 6 7, s1 = 1 3 5.
	// Cross edges of the full graph: 1->4, 3->4, 5->6, 3->6, 3->7 (5).
	// Pruning: 4 waits only on 3 (last on s1); 6 only on 5; 7 needs none,
	// s0 already waited on 5, later than 3. Waits 2, removed 3.
	p, err := KeSCo(keSCoExample(t), KeSCoOptions{Streams: 8})
	require.NoError(t, err)
	assert.Equal(t, 2, p.Streams)
	assert.Equal(t, []int{0, 1, 0, 1, 0, 1, 0, 0}, p.Stream)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, p.Order)
	assert.Equal(t, [][]int{nil, nil, nil, nil, {3}, nil, {5}, nil}, p.Waits)
	assert.Equal(t, 5, p.CrossEdges)
	assert.Equal(t, 2, p.NumWaits())
	assert.Equal(t, 3, p.WaitsRemoved)
	assert.Equal(t, []bool{false, false, false, true, false, true, false, false}, p.Record)
	require.NoError(t, p.Verify(keSCoExample(t)))

	np, err := KeSCo(keSCoExample(t), KeSCoOptions{Streams: 8, NoPrune: true})
	require.NoError(t, err)
	assert.Equal(t, 5, np.NumWaits())
	assert.Equal(t, 0, np.WaitsRemoved)
	require.NoError(t, np.Verify(keSCoExample(t)))

	one, err := KeSCo(keSCoExample(t), KeSCoOptions{Streams: 1})
	require.NoError(t, err)
	assert.Equal(t, 0, one.NumWaits())
}

func TestKeSCoForkRule(t *testing.T) {
	fork := mustDAG(t, 4, [2]int{0, 1}, [2]int{0, 2}, [2]int{0, 3})
	strict, err := KeSCo(fork, KeSCoOptions{Streams: 8, Strict: true})
	require.NoError(t, err)
	assert.Equal(t, 3, strict.Streams) // the width
	assert.Equal(t, []int{0, 0, 0, 0}, strict.Stream, "the paper's rule serializes a fork's children")
	spread, err := KeSCo(fork, KeSCoOptions{Streams: 8})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 1, 2}, spread.Stream)
	require.NoError(t, spread.Verify(fork))
}

func TestTaskflowRoundRobin(t *testing.T) {
	fork := mustDAG(t, 5, [2]int{0, 1}, [2]int{0, 2}, [2]int{0, 3}, [2]int{1, 4}, [2]int{2, 4}, [2]int{3, 4})
	p, err := Taskflow(fork, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 1, 0, 0}, p.Stream)
	assert.Equal(t, [][]int{nil, nil, {0}, nil, {2}}, p.Waits)
	assert.Equal(t, []bool{true, false, true, false, false}, p.Record)
	require.NoError(t, p.Verify(fork))
	_, err = Taskflow(fork, 0)
	require.ErrorContains(t, err, "at least 1")
}

func TestNimble(t *testing.T) {
	d := mustDAG(t, 17, m1Edges()...)
	p, err := Nimble(d)
	require.NoError(t, err)
	assert.Equal(t, 8, p.Streams)
	assert.Equal(t, 17, p.NumRecords(), "an event after every node")
	require.NoError(t, p.Verify(d))
	// Streams follow edges of the reduction: each of the 4 joins has one
	// parent on its own stream and waits on the other; the final reduce
	// waits on 3 of its 4 parents: 4 + 3 waits.
	assert.Equal(t, 7, p.NumWaits())
	// A hub with two parents and two children needs three paths (width 2).
	hub := mustDAG(t, 5, [2]int{0, 2}, [2]int{1, 2}, [2]int{2, 3}, [2]int{2, 4})
	hp, err := Nimble(hub)
	require.NoError(t, err)
	assert.Equal(t, 3, hp.Streams)
	require.NoError(t, hp.Verify(hub))
}

func TestVerifyCatchesMissingWait(t *testing.T) {
	d := mustDAG(t, 2, [2]int{0, 1})
	p := newPlan("broken", 2, 2)
	p.Stream = []int{0, 1}
	p.Order = []int{0, 1}
	require.ErrorContains(t, p.Verify(d), "edge 0 -> 1 (streams 0 -> 1) is not synchronized")
	p.Waits[1] = []int{0}
	require.ErrorContains(t, p.Verify(d), "has no recorded event")
	p.Record[0] = true
	require.NoError(t, p.Verify(d))
	p.Order = []int{1, 0}
	require.Error(t, p.Verify(d))
}

// testProgram is a two-step program with a fork, a join and reuse of a
// buffer (WAR), plus a cross-step dependency.
func testProgram() *workloads.Program {
	const R, W, RW = device.Read, device.Write, device.ReadWrite
	b := func(i int, m device.Access) workloads.ArgSpec { return workloads.BufArg(i, m) }
	var bufs []workloads.BufferSpec
	for _, n := range []string{"x", "a", "b", "c", "d", "y"} {
		bufs = append(bufs, workloads.BufferSpec{Name: n, Bytes: 4096})
	}
	return &workloads.Program{Name: "test", Buffers: bufs, Steps: []workloads.Step{
		{Ops: []workloads.Op{
			kop("a=f(x)", b(0, R), b(1, W)), kop("b=f(x)", b(0, R), b(2, W)), kop("c=f(x)", b(0, R), b(3, W)),
			kop("d=a+b", b(1, R), b(2, R), b(4, W)), kop("y=d+c", b(4, R), b(3, R), b(5, W)),
			kop("x=g()", b(0, W)), kop("a+=x", b(0, R), b(1, RW)),
		}},
		{Ops: []workloads.Op{
			kop("b=f(y)", b(5, R), b(2, W)), kop("c=f(a)", b(1, R), b(3, W)), kop("y=b+c", b(2, R), b(3, R), b(5, W)),
		}},
	}}
}

func allSchedulers(t *testing.T) []sched.Scheduler {
	var out []sched.Scheduler
	for _, pol := range []Policy{PolicySerial, PolicyTaskflow, PolicyNimble, PolicyKeSCo} {
		for _, g := range []bool{false, true} {
			for _, per := range []bool{false, true} {
				s, err := New(Options{Policy: pol, Graph: g, PerStep: per})
				require.NoError(t, err)
				out = append(out, s)
			}
		}
	}
	gr, err := NewGrCUDA(8, DefaultGrCUDADepCost)
	require.NoError(t, err)
	out = append(out, gr)
	for _, inner := range []Policy{PolicySerial, PolicyKeSCo} {
		inner := inner
		mp, err := NewMultiProcess(0, string(inner), func() (sched.Scheduler, error) { return New(Options{Policy: inner}) })
		require.NoError(t, err)
		out = append(out, mp)
	}
	return out
}

func runOnFake(t *testing.T, s sched.Scheduler, p *workloads.Program) *fakeDev {
	t.Helper()
	d, h, in := bind(t, p)
	if pr, ok := s.(sched.Preparer); ok {
		require.NoError(t, pr.Prepare(h, in))
	}
	for rep := 0; rep < 2; rep++ {
		d.done = nil
		require.NoError(t, s.Run(h, in), s.Name())
		assert.Empty(t, d.races(), s.Name())
		assert.Len(t, d.done, in.N(), "%s ran every operation once", s.Name())
		assert.GreaterOrEqual(t, h.Now(), d.lastEnd(), "%s returned before its work completed", s.Name())
	}
	if pr, ok := s.(sched.Preparer); ok {
		require.NoError(t, pr.Cleanup(h))
	}
	return d
}

func TestSchedulersRespectDependencies(t *testing.T) {
	for _, s := range allSchedulers(t) {
		t.Run(s.Name(), func(t *testing.T) { runOnFake(t, s, testProgram()) })
	}
}

func TestParallelPoliciesOverlapIndependentWork(t *testing.T) {
	serial, _ := New(Options{Policy: PolicySerial})
	d := runOnFake(t, serial, testProgram())
	serialSpan := d.lastEnd() - d.done[0].start
	for _, pol := range []Policy{PolicyTaskflow, PolicyNimble, PolicyKeSCo} {
		s, _ := New(Options{Policy: pol, Graph: true})
		d := runOnFake(t, s, testProgram())
		assert.Less(t, d.lastEnd()-d.done[0].start, serialSpan, "%s should overlap the fork", s.Name())
	}
}

func TestStatsAndNames(t *testing.T) {
	s, err := New(Options{Policy: PolicyKeSCo, Graph: true})
	require.NoError(t, err)
	assert.Equal(t, "kesco(s=8)+graph", s.Name())
	_, h, in := bind(t, testProgram())
	require.NoError(t, s.Prepare(h, in))
	st := s.Stats()
	p := s.Plans()[0]
	assert.Equal(t, float64(p.Streams), st["streams"])
	assert.Equal(t, float64(p.NumWaits()), st["waits"])
	assert.Equal(t, float64(p.WaitsRemoved), st["waits_removed"])
	assert.Greater(t, st["waits_removed"], 0.0)
	// Captured records and waits become edges: one graph node per operation.
	assert.Equal(t, float64(in.N()), st["graph_nodes"])
	require.NoError(t, s.Cleanup(h))
}

func TestOptionErrors(t *testing.T) {
	_, err := New(Options{Policy: "fifo"})
	require.ErrorContains(t, err, `unknown policy "fifo"`)
	_, err = New(Options{Policy: PolicyTaskflow, Strict: true})
	require.ErrorContains(t, err, "only to the kesco policy")
	_, err = New(Options{Policy: PolicyKeSCo, Streams: -1})
	require.ErrorContains(t, err, "must not be negative")
	_, err = NewGrCUDA(0, 0)
	require.ErrorContains(t, err, "max_streams")
	_, err = NewMultiProcess(-1, "x", nil)
	require.ErrorContains(t, err, "processes")
}

func TestKeSCoJoinRule(t *testing.T) {
	// M2's shape at width 3: gate i joins sources i and i+1 mod 3.
	ring := mustDAG(t, 6, [2]int{0, 3}, [2]int{1, 3}, [2]int{1, 4}, [2]int{2, 4}, [2]int{2, 5}, [2]int{0, 5})
	strict, err := KeSCo(ring, KeSCoOptions{Streams: 8, Strict: true})
	require.NoError(t, err)
	// Gate 2's parents (0 and 2) tie at one unscheduled successor; the
	// literal rule takes the first, stream 0, which gate 0 already holds.
	assert.Equal(t, []int{0, 1, 2, 0, 1, 0}, strict.Stream)
	refined, err := KeSCo(ring, KeSCoOptions{Streams: 8})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 0, 1, 2}, refined.Stream)
	require.NoError(t, refined.Verify(ring))
}
