package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

// multiParams is SET with a ring of ring execs per worker and perLaunch
// jobs per launch.
func multiParams(b, depth, ring, coalesce, perLaunch int, threaded bool) Params {
	return with(setParams(b, depth), func(p *Params) {
		p.Ring, p.Coalesce, p.JobsPerLaunch, p.Threaded = ring, coalesce, perLaunch, threaded
	})
}

func newMultiSET(t *testing.T, b, depth, ring, coalesce, perLaunch int, threaded bool) *SET {
	t.Helper()
	return newSET(t, multiParams(b, depth, ring, coalesce, perLaunch, threaded))
}

func TestSETJobsPerLaunchRunsWithoutRaces(t *testing.T) {
	tests := []struct {
		name                             string
		jobs, b                          int
		depth, ring, coalesce, perLaunch int
		threaded                         bool
		dealTo                           func(j int) int
	}{
		// 37 jobs: not a multiple of J x b, so every worker ends on a tail.
		{name: "dispatcher, ring 1, J 4", jobs: 37, b: 3, depth: 1, ring: 1, coalesce: 1, perLaunch: 4},
		{name: "dispatcher, ring 2, J 4, coalesce 2", jobs: 37, b: 4, depth: 2, ring: 2, coalesce: 2, perLaunch: 4},
		{name: "dispatcher, ring 3, depth 2, J 3", jobs: 37, b: 2, depth: 2, ring: 3, coalesce: 1, perLaunch: 3},
		{name: "threaded, ring 2, J 4", jobs: 37, b: 4, depth: 2, ring: 2, coalesce: 1, perLaunch: 4, threaded: true},
		{name: "threaded, ring 2, J 8, coalesce 2", jobs: 37, b: 2, depth: 2, ring: 2, coalesce: 2, perLaunch: 8, threaded: true},
		// Forced steals: a thief takes up to J jobs at once.
		{name: "dispatcher, all to worker 0", jobs: 30, b: 4, depth: 2, ring: 2, coalesce: 1, perLaunch: 4, dealTo: func(int) int { return 0 }},
		{name: "dispatcher, most to the last worker", jobs: 29, b: 3, depth: 2, ring: 3, coalesce: 2, perLaunch: 3, dealTo: func(j int) int { return min(j%4, 2) }},
		{name: "threaded, all to worker 1", jobs: 30, b: 4, depth: 2, ring: 2, coalesce: 1, perLaunch: 4, threaded: true, dealTo: func(int) int { return 1 }},
		{name: "threaded, most to the last worker", jobs: 29, b: 3, depth: 2, ring: 2, coalesce: 2, perLaunch: 5, threaded: true, dealTo: func(j int) int { return min(j%4, 2) }},
		// The longest chains (J 32): 75 jobs, tails on every worker.
		{name: "dispatcher, ring 2, J 32", jobs: 75, b: 2, depth: 2, ring: 2, coalesce: 1, perLaunch: 32},
		{name: "threaded, ring 2, J 32, all to worker 0", jobs: 75, b: 3, depth: 2, ring: 2, coalesce: 1, perLaunch: 32, threaded: true, dealTo: func(int) int { return 0 }},
	}
	for _, tt := range raceCases(tests) {
		t.Run(tt.name, func(t *testing.T) {
			w, err := jobs.Hotspot(jobs.HotspotParams{Jobs: tt.jobs, Size: 256, Iterations: 4}, 1)
			require.NoError(t, err)
			s := newMultiSET(t, tt.b, tt.depth, tt.ring, tt.coalesce, tt.perLaunch, tt.threaded)
			s.dealTo = tt.dealTo
			s.p.Gaps = true // every job's timing events must be recorded
			m, races, st := runGuarded(t, w.Program, s)
			assert.Empty(t, races, "a chain's slots share the worker's buffers in stream order; stolen jobs run in the thief's")
			assert.Empty(t, st.inFlight, "chains are prepared into completed execs only")
			// Fewer launches than jobs, but no launch holds more than J.
			assert.GreaterOrEqual(t, st.launches, (tt.jobs+tt.perLaunch-1)/tt.perLaunch)
			assert.Less(t, st.launches, tt.jobs)
			// Every node of every job was checked exactly once, and
			// Metrics counts every update the guard saw.
			ops := float64(len(w.Program.Steps[0].Ops))
			assert.Equal(t, float64(tt.jobs)*ops, m["node_updates"]+m["node_updates_skipped"])
			assert.Equal(t, float64(st.updates), m["node_updates"])
			// Retargeted jobs keep the kernel nodes' parameters: at most
			// the two copy nodes of a job change.
			assert.LessOrEqual(t, m["node_updates"], 2*float64(tt.jobs))
			assert.Equal(t, float64(tt.jobs), m["jobs"])
			assert.Zero(t, m["syncs"])
			assert.Positive(t, m["t_ideal_s"], "every job's span was recorded")
			assert.Greater(t, m["schedule_share"], 0.0)
			assert.LessOrEqual(t, m["schedule_share"], 1.0)
			if tt.dealTo != nil {
				assert.Positive(t, m["steals"], "idle workers take queued jobs from a peer")
			}
		})
	}
}

func TestSETJobsPerLaunchMetrics(t *testing.T) {
	// 32 jobs, 4 workers, 4 jobs per launch: each worker runs two full
	// chains of its own jobs when nobody steals (one dispatcher, jobs
	// dealt round-robin, equal jobs).
	w, err := jobs.SSSP(jobs.SSSPParams{Jobs: 32, Vertices: 1024, Degree: 4, Iterations: 4}, 1)
	require.NoError(t, err)
	s := newMultiSET(t, 4, 2, 2, 1, 4, false)
	m, races, st := runGuarded(t, w.Program, s)
	require.Empty(t, races)
	require.Zero(t, m["steals"])
	assert.Equal(t, 8, st.launches, "one graph launch per 4 jobs")
	ops := float64(len(w.Program.Steps[0].Ops))
	assert.Equal(t, 32*ops, m["node_updates"]+m["node_updates_skipped"])
	// Each worker's first chain was captured with its first 4 jobs; its
	// second chain (the other exec of the ring) updates the two copy
	// nodes of each of its 4 slots.
	assert.Equal(t, 4*4*2.0, m["node_updates"])
	assert.Positive(t, m["t_wait_s"], "the dispatcher waits for completion callbacks")
}

// TestRaceCheckerCatchesUnsafeChains: the chain's slots are safe in one
// worker's buffers only because the capture orders them; slots captured
// unordered, or workers sharing buffers, are caught.
func TestRaceCheckerCatchesUnsafeChains(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 24, Size: 512}, 1)
	require.NoError(t, err)
	for _, threaded := range []bool{false, true} {
		s := newMultiSET(t, 2, 2, 2, 1, 4, threaded)
		_, races := runOn(t, w.Program, s)
		require.Empty(t, races, "chained slots: no races")
		s = newMultiSET(t, 2, 2, 2, 1, 4, threaded)
		s.unchainedSlots = true
		_, races = runOn(t, w.Program, s)
		assert.NotEmpty(t, races, "threaded=%v: unordered slots race on the worker's buffers", threaded)
		s = newMultiSET(t, 4, 2, 2, 1, 4, threaded)
		s.shareSlots = true
		_, races = runOn(t, w.Program, s)
		assert.NotEmpty(t, races, "threaded=%v: workers sharing buffers race", threaded)
	}
}

// TestSETUnchainedSlotsNeedsAChain: the chain's negative control is
// refused without several jobs per launch.
func TestSETUnchainedSlotsNeedsAChain(t *testing.T) {
	w, err := jobs.GEMM(jobs.GEMMParams{Jobs: 4, Size: 32}, 1)
	require.NoError(t, err)
	s := newRingSET(t, 2, 1, 1, 1, false)
	s.unchainedSlots = true
	_, err = onBound(t, w.Program, func(h device.Host, in *workloads.Instance) error { return s.Prepare(h, in) })
	assert.ErrorContains(t, err, "unchainedSlots needs several jobs per launch")
}

func TestSETJobsPerLaunchName(t *testing.T) {
	assert.Equal(t, "set(b=4,depth=2,ring=2,threaded,jobs=4)", newMultiSET(t, 4, 2, 2, 1, 4, true).Name())
	assert.Equal(t, "set(b=8,depth=2,ring=2,coalesce=2,jobs=8)", newMultiSET(t, 8, 2, 2, 2, 8, false).Name())
	assert.Equal(t, "set(b=2,depth=2,ring=2)", newMultiSET(t, 2, 2, 2, 1, 1, false).Name(), "one job per launch: today's SET-ring")
}

func TestSETJobsPerLaunchIsDeterministic(t *testing.T) {
	w, err := jobs.KNN(jobs.KNNParams{Jobs: 27, Points: 1024, Queries: 4, Dims: 4, K: 4}, 1)
	require.NoError(t, err)
	assertDeterministic(t, w.Program, func() metricser { return newMultiSET(t, 3, 2, 2, 1, 4, true) })
}

func TestSETJobsPerLaunchPrepareAndCleanupWithoutRun(t *testing.T) {
	w, err := jobs.GEMM(jobs.GEMMParams{Jobs: 7, Size: 32}, 1)
	require.NoError(t, err)
	for _, threaded := range []bool{false, true} {
		s := newMultiSET(t, 3, 2, 2, 1, 4, threaded)
		dev, err := sim.NewNamed("h100")
		require.NoError(t, err)
		err = dev.Run(func(h device.Host) error {
			in, err := workloads.Bind(h, w.Program)
			if err != nil {
				return err
			}
			defer func() { assert.NoError(t, in.Release(h)) }()
			if err := s.Prepare(h, in); err != nil {
				return err
			}
			for _, wk := range s.workers {
				require.Len(t, wk.ring, 2)
				for _, sl := range wk.ring {
					require.Len(t, sl.execs, 4, "a chain of every length from 1 to J per ring position")
					for n, x := range sl.execs {
						assert.Len(t, sl.cur[n], n+1)
						assert.NotNil(t, x)
					}
				}
			}
			return s.Cleanup(h)
		})
		assert.NoError(t, err, "threaded=%v: every exec released and no host thread left blocked", threaded)
		assert.NoError(t, dev.Close())
	}
}
