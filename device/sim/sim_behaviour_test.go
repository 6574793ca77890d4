package sim

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// kernelSpans runs main with tracing and returns each kernel's [start, end)
// from Races-free observation: the trace's stream slices.
func traceOf(t *testing.T, d *Device) string {
	var b bytes.Buffer
	require.NoError(t, d.WriteTrace(&b))
	return b.String()
}

func TestFalseDependencyOnSharedHardwareQueue(t *testing.T) {
	// Streams 0 and 1 share one hardware queue when there is one queue: a
	// small kernel on stream 1 issued after stream 0's second (dependent)
	// kernel waits behind it, although it depends on nothing.
	run := func(queues int) time.Duration {
		d := newH100(t, WithHardwareQueues(queues))
		var small time.Duration
		require.NoError(t, d.Run(func(h device.Host) error {
			s0, _ := h.NewStream(device.StreamOptions{})
			s1, _ := h.NewStream(device.StreamOptions{})
			e0, _ := h.NewEvent(device.EventOptions{})
			e1, _ := h.NewEvent(device.EventOptions{})
			require.NoError(t, h.Record(e0, s1))
			require.NoError(t, h.Launch(s0, spinLaunch(1, 32, 50*time.Microsecond)))
			require.NoError(t, h.Launch(s0, spinLaunch(1, 32, 50*time.Microsecond)))
			require.NoError(t, h.Launch(s1, spinLaunch(1, 32, 1*time.Microsecond)))
			require.NoError(t, h.Record(e1, s1))
			require.NoError(t, h.Synchronize())
			var err error
			small, err = h.Elapsed(e0, e1)
			return err
		}))
		return small
	}
	separate, shared := run(2), run(1)
	// On its own queue the small kernel finishes about 1 us + launch
	// latency after its record; behind stream 0's second kernel it waits
	// for the first 50 us kernel to complete.
	assert.Less(t, separate, 15*time.Microsecond)
	assert.Greater(t, shared, 50*time.Microsecond)
}

func TestPriorityStreamPlacesFirst(t *testing.T) {
	// A GPU-filling kernel runs on a low-priority stream; two kernels wait
	// for SMs: one from a low-priority stream issued first, one from a
	// high-priority stream issued later. The high-priority one goes first.
	d := newH100(t)
	var lowEnd, highEnd time.Duration
	require.NoError(t, d.Run(func(h device.Host) error {
		fill, _ := h.NewStream(device.StreamOptions{})
		low, _ := h.NewStream(device.StreamOptions{Priority: 0})
		high, _ := h.NewStream(device.StreamOptions{Priority: -5})
		require.Equal(t, -5, high.Priority())
		el, _ := h.NewEvent(device.EventOptions{})
		eh, _ := h.NewEvent(device.EventOptions{})
		e0, _ := h.NewEvent(device.EventOptions{})
		require.NoError(t, h.Record(e0, fill))
		require.NoError(t, h.Launch(fill, spinLaunch(264, 1024, 100*time.Microsecond)))
		require.NoError(t, h.Launch(low, spinLaunch(264, 1024, 10*time.Microsecond)))
		require.NoError(t, h.Record(el, low))
		require.NoError(t, h.Launch(high, spinLaunch(264, 1024, 10*time.Microsecond)))
		require.NoError(t, h.Record(eh, high))
		require.NoError(t, h.Synchronize())
		var err error
		if lowEnd, err = h.Elapsed(e0, el); err != nil {
			return err
		}
		highEnd, err = h.Elapsed(e0, eh)
		return err
	}))
	assert.Less(t, highEnd, lowEnd)
	assert.InDelta(t, 10*time.Microsecond, lowEnd-highEnd, float64(100*time.Nanosecond))
}

func TestRaceChecker(t *testing.T) {
	run := func(safe bool) []device.Race {
		d := newH100(t)
		require.NoError(t, d.Run(func(h device.Host) error {
			buf, err := h.Malloc(1 << 20)
			require.NoError(t, err)
			s1, _ := h.NewStream(device.StreamOptions{})
			s2, _ := h.NewStream(device.StreamOptions{})
			w := spinLaunch(4, 128, 20*time.Microsecond)
			w.Label, w.Args = "producer", []device.Arg{device.Out(buf)}
			r := spinLaunch(4, 128, 20*time.Microsecond)
			r.Label, r.Args = "consumer", []device.Arg{device.In(buf)}
			require.NoError(t, h.Launch(s1, w))
			if safe {
				e, _ := h.NewEvent(device.EventOptions{})
				require.NoError(t, h.Record(e, s1))
				require.NoError(t, h.Wait(s2, e))
			}
			require.NoError(t, h.Launch(s2, r))
			return h.Synchronize()
		}))
		assert.Equal(t, len(d.Races()), d.Stats().Races)
		return d.Races()
	}
	races := run(false)
	require.Len(t, races, 1)
	assert.Equal(t, "producer", races[0].A.Name)
	assert.Equal(t, 0, races[0].A.Stream)
	assert.Equal(t, "consumer", races[0].B.Name)
	assert.Equal(t, 1, races[0].B.Stream)
	assert.Less(t, races[0].B.Start, races[0].A.End)
	assert.Equal(t, uint64(1<<20), races[0].Hi-races[0].Lo)
	assert.Empty(t, run(true), "0 races")
}

func TestRaceCheckerRangesAndReads(t *testing.T) {
	// Disjoint ranges of one buffer and two readers never race.
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		buf, _ := h.Malloc(1 << 20)
		s1, _ := h.NewStream(device.StreamOptions{})
		s2, _ := h.NewStream(device.StreamOptions{})
		s3, _ := h.NewStream(device.StreamOptions{})
		a := spinLaunch(2, 128, 20*time.Microsecond)
		a.Args = []device.Arg{{Kind: device.ArgBuffer, Buf: buf, Mode: device.Write, Off: 0, Len: 4096}}
		b := spinLaunch(2, 128, 20*time.Microsecond)
		b.Args = []device.Arg{{Kind: device.ArgBuffer, Buf: buf, Mode: device.Write, Off: 4096, Len: 4096}}
		c := spinLaunch(2, 128, 20*time.Microsecond)
		c.Args = []device.Arg{{Kind: device.ArgBuffer, Buf: buf, Mode: device.Read, Off: 8192}}
		require.NoError(t, h.Launch(s1, a))
		require.NoError(t, h.Launch(s2, b))
		require.NoError(t, h.Launch(s3, c))
		require.NoError(t, h.Launch(s1, c))
		return h.Synchronize()
	}))
	assert.Empty(t, d.Races())
}

func TestDeadlockOnEventNeverRecorded(t *testing.T) {
	d := newH100(t)
	err := d.Run(func(h device.Host) error {
		s, _ := h.NewStream(device.StreamOptions{})
		_, _ = h.NewStream(device.StreamOptions{})
		s2, _ := h.NewStream(device.StreamOptions{})
		_, _ = h.NewEvent(device.EventOptions{})  // event 0
		e, _ := h.NewEvent(device.EventOptions{}) // event 1
		require.NoError(t, h.Wait(s2, e))
		require.NoError(t, h.Launch(s2, spinLaunch(1, 32, time.Microsecond)))
		require.NoError(t, h.Launch(s, spinLaunch(1, 32, time.Microsecond)))
		return h.StreamSynchronize(s2)
	})
	var dl *device.DeadlockError
	require.ErrorAs(t, err, &dl)
	assert.Contains(t, dl.Waiting, "stream 2 waits on event 1 (never recorded)")
	assert.Contains(t, dl.Waiting, "host thread main blocked in StreamSynchronize(stream 2)")

	// Behind a blocked stream on a shared hardware queue, the other stream
	// is named too.
	d = newH100(t, WithHardwareQueues(1))
	err = d.Run(func(h device.Host) error {
		s0, _ := h.NewStream(device.StreamOptions{})
		s1, _ := h.NewStream(device.StreamOptions{})
		e, _ := h.NewEvent(device.EventOptions{})
		require.NoError(t, h.Wait(s0, e))
		l := spinLaunch(1, 32, time.Microsecond)
		l.Label = "innocent"
		require.NoError(t, h.Launch(s1, l))
		return h.Synchronize()
	})
	require.ErrorAs(t, err, &dl)
	assert.Equal(t, []string{
		"stream 0 waits on event 0 (never recorded)",
		"stream 1: kernel innocent queued on hardware queue 0 behind stream 0",
		"host thread main blocked in Synchronize()",
	}, dl.Waiting)
}

func TestDeadlockSpinningBlocksStarveProducer(t *testing.T) {
	// Consumers spin on a counter the producer increments; 264 1024-thread
	// consumer blocks fill the GPU before the producer arrives.
	d := newH100(t)
	err := d.Run(func(h device.Host) error {
		cnt, _ := h.Malloc(64)
		sc, _ := h.NewStream(device.StreamOptions{})
		sp, _ := h.NewStream(device.StreamOptions{})
		cons := spinLaunch(264, 1024, time.Microsecond)
		cons.Label = "consumer"
		cons.Sync = waitAll{c: device.Counter{Buf: cnt}, target: 1}
		prod := spinLaunch(1, 1024, time.Microsecond)
		prod.Label = "producer"
		prod.Sync = postAll{c: device.Counter{Buf: cnt}}
		require.NoError(t, h.Launch(sc, cons))
		require.NoError(t, h.Launch(sp, prod))
		return h.Synchronize()
	})
	var dl *device.DeadlockError
	require.ErrorAs(t, err, &dl)
	assert.Contains(t, err.Error(), "kernel consumer (stream 0): 264 blocks spin")
}

func TestSpinningBlocksProgressWhenProducerFits(t *testing.T) {
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		cnt, _ := h.Malloc(64)
		sc, _ := h.NewStream(device.StreamOptions{})
		sp, _ := h.NewStream(device.StreamOptions{})
		cons := spinLaunch(100, 1024, time.Microsecond)
		cons.Sync = waitAll{c: device.Counter{Buf: cnt}, target: 4}
		prod := spinLaunch(4, 1024, 20*time.Microsecond)
		prod.Sync = postAll{c: device.Counter{Buf: cnt}}
		require.NoError(t, h.Launch(sc, cons))
		require.NoError(t, h.Launch(sp, prod))
		return h.Synchronize()
	}))
	assert.Equal(t, int64(104), d.Stats().Blocks)
	// Consumers can only finish after the producer (20 us) finished.
	assert.Greater(t, d.Stats().DeviceTime, 20*time.Microsecond)
}

type waitAll struct {
	c      device.Counter
	target uint32
}

func (w waitAll) Waits(b int, buf []device.CounterWait) []device.CounterWait {
	return append(buf, device.CounterWait{Counter: w.c, Target: w.target})
}
func (w waitAll) Posts(b int, buf []device.Counter) []device.Counter { return buf }

type postAll struct{ c device.Counter }

func (p postAll) Waits(b int, buf []device.CounterWait) []device.CounterWait { return buf }
func (p postAll) Posts(b int, buf []device.Counter) []device.Counter         { return append(buf, p.c) }

// mixed is a workload with several host threads, queues, callbacks, copies,
// graphs and events: everything whose interleaving could go wrong.
func mixed(h device.Host) error {
	q := h.NewQueue("done")
	buf, _ := h.Malloc(1 << 16)
	hm, _ := h.AllocHost(1<<16, true)
	for w := 0; w < 3; w++ {
		w := w
		h.Go(fmt.Sprintf("worker%d", w), func(h device.Host) error {
			s, _ := h.NewStream(device.StreamOptions{Priority: -w})
			for i := 0; i < 20; i++ {
				l := spinLaunch(50+10*w+i, 256, time.Duration(1+i%3)*time.Microsecond)
				l.Label = fmt.Sprintf("w%d-k%d", w, i)
				if err := h.Launch(s, l); err != nil {
					return err
				}
				if i%5 == 0 {
					if err := h.Copy(s, &device.Copy{Kind: device.HostToDevice, Dst: buf, Host: hm, Bytes: 4096}); err != nil {
						return err
					}
				}
			}
			i := w
			if err := h.HostFunc(s, func() { q.Put(i) }); err != nil {
				return err
			}
			return h.StreamSynchronize(s)
		})
	}
	s, _ := h.NewStream(device.StreamOptions{})
	if err := h.BeginCapture(s); err != nil {
		return err
	}
	for i := 0; i < 5; i++ {
		if err := h.Launch(s, spinLaunch(10, 128, time.Microsecond)); err != nil {
			return err
		}
	}
	g, err := h.EndCapture(s)
	if err != nil {
		return err
	}
	x, err := h.Instantiate(g)
	if err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if err := h.GraphLaunch(x, s); err != nil {
			return err
		}
	}
	for i := 0; i < 3; i++ {
		if _, ok := h.Get(q); !ok {
			return errors.New("queue closed early")
		}
	}
	return h.Synchronize()
}

func TestDeterministic(t *testing.T) {
	var traces []string
	var stats []device.Stats
	for i := 0; i < 2; i++ {
		d := newH100(t, WithTrace(true))
		require.NoError(t, d.Run(mixed))
		traces = append(traces, traceOf(t, d))
		stats = append(stats, d.Stats())
	}
	assert.Equal(t, stats[0], stats[1])
	assert.Equal(t, traces[0], traces[1], "traces differ")
	assert.Equal(t, int64(3*20+15), stats[0].Kernels)
	assert.Equal(t, int64(3), stats[0].Callbacks)
	assert.Greater(t, stats[0].SMUtilization, 0.0)
	assert.LessOrEqual(t, stats[0].SMUtilization, 1.0)
	assert.True(t, strings.HasPrefix(traces[0], `{"schemaVersion":1,"displayTimeUnit":"ns","deviceProperties":[],"traceEvents":[`))
	assert.Contains(t, traces[0], `"host thread worker2"`)
}
