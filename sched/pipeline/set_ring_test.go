package pipeline

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

// inFlightGuard wraps a Host (and the hosts of the threads it starts) and
// records every graph-exec node update made while a launch of that exec may
// still be running: behind every graph launch it enqueues a callback that
// marks the launch complete. Callbacks run in stream order on one driver
// thread, so this marker runs before any completion callback a scheduler
// enqueues after the launch: a scheduler that waits for its own callback
// never sees a launch complete that the guard still counts.
type inFlightGuard struct {
	device.Host
	st *guardState
}

type guardState struct {
	mu       sync.Mutex
	pending  map[device.GraphExec]int
	launches int
	updates  int
	inFlight []string // updates of execs with launches pending
}

func newGuard(h device.Host) *inFlightGuard {
	return &inFlightGuard{Host: h, st: &guardState{pending: map[device.GraphExec]int{}}}
}

func (g *inFlightGuard) Go(name string, fn func(h device.Host) error) {
	g.Host.Go(name, func(h device.Host) error { return fn(&inFlightGuard{Host: h, st: g.st}) })
}

func (g *inFlightGuard) GraphLaunch(x device.GraphExec, s device.Stream) error {
	if err := g.Host.GraphLaunch(x, s); err != nil {
		return err
	}
	st := g.st
	st.mu.Lock()
	st.pending[x]++
	st.launches++
	st.mu.Unlock()
	return g.HostFunc(s, func() {
		st.mu.Lock()
		st.pending[x]--
		st.mu.Unlock()
	})
}

func (g *inFlightGuard) update(x device.GraphExec, node int) {
	st := g.st
	st.mu.Lock()
	defer st.mu.Unlock()
	st.updates++
	if n := st.pending[x]; n > 0 {
		st.inFlight = append(st.inFlight, fmt.Sprintf("node %d of an exec with %d launches in flight", node, n))
	}
}

func (g *inFlightGuard) SetCopyNode(x device.GraphExec, node int, c *device.Copy) error {
	g.update(x, node)
	return g.Host.SetCopyNode(x, node, c)
}

func (g *inFlightGuard) SetKernelNode(x device.GraphExec, node int, l *device.Launch) error {
	g.update(x, node)
	return g.Host.SetKernelNode(x, node, l)
}

// runGuarded runs s as runOn does, with the scheduler's host calls seen by
// an inFlightGuard.
func runGuarded(t *testing.T, p *workloads.Program, s *SET) (map[string]float64, []device.Race, *guardState) {
	t.Helper()
	var st *guardState
	m, races := runWrapped(t, p, s, func(h device.Host) device.Host {
		g := newGuard(h)
		st = g.st
		return g
	})
	return m, races, st
}

func newRingSET(t *testing.T, b, depth, ring, coalesce int, threaded bool) *SET {
	t.Helper()
	return newSET(t, multiParams(b, depth, ring, coalesce, 1, threaded))
}

func TestSETRingNeverUpdatesAnExecInFlight(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 48, Size: 128}, 1)
	require.NoError(t, err)
	tests := []struct {
		name                   string
		depth, ring, coalesce  int
		threaded, shareOneExec bool
	}{
		{name: "dispatcher, ring 2", depth: 2, ring: 2, coalesce: 1},
		{name: "dispatcher, ring 4, coalesce 2", depth: 4, ring: 4, coalesce: 2},
		{name: "dispatcher, ring 3, depth 2 (a spare exec)", depth: 2, ring: 3, coalesce: 2},
		{name: "threaded, ring 4, coalesce 2", depth: 4, ring: 4, coalesce: 2, threaded: true},
		{name: "threaded, ring 4, coalesce 4", depth: 4, ring: 4, coalesce: 4, threaded: true},
		{name: "threaded, ring 3, depth 2", depth: 2, ring: 3, coalesce: 1, threaded: true},
		// Negative control: one exec per worker with several jobs in
		// flight (SET+ without a ring) updates execs in flight.
		{name: "no ring, depth 4 (negative control)", depth: 4, coalesce: 2, threaded: true, shareOneExec: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRingSET(t, 4, tt.depth, tt.ring, tt.coalesce, tt.threaded)
			m, races, st := runGuarded(t, w.Program, s)
			assert.Empty(t, races)
			assert.Equal(t, 48, st.launches, "one graph launch per job")
			assert.Equal(t, float64(st.updates), m["node_updates"], "Metrics counts every update made")
			if tt.shareOneExec {
				assert.NotEmpty(t, st.inFlight, "the guard sees updates of execs in flight")
				return
			}
			assert.Empty(t, st.inFlight, "an exec is prepared only once its launch is known complete")
			assert.Positive(t, st.updates)
		})
	}
}

func TestSETRingMetrics(t *testing.T) {
	w, err := jobs.SSSP(jobs.SSSPParams{Jobs: 32, Vertices: 1024, Degree: 4, Iterations: 4}, 1)
	require.NoError(t, err)
	for _, threaded := range []bool{false, true} {
		t.Run(fmt.Sprintf("threaded=%v", threaded), func(t *testing.T) {
			s := newRingSET(t, 4, 3, 4, 3, threaded)
			m, races := runOn(t, w.Program, s)
			require.Empty(t, races)
			// (Workers that finish their own queues first may steal a few
			// of the last jobs; a stolen job too changes two copy nodes.)
			assert.LessOrEqual(t, m["steals"], 4.0)
			ops := float64(len(w.Program.Steps[0].Ops))
			assert.Equal(t, 32*ops, m["node_updates"]+m["node_updates_skipped"], "every node of every job checked once")
			// Like the paper's SET: only the two copy nodes change, and
			// not for each worker's first job, captured into exec 0.
			assert.Equal(t, 2*(32-4.0), m["node_updates"])
			assert.Zero(t, m["syncs"])
			assert.Positive(t, m["t_schedule_s"])
			assert.Positive(t, m["t_wait_s"], "the host waits for completion callbacks")
			assert.Greater(t, m["schedule_share"], 0.0)
			assert.LessOrEqual(t, m["schedule_share"], 1.0)
			want := 1.0
			if threaded {
				want = 4
			}
			assert.Equal(t, want, m["host_threads"])
		})
	}
}

func TestSETRingStealsAndRetargetsWithoutRaces(t *testing.T) {
	tests := []struct {
		name                  string
		jobs, b               int
		depth, ring, coalesce int
		threaded              bool
		dealTo                func(j int) int
	}{
		{"dispatcher, all to worker 0", 16, 4, 2, 2, 1, false, func(int) int { return 0 }},
		{"dispatcher, coalesced, most to the last worker", 20, 3, 4, 4, 2, false, func(j int) int { return min(j%4, 2) }},
		{"dispatcher, spare exec, all to worker 1", 16, 3, 2, 3, 2, false, func(int) int { return 1 }},
		{"threaded, all to worker 0", 16, 4, 2, 2, 1, true, func(int) int { return 0 }},
		{"threaded, coalesced, most to the last worker", 20, 3, 4, 4, 2, true, func(j int) int { return min(j%4, 2) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := jobs.Hotspot(jobs.HotspotParams{Jobs: tt.jobs, Size: 256, Iterations: 4}, 1)
			require.NoError(t, err)
			s := newRingSET(t, tt.b, tt.depth, tt.ring, tt.coalesce, tt.threaded)
			s.dealTo = tt.dealTo
			m, races, st := runGuarded(t, w.Program, s)
			assert.Empty(t, races, "stolen jobs run in the thief's buffers")
			assert.Empty(t, st.inFlight, "stolen jobs too are prepared into completed execs only")
			assert.Positive(t, m["steals"], "idle workers take queued jobs from a peer")
			assert.Equal(t, tt.jobs, st.launches)
			// Retargeted into the thief's buffers, a stolen job's kernel
			// nodes already hold its parameters: only copy nodes change.
			ops := float64(len(w.Program.Steps[0].Ops))
			assert.Equal(t, float64(tt.jobs)*ops, m["node_updates"]+m["node_updates_skipped"])
			assert.LessOrEqual(t, m["node_updates"], 2*float64(tt.jobs))
		})
	}
}

// TestRaceCheckerCatchesUnorderedRingExecs is the ring's negative control:
// a worker's execs share its buffers and are safe only because its one
// stream runs them in order; on a stream each, jobs in flight overlap.
func TestRaceCheckerCatchesUnorderedRingExecs(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 16, Size: 512}, 1)
	require.NoError(t, err)
	for _, threaded := range []bool{false, true} {
		s := newRingSET(t, 2, 4, 4, 1, threaded)
		_, races := runOn(t, w.Program, s)
		require.Empty(t, races, "one stream per worker: no races")
		s = newRingSET(t, 2, 4, 4, 1, threaded)
		s.streamPerExec = true
		_, races = runOn(t, w.Program, s)
		assert.NotEmpty(t, races, "threaded=%v: execs on their own streams race on the worker's buffers", threaded)
	}
	// And workers sharing buffers are caught with rings as without.
	s := newRingSET(t, 4, 2, 2, 1, false)
	s.shareSlots = true
	_, races := runOn(t, w.Program, s)
	assert.NotEmpty(t, races)
}

func TestSETRingName(t *testing.T) {
	s := newRingSET(t, 4, 3, 4, 3, true)
	assert.Equal(t, "set(b=4,depth=3,ring=4,threaded,coalesce=3)", s.Name())
	s = newRingSET(t, 2, 2, 2, 1, false)
	assert.Equal(t, "set(b=2,depth=2,ring=2)", s.Name())
}
