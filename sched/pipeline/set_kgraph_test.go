package pipeline

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

func newKGraphSET(t *testing.T, b, depth, coalesce int, threaded bool) *SET {
	t.Helper()
	return newSET(t, kgraphParams(b, depth, coalesce, threaded))
}

// kgraphParams is SET-kgraph: copies on the stream.
func kgraphParams(b, depth, coalesce int, threaded bool) Params {
	return with(setParams(b, depth), func(p *Params) {
		p.Coalesce, p.Threaded, p.Copies = coalesce, threaded, CopiesStream
	})
}

// copyCounter wraps a Host (and its threads' hosts) and counts the stream
// copies issued outside graph capture.
type copyCounter struct {
	device.Host
	copies *int
}

func (c *copyCounter) Go(name string, fn func(h device.Host) error) {
	c.Host.Go(name, func(h device.Host) error { return fn(&copyCounter{Host: h, copies: c.copies}) })
}

func (c *copyCounter) Copy(s device.Stream, cp *device.Copy) error {
	*c.copies++ // the simulator runs one host thread at a time
	return c.Host.Copy(s, cp)
}

// hostCopies counts a job's host-to-device and device-to-host copies.
func hostCopies(p *workloads.Program) int {
	n := 0
	for _, op := range p.Steps[0].Ops {
		if op.Kind == workloads.OpCopy && op.Copy.Kind != device.DeviceToDevice {
			n++
		}
	}
	return n
}

func TestSETStreamCopiesRunsWithoutRaces(t *testing.T) {
	tests := []struct {
		name                   string
		jobs, b, depth, coales int
		threaded               bool
		dealTo                 func(j int) int
	}{
		{name: "dispatcher, depth 1", jobs: 37, b: 3, depth: 1, coales: 1},
		{name: "dispatcher, depth 4", jobs: 37, b: 4, depth: 4, coales: 1},
		{name: "threaded, depth 2", jobs: 37, b: 4, depth: 2, coales: 1, threaded: true},
		{name: "threaded, depth 4, coalesce 2", jobs: 37, b: 4, depth: 4, coales: 2, threaded: true},
		// Forced steals with several jobs in flight per worker.
		{name: "dispatcher, depth 3, all to worker 0", jobs: 30, b: 4, depth: 3, coales: 1, dealTo: func(int) int { return 0 }},
		{name: "threaded, depth 4, coalesce 2, all to worker 1", jobs: 30, b: 4, depth: 4, coales: 2, threaded: true, dealTo: func(int) int { return 1 }},
		{name: "threaded, depth 2, most to the last worker", jobs: 29, b: 3, depth: 2, coales: 2, threaded: true, dealTo: func(j int) int { return min(j%4, 2) }},
	}
	for _, tt := range raceCases(tests) {
		t.Run(tt.name, func(t *testing.T) {
			w, err := jobs.Hotspot(jobs.HotspotParams{Jobs: tt.jobs, Size: 256, Iterations: 4}, 1)
			require.NoError(t, err)
			s := newKGraphSET(t, tt.b, tt.depth, tt.coales, tt.threaded)
			s.dealTo = tt.dealTo
			s.p.Gaps = true // every job's timing events must be recorded
			m, races, st := runGuarded(t, w.Program, s)
			assert.Empty(t, races, "a worker's jobs share its buffers in stream order; stolen jobs run in the thief's")
			assert.Equal(t, tt.jobs, st.launches, "one kernel graph launch per job")
			assert.Zero(t, st.updates, "the kernel graph is never updated")
			assert.Zero(t, m["node_updates"])
			assert.Zero(t, m["node_updates_skipped"], "no node is even compared: the copies are not nodes")
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

// TestSETStreamCopiesIssuesTheCopiesOnTheStream: each job's host copies
// are stream operations (2 per job here), its kernels one graph launch, and
// their host time is scheduling time.
func TestSETStreamCopiesIssuesTheCopiesOnTheStream(t *testing.T) {
	w, err := jobs.SSSP(jobs.SSSPParams{Jobs: 24, Vertices: 1024, Degree: 4, Iterations: 4}, 1)
	require.NoError(t, err)
	per := hostCopies(w.Program)
	require.Positive(t, per)
	for _, threaded := range []bool{false, true} {
		copies := 0
		s := newKGraphSET(t, 4, 2, 1, threaded)
		dev, err := sim.NewNamed("h100")
		require.NoError(t, err)
		err = dev.Run(func(h device.Host) error {
			in, err := workloads.Bind(h, w.Program)
			if err != nil {
				return err
			}
			defer func() { assert.NoError(t, in.Release(h)) }()
			// The worker threads start in Prepare: they get the counting
			// host too. Prepare's capture holds no host copies.
			counted := &copyCounter{Host: h, copies: &copies}
			if err := s.Prepare(counted, in); err != nil {
				return err
			}
			for _, wk := range s.workers {
				require.NotNil(t, wk.exec, "every worker has its kernel graph")
			}
			if err := h.Synchronize(); err != nil {
				return err
			}
			if err := s.Run(counted, in); err != nil {
				return err
			}
			return s.Cleanup(h)
		})
		require.NoError(t, err)
		assert.Empty(t, dev.Races())
		assert.NoError(t, dev.Close())
		assert.Equal(t, 24*per, copies, "threaded=%v: every job's host copies issued on its worker's stream", threaded)
		// No node is ever updated, where the same SET with the copies in
		// its graphs updates them per job.
		kg := s.Metrics()
		paper := newSET(t, with(kgraphParams(4, 2, 1, threaded), func(p *Params) { p.Copies = CopiesGraph }))
		pm, races := runOn(t, w.Program, paper)
		require.Empty(t, races)
		assert.Greater(t, kg["t_schedule_s"], 0.0)
		assert.Positive(t, pm["node_updates"], "the comparison's graphs are updated per job")
		assert.Zero(t, kg["node_updates"])
		assert.Equal(t, 24.0, kg["jobs"])
	}
}

// TestRaceCheckerCatchesKGraphWorkersSharingBuffers: workers sharing one
// set of buffers (their kernel graphs over the same memory, their jobs on
// different streams) race, and the checker sees it.
func TestRaceCheckerCatchesKGraphWorkersSharingBuffers(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 24, Size: 512}, 1)
	require.NoError(t, err)
	for _, threaded := range []bool{false, true} {
		_, races := runOn(t, w.Program, newKGraphSET(t, 4, 2, 1, threaded))
		require.Empty(t, races, "threaded=%v: private buffers: no races", threaded)
		s := newKGraphSET(t, 4, 2, 1, threaded)
		s.shareSlots = true
		_, races = runOn(t, w.Program, s)
		assert.NotEmpty(t, races, "threaded=%v: workers sharing buffers race", threaded)
	}
}

func TestSETStreamCopiesBadPrograms(t *testing.T) {
	copyBetweenKernels := program(func(p *workloads.Program) {
		for j := range p.Steps {
			ops := p.Steps[j].Ops
			p.Steps[j].Ops = []workloads.Op{ops[0], ops[1], ops[2], ops[1]} // a kernel after the copy-out
		}
	})
	noKernels := program(func(p *workloads.Program) {
		for j := range p.Steps {
			ops := p.Steps[j].Ops
			p.Steps[j].Ops = []workloads.Op{ops[0], ops[2]}
			p.Steps[j].Ops[1].Copy.Src = p.Steps[j].Ops[0].Copy.Dst
		}
	})
	perJobScalar := program(func(p *workloads.Program) {
		for j := range p.Steps {
			p.Steps[j].Ops[1].Args = append(p.Steps[j].Ops[1].Args, workloads.F32Arg(float32(j)))
		}
	})
	tests := []struct {
		name    string
		s       *SET
		p       *workloads.Program
		wantErr string
	}{
		{"a host copy between kernels", newKGraphSET(t, 2, 1, 1, false), copyBetweenKernels, "operation 2 (out) is a DtoH copy between kernels"},
		{"no kernels", newKGraphSET(t, 2, 1, 1, false), noKernels, "need at least one kernel per job"},
		{"per-job kernel scalars", newKGraphSET(t, 1, 1, 1, false), perJobScalar, "job 1's operation 1 (k) has parameters other than job 0's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev, err := sim.NewNamed("h100")
			require.NoError(t, err)
			defer func() { assert.NoError(t, dev.Close()) }()
			err = dev.Run(func(h device.Host) error {
				in, err := workloads.Bind(h, tt.p)
				if err != nil {
					return err
				}
				defer func() { assert.NoError(t, in.Release(h)) }()
				return errors.Join(tt.s.Prepare(h, in), tt.s.Cleanup(h))
			})
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestSETStreamCopiesName(t *testing.T) {
	assert.Equal(t, "set(b=4,depth=4,threaded,coalesce=2,copies=stream)", newKGraphSET(t, 4, 4, 2, true).Name())
	assert.Equal(t, "set(b=2,copies=stream)", newKGraphSET(t, 2, 1, 1, false).Name())
}

func TestSETStreamCopiesIsDeterministic(t *testing.T) {
	w, err := jobs.KNN(jobs.KNNParams{Jobs: 27, Points: 1024, Queries: 4, Dims: 4, K: 4}, 1)
	require.NoError(t, err)
	assertDeterministic(t, w.Program, func() metricser {
		s := newKGraphSET(t, 3, 4, 2, true)
		s.dealTo = func(j int) int { return min(j%4, 2) }
		return s
	})
}
