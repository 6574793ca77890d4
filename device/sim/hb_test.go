package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// hbKernels are a 100 us writer of x and a 10 us reader of x: every
// program below runs the reader long after the writer has finished, so the
// overlap sweep alone never reports them; only ordering tells a correct
// program from a broken one.
func hbKernels(x device.Buffer) (writer, reader *device.Launch) {
	writer = spinLaunch(1, 32, 100*time.Microsecond)
	writer.Label, writer.Args = "writer", []device.Arg{device.Out(x)}
	reader = spinLaunch(1, 32, 10*time.Microsecond)
	reader.Label, reader.Args = "reader", []device.Arg{device.In(x)}
	return writer, reader
}

// hbSetup allocates x and two streams.
func hbSetup(t *testing.T, h device.Host) (x device.Buffer, a, b device.Stream) {
	x, err := h.Malloc(1 << 20)
	require.NoError(t, err)
	a, err = h.NewStream(device.StreamOptions{})
	require.NoError(t, err)
	b, err = h.NewStream(device.StreamOptions{})
	require.NoError(t, err)
	return x, a, b
}

// captureGraph captures on s0 a graph of the writer on s0 and, on a forked
// s1, a 1 ms delay then the reader; with edge, the reader also waits on the
// writer.
func captureGraph(t *testing.T, h device.Host, x device.Buffer, s0, s1 device.Stream, edge bool) device.GraphExec {
	writer, reader := hbKernels(x)
	delay := spinLaunch(1, 32, time.Millisecond)
	delay.Label = "delay"
	fork, _ := h.NewEvent(device.EventOptions{})
	wrote, _ := h.NewEvent(device.EventOptions{})
	join, _ := h.NewEvent(device.EventOptions{})
	require.NoError(t, h.BeginCapture(s0))
	require.NoError(t, h.Record(fork, s0))
	require.NoError(t, h.Wait(s1, fork))
	require.NoError(t, h.Launch(s0, writer))
	require.NoError(t, h.Record(wrote, s0))
	require.NoError(t, h.Launch(s1, delay))
	if edge {
		require.NoError(t, h.Wait(s1, wrote))
	}
	require.NoError(t, h.Launch(s1, reader))
	require.NoError(t, h.Record(join, s1))
	require.NoError(t, h.Wait(s0, join))
	g, err := h.EndCapture(s0)
	require.NoError(t, err)
	gx, err := h.Instantiate(g)
	require.NoError(t, err)
	return gx
}

func TestOrderingRaceCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		// races is the number of races reported; all of them are unordered
		// pairs that did not overlap in time.
		races int
		prog  func(t *testing.T, h device.Host) error
	}{
		{"unordered, apart in time by host timing only", 1, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			require.NoError(t, h.Launch(a, w))
			h.Spend(time.Millisecond)
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"event record then wait", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			e, _ := h.NewEvent(device.EventOptions{})
			require.NoError(t, h.Launch(a, w))
			require.NoError(t, h.Record(e, a))
			require.NoError(t, h.Wait(b, e))
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"wait bound to an earlier record of the event", 1, func(t *testing.T, h device.Host) error {
			// The event is recorded before the writer: waiting on it
			// orders nothing (the wrong-event mutation).
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			e, _ := h.NewEvent(device.EventOptions{})
			require.NoError(t, h.Record(e, a))
			require.NoError(t, h.Launch(a, w))
			require.NoError(t, h.Wait(b, e))
			h.Spend(time.Millisecond)
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"StreamSynchronize", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			require.NoError(t, h.Launch(a, w))
			require.NoError(t, h.StreamSynchronize(a))
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"StreamSynchronize of the wrong stream", 1, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			require.NoError(t, h.Launch(a, w))
			require.NoError(t, h.StreamSynchronize(b))
			h.Spend(time.Millisecond)
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"EventSynchronize", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			e, _ := h.NewEvent(device.EventOptions{})
			require.NoError(t, h.Launch(a, w))
			require.NoError(t, h.Record(e, a))
			require.NoError(t, h.EventSynchronize(e))
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"Synchronize", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			require.NoError(t, h.Launch(a, w))
			require.NoError(t, h.Synchronize())
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"Query returning true", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			e, _ := h.NewEvent(device.EventOptions{})
			require.NoError(t, h.Launch(a, w))
			require.NoError(t, h.Record(e, a))
			h.Spend(time.Millisecond)
			done, err := h.Query(e)
			require.NoError(t, err)
			require.True(t, done)
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"queue Put after a sync, Get on another host thread", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			q := h.NewQueue("done")
			h.Go("producer", func(p device.Host) error {
				require.NoError(t, p.Launch(a, w))
				require.NoError(t, p.StreamSynchronize(a))
				q.Put(1)
				return nil
			})
			_, ok := h.Get(q)
			require.True(t, ok)
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"queue Put without a sync", 1, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			q := h.NewQueue("issued")
			h.Go("producer", func(p device.Host) error {
				require.NoError(t, p.Launch(a, w))
				q.Put(1)
				return nil
			})
			_, ok := h.Get(q)
			require.True(t, ok)
			h.Spend(time.Millisecond)
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"queue Close after a sync, Get finds it closed", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			q := h.NewQueue("closed")
			h.Go("producer", func(p device.Host) error {
				require.NoError(t, p.Launch(a, w))
				require.NoError(t, p.StreamSynchronize(a))
				q.Close()
				return nil
			})
			_, ok := h.Get(q)
			require.False(t, ok)
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"Go after a sync", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			require.NoError(t, h.Launch(a, w))
			require.NoError(t, h.StreamSynchronize(a))
			h.Go("reader", func(c device.Host) error { return c.Launch(b, r) })
			return nil
		}},
		{"host callback puts to a queue", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			w, r := hbKernels(x)
			q := h.NewQueue("callback")
			require.NoError(t, h.Launch(a, w))
			require.NoError(t, h.HostFunc(a, func() { q.Put(1) }))
			_, ok := h.Get(q)
			require.True(t, ok)
			require.NoError(t, h.Launch(b, r))
			return h.Synchronize()
		}},
		{"graph with the edge, then stream order", 0, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			gx := captureGraph(t, h, x, a, b, true)
			require.NoError(t, h.GraphLaunch(gx, a))
			w, _ := hbKernels(x)
			require.NoError(t, h.Launch(a, w)) // after the whole graph
			return h.Synchronize()
		}},
		{"one graph exec launched on two streams", 0, func(t *testing.T, h device.Host) error {
			// cudaGraphLaunch orders a launch behind the exec's previous one.
			x, a, b := hbSetup(t, h)
			gx := captureGraph(t, h, x, a, b, true)
			require.NoError(t, h.GraphLaunch(gx, a))
			require.NoError(t, h.GraphLaunch(gx, b))
			return h.Synchronize()
		}},
		{"graph missing the edge", 1, func(t *testing.T, h device.Host) error {
			x, a, b := hbSetup(t, h)
			gx := captureGraph(t, h, x, a, b, false)
			require.NoError(t, h.GraphLaunch(gx, a))
			return h.Synchronize()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newH100(t)
			require.NoError(t, d.Run(func(h device.Host) error { return tc.prog(t, h) }))
			races := d.Races()
			require.Len(t, races, tc.races, "%+v", races)
			assert.Equal(t, tc.races, d.Stats().Races)
			for _, r := range races {
				assert.True(t, r.Unordered, "%+v", r)
				assert.LessOrEqual(t, r.A.End, r.B.Start, "the pair ran apart in time")
				assert.ElementsMatch(t, []string{"writer", "reader"}, []string{r.A.Name, r.B.Name})
			}
			// The overlap sweep alone sees nothing in any of them.
			o := newH100(t, WithRaceMode(RaceOverlap))
			require.NoError(t, o.Run(func(h device.Host) error { return tc.prog(t, h) }))
			assert.Empty(t, o.Races())
		})
	}
}

// Kernels that overlap in time are reported once, as overlapping, not again
// as unordered.
func TestOverlapReportedOnce(t *testing.T) {
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		x, a, b := hbSetup(t, h)
		w, r := hbKernels(x)
		require.NoError(t, h.Launch(a, w))
		require.NoError(t, h.Launch(b, r))
		return h.Synchronize()
	}))
	races := d.Races()
	require.Len(t, races, 1)
	assert.False(t, races[0].Unordered)
}

func TestDependencyQueueOrdering(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dep   bool
		races int
	}{{"listed upstream", true, 0}, {"upstream left out", false, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			d := newH100(t, WithDependencyQueue(true))
			require.NoError(t, d.Run(func(h device.Host) error {
				q := h.(device.DependencyQueue)
				x, err := h.Malloc(1 << 20)
				require.NoError(t, err)
				w, r := hbKernels(x)
				iw, err := q.DQSubmit(w, nil)
				require.NoError(t, err)
				h.Spend(time.Millisecond)
				var deps []uint64
				if tc.dep {
					deps = []uint64{iw}
				}
				_, err = q.DQSubmit(r, deps)
				require.NoError(t, err)
				return q.DQSynchronize()
			}))
			require.Len(t, d.Races(), tc.races)
		})
	}
}

func TestRaceModes(t *testing.T) {
	_, err := NewNamed("h100", WithRaceMode(RaceMode(9)))
	require.Error(t, err)
	prog := func(h device.Host) error {
		x, a, b := hbSetup(t, h)
		w, r := hbKernels(x)
		require.NoError(t, h.Launch(a, w))
		h.Spend(time.Millisecond)
		require.NoError(t, h.Launch(b, r))
		return h.Synchronize()
	}
	for _, tc := range []struct {
		opt   Option
		races int
	}{{WithRaceMode(RaceOrder), 1}, {WithRaceMode(RaceOverlap), 0}, {WithRaceMode(RaceOff), 0}, {WithRaceCheck(false), 0}, {WithRaceCheck(true), 1}} {
		d := newH100(t, tc.opt)
		require.NoError(t, d.Run(prog))
		assert.Len(t, d.Races(), tc.races)
	}
}

// Pooled agents are reused by operations ordered after their last one, so
// the vector clocks stay as long as the concurrency, not the run.
func TestOrderingAgentsStayBounded(t *testing.T) {
	t.Run("graph launched many times", func(t *testing.T) {
		d := newH100(t)
		require.NoError(t, d.Run(func(h device.Host) error {
			x, a, b := hbSetup(t, h)
			gx := captureGraph(t, h, x, a, b, true)
			for range 50 {
				require.NoError(t, h.GraphLaunch(gx, a))
			}
			return h.Synchronize()
		}))
		assert.Empty(t, d.Races())
		// Two streams, and the graph's two root nodes run at once.
		assert.LessOrEqual(t, len(d.hb.tips), 2+2)
	})
	t.Run("independent dependency-queue kernels", func(t *testing.T) {
		d := newH100(t, WithDependencyQueue(true))
		require.NoError(t, d.Run(func(h device.Host) error {
			q := h.(device.DependencyQueue)
			for range 1000 {
				if _, err := q.DQSubmit(spinLaunch(1, 32, time.Microsecond), nil); err != nil {
					return err
				}
			}
			return q.DQSynchronize()
		}))
		// The stale-list rule tells the host which old kernels are done.
		cfg := d.Config().DQ
		assert.LessOrEqual(t, len(d.hb.tips), cfg.StaleList+cfg.Slots+2)
	})
}
