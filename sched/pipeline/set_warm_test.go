package pipeline

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

// launchCounter wraps a Host (and the hosts of the threads it starts) and
// counts instantiations, graph launches and host copies.
type launchCounter struct {
	device.Host
	st *launchCounts
}

type launchCounts struct {
	mu                             sync.Mutex
	instantiated, launches, copies int
}

func (c *launchCounter) Go(name string, fn func(h device.Host) error) {
	c.Host.Go(name, func(h device.Host) error { return fn(&launchCounter{Host: h, st: c.st}) })
}

func (c *launchCounter) Instantiate(g device.Graph) (device.GraphExec, error) {
	c.st.mu.Lock()
	c.st.instantiated++
	c.st.mu.Unlock()
	return c.Host.Instantiate(g)
}

func (c *launchCounter) GraphLaunch(x device.GraphExec, s device.Stream) error {
	c.st.mu.Lock()
	c.st.launches++
	c.st.mu.Unlock()
	return c.Host.GraphLaunch(x, s)
}

func (c *launchCounter) Copy(s device.Stream, cp *device.Copy) error {
	if cp.Kind != device.DeviceToDevice {
		c.st.mu.Lock()
		c.st.copies++
		c.st.mu.Unlock()
	}
	return c.Host.Copy(s, cp)
}

// runCounted runs s as runOn does, counting its host calls, with a parked
// wake that does not grow with the idle before it: the warm-up moves when
// the threads last ran, which changes what their deeper park costs
// (host.parked_wake_per_decade_ns, front_end.callback_parked_wake_per_decade_ns)
// and nothing else the tests below compare.
func runCounted(t *testing.T, s *SET, w *jobs.Workload) (map[string]float64, []device.Race, *launchCounts) {
	t.Helper()
	st := &launchCounts{}
	flat := func(c *sim.Config) { c.Host.ParkedWakePerDecadeNs, c.FrontEnd.CallbackParkedWakePerDecadeNs = 0, 0 }
	m, races := runWrappedWith(t, flat, w.Program, s, func(h device.Host) device.Host { return &launchCounter{Host: h, st: st} })
	return m, races, st
}

// setVariants are every SET of allSchedulers (the paper's, SET+, threaded,
// SET-kgraph, the rings, SET-chain, SET-batch), made fresh.
func setVariants(t *testing.T, b int) []*SET {
	var out []*SET
	for _, s := range allSchedulers(t, b) {
		if set, ok := s.(*SET); ok {
			out = append(out, set)
		}
	}
	return out
}

// TestSETWarmLaunchesEveryExecOnceBeforeRun: with Warm, Prepare launches
// every exec once (SET-kgraph: one whole job per worker) and waits for it;
// Run is then race-free and, on the simulator, measures what it measures
// without the warm-up (the same counts; times within 2 ns).
func TestSETWarmLaunchesEveryExecOnceBeforeRun(t *testing.T) {
	const n, b = 10, 4
	for _, w := range testWorkloads(t, n) {
		cold, warm := setVariants(t, b), setVariants(t, b)
		for i := range cold {
			warm[i].p.Warm = true
			t.Run(w.Program.Name+"/"+cold[i].Name(), func(t *testing.T) {
				mc, racesC, cc := runCounted(t, cold[i], w)
				mw, racesW, cw := runCounted(t, warm[i], w)
				require.Empty(t, racesC)
				assert.Empty(t, racesW, "warm-up launches are synchronized before Run")
				assert.Equal(t, cc.instantiated, cw.instantiated, "the same execs")
				if warm[i].p.Copies == CopiesStream {
					assert.Equal(t, cc.launches+b, cw.launches, "one warm-up job per worker")
					assert.Equal(t, cc.copies+b*hostCopies(w.Program), cw.copies, "the warm-up job's copies")
				} else {
					assert.Equal(t, cc.launches+cc.instantiated, cw.launches, "every exec launched once more")
					assert.Equal(t, cc.copies, cw.copies)
				}
				assertSameRun(t, mc, mw)
			})
		}
	}
}

// assertSameRun checks that two runs' metrics agree: counts exactly, times
// within 2 ns for the makespan (the simulator rounds picoseconds to whole
// nanoseconds, so a run that starts at another time can differ by one) and
// within 0.1% for the sums of many calls' times and what derives from them.
func assertSameRun(t *testing.T, want, got map[string]float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for k, v := range want {
		switch k {
		case "makespan_s":
			assert.InDelta(t, v, got[k], 2e-9, k)
		case "jobs_per_s", "schedule_share", "t_schedule_s", "t_wait_s",
			"graph_launch_ns_per_launch", "node_update_ns_per_update", "host_func_ns_per_call":
			// Sums of many host calls' and waits' times, over every
			// host thread: a nanosecond each.
			assert.InEpsilon(t, v, got[k], 1e-3, k)
		default:
			assert.Equal(t, v, got[k], k)
		}
	}
}

// TestSETWarmBatchedCoversCapturedChunks: a SET-batch exec's warm-up
// launch copies in and out exactly the chunk it was captured with (the
// tracker checks every launch's copy nodes against whole jobs), and Run
// then copies every job in and out once more.
func TestSETWarmBatchedCoversCapturedChunks(t *testing.T) {
	const n = 29
	w, err := jobs.Hotspot(jobs.HotspotParams{Jobs: n, Size: 256, Iterations: 4}, 1)
	require.NoError(t, err)
	for _, threaded := range []bool{false, true} {
		for _, J := range []int{4, 8} {
			s := newBatchSET(t, 3, 2, J, threaded)
			s.p.Warm = true
			m, races, tr, g := runTracked(t, w.Program, s)
			assert.Empty(t, races)
			assert.Empty(t, g.inFlight)
			assert.Empty(t, tr.problems, "every warm-up launch copies whole jobs")
			execs := 3 * 2 * J
			chunks := (n + J - 1) / J
			assert.Equal(t, chunks+execs, tr.launches, "one warm-up launch per exec, one launch per chunk")
			for j := range tr.in {
				assert.GreaterOrEqual(t, tr.in[j], 1, "job %d", j)
				assert.GreaterOrEqual(t, tr.out[j], 1, "job %d", j)
			}
			assert.Equal(t, float64(n), m["jobs"])
			assert.Equal(t, "set(b=3,depth=2,ring=2"+map[bool]string{true: ",threaded", false: ""}[threaded]+",jobs="+map[int]string{4: "4", 8: "8"}[J]+",copies=batched,warm)", s.Name())
		}
	}
}

// TestRaceCheckerStillCatchesUnsafeSETsWhenWarm: the warm-up does not hide
// the negative controls' races.
func TestRaceCheckerStillCatchesUnsafeSETsWhenWarm(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 24, Size: 512}, 1)
	require.NoError(t, err)
	for _, threaded := range []bool{false, true} {
		s := newBatchSET(t, 2, 2, 4, threaded)
		s.p.Warm, s.streamPerExec = true, true
		_, races := runOn(t, w.Program, s)
		assert.NotEmpty(t, races, "threaded=%v: batch execs on their own streams", threaded)
		s = newMultiSET(t, 2, 2, 2, 1, 4, threaded)
		s.p.Warm, s.unchainedSlots = true, true
		_, races = runOn(t, w.Program, s)
		assert.NotEmpty(t, races, "threaded=%v: unchained slots", threaded)
		s = newRingSET(t, 4, 2, 2, 1, threaded)
		s.p.Warm, s.shareSlots = true, true
		_, races = runOn(t, w.Program, s)
		assert.NotEmpty(t, races, "threaded=%v: workers sharing buffers", threaded)
	}
}

func TestSETWarmPrepareAndCleanupWithoutRun(t *testing.T) {
	w, err := jobs.GEMM(jobs.GEMMParams{Jobs: 7, Size: 32}, 1)
	require.NoError(t, err)
	for _, s := range setVariants(t, 3) {
		s.p.Warm = true
		_, err := onBound(t, w.Program, func(h device.Host, in *workloads.Instance) error {
			if err := s.Prepare(h, in); err != nil {
				return err
			}
			return s.Cleanup(h)
		})
		assert.NoError(t, err, s.Name())
	}
}
