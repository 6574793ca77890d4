package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// rowProducer's block b waits for block b-1 (a chain, so blocks finish one
// after another), writes row b of data and posts counter rows+b.
type rowProducer struct {
	data, ctr device.Buffer
	rows      int
	rowBytes  int64
}

func (p rowProducer) Waits(b int, buf []device.CounterWait) []device.CounterWait {
	if b == 0 {
		return buf
	}
	return append(buf, device.CounterWait{Counter: device.Counter{Buf: p.ctr, Index: b - 1}, Target: 1})
}

func (p rowProducer) Posts(b int, buf []device.Counter) []device.Counter {
	return append(buf, device.Counter{Buf: p.ctr, Index: b}, device.Counter{Buf: p.ctr, Index: p.rows + b})
}

// rowConsumer's block b waits for counter rows+waitRow(b) and reads row b.
type rowConsumer struct {
	rowProducer
	shift int // 0: the row it reads; -1: the row before (a broken policy)
}

func (c rowConsumer) Waits(b int, buf []device.CounterWait) []device.CounterWait {
	w := b + c.shift
	if w < 0 {
		return buf
	}
	return append(buf, device.CounterWait{Counter: device.Counter{Buf: c.ctr, Index: c.rows + w}, Target: 1})
}

func (c rowConsumer) Posts(int, []device.Counter) []device.Counter { return nil }

type accessProducer struct{ rowProducer }
type accessConsumer struct{ rowConsumer }

func (p accessProducer) BlockArgs(b int, buf []device.Arg) []device.Arg {
	return append(buf, device.Arg{Kind: device.ArgBuffer, Buf: p.data, Mode: device.Write, Off: int64(b) * p.rowBytes, Len: p.rowBytes})
}

func (c accessConsumer) BlockArgs(b int, buf []device.Arg) []device.Arg {
	return append(buf, device.Arg{Kind: device.ArgBuffer, Buf: c.data, Mode: device.Read, Off: int64(b) * c.rowBytes, Len: c.rowBytes})
}

// runRows runs a 4-block producer (one block at a time, 10 us each) and a
// 4-block consumer that reads its rows, on two streams, and returns the
// races found.
func runRows(t *testing.T, access bool, shift int) []device.Race {
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		const rows, rowBytes = 4, 1024
		data, err := h.Malloc(rows * rowBytes)
		require.NoError(t, err)
		ctr, err := h.Malloc(8 * rows)
		require.NoError(t, err)
		ps, _ := h.NewStream(device.StreamOptions{Priority: -1})
		cs, _ := h.NewStream(device.StreamOptions{})
		rp := rowProducer{data: data, ctr: ctr, rows: rows, rowBytes: rowBytes}
		prod := spinLaunch(rows, 128, 10*time.Microsecond)
		prod.Label, prod.Args = "producer", []device.Arg{device.Out(data)}
		cons := spinLaunch(rows, 128, 10*time.Microsecond)
		cons.Label, cons.Args = "consumer", []device.Arg{device.In(data)}
		rc := rowConsumer{rowProducer: rp, shift: shift}
		if access {
			prod.Sync, cons.Sync = accessProducer{rp}, accessConsumer{rc}
		} else {
			prod.Sync, cons.Sync = rp, rc
		}
		require.NoError(t, h.Launch(ps, prod))
		require.NoError(t, h.Launch(cs, cons))
		return h.Synchronize()
	}))
	assert.Equal(t, len(d.Races()), d.Stats().Races)
	return d.Races()
}

func TestBlockAccessRaceChecking(t *testing.T) {
	// Without BlockAccess the checker sees two overlapping launches on one
	// buffer: a (false) race.
	require.Len(t, runRows(t, false, 0), 1)
	// With it, each consumer block starts after the producer block that
	// writes its row: no race.
	assert.Empty(t, runRows(t, true, 0))
	// A consumer that waits for the previous row starts reading row b while
	// producer block b writes it: a race, naming the blocks.
	races := runRows(t, true, -1)
	require.Len(t, races, 1, "one race per pair of launches")
	r := races[0]
	assert.Equal(t, "producer (block 0)", r.A.Name)
	assert.Equal(t, "consumer (block 0)", r.B.Name)
	assert.Less(t, r.B.Start, r.A.End)
	assert.Equal(t, uint64(1024), r.Hi-r.Lo, "the row both touch")
}

// flagProducer raises a flag when its block 0 starts (StartPoster).
type flagProducer struct {
	ctr   device.Buffer
	start bool
}

func (p flagProducer) Waits(int, []device.CounterWait) []device.CounterWait { return nil }
func (p flagProducer) Posts(b int, buf []device.Counter) []device.Counter {
	if !p.start && b == 0 {
		buf = append(buf, device.Counter{Buf: p.ctr})
	}
	return buf
}

type flagStarter struct{ flagProducer }

func (p flagStarter) StartPosts(b int, buf []device.Counter) []device.Counter {
	if b == 0 {
		buf = append(buf, device.Counter{Buf: p.ctr})
	}
	return buf
}

type flagWaiter struct{ ctr device.Buffer }

func (w flagWaiter) Waits(_ int, buf []device.CounterWait) []device.CounterWait {
	return append(buf, device.CounterWait{Counter: device.Counter{Buf: w.ctr}, Target: 1})
}
func (w flagWaiter) Posts(int, []device.Counter) []device.Counter { return nil }

func TestStartPostsReleaseWaitersWhenTheBlockStarts(t *testing.T) {
	// The waiter (1 us) spins on the flag from its launch on; the producer
	// (2 blocks of 20 us, issued after it on another stream) raises the
	// flag at the start or at the end of its block 0, and the waiter's
	// block ends 1 us after that.
	run := func(start bool, dispatchNs float64) (prod, wait [2]Time) {
		cfg := h100Config(t)
		cfg.FrontEnd.BlockDispatchNs = dispatchNs
		d, err := New(cfg, WithTrace(true))
		require.NoError(t, err)
		require.NoError(t, d.Run(func(h device.Host) error {
			ctr, _ := h.Malloc(4)
			ws, _ := h.NewStream(device.StreamOptions{})
			ps, _ := h.NewStream(device.StreamOptions{})
			w := spinLaunch(1, 32, time.Microsecond)
			w.Label, w.Sync = "waiter", flagWaiter{ctr}
			p := spinLaunch(2, 128, 20*time.Microsecond)
			p.Label = "producer"
			var fp device.BlockSync = flagProducer{ctr: ctr}
			if start {
				fp = flagStarter{flagProducer{ctr: ctr, start: true}}
			}
			p.Sync = fp
			require.NoError(t, h.Launch(ws, w))
			require.NoError(t, h.Launch(ps, p))
			return h.Synchronize()
		}))
		for _, s := range d.lastTrace.spans {
			if s.kind != trackStream {
				continue
			}
			switch s.name {
			case "producer":
				prod = [2]Time{s.start, s.end}
			case "waiter":
				wait = [2]Time{s.start, s.end}
			}
		}
		return prod, wait
	}
	prod, wait := run(false, 0)
	assert.Equal(t, prod[1]+nsTime(1000), wait[1], "posted at the end: the waiter runs after the producer's block 0")
	prod, wait = run(true, 0)
	assert.Equal(t, prod[0]+nsTime(1000), wait[1], "posted at the start: the waiter runs as the producer's block 0 starts")
	// With a block dispatch time of 100 ns, the producer's two blocks
	// start 100 and 200 ns after their placement; block 0's start post
	// lands at its own start.
	prod, wait = run(true, 100)
	assert.Equal(t, prod[0]+nsTime(100+1000), wait[1])
}

// A wait whose target is 0 is met at once, even on a counter never posted.
func TestWaitForZeroIsMetAtOnce(t *testing.T) {
	d := newH100(t)
	require.NoError(t, d.Run(func(h device.Host) error {
		ctr, _ := h.Malloc(4)
		s, _ := h.NewStream(device.StreamOptions{})
		l := spinLaunch(2, 32, time.Microsecond)
		l.Sync = zeroWait{ctr}
		require.NoError(t, h.Launch(s, l))
		return h.Synchronize()
	}))
	assert.EqualValues(t, 2, d.Stats().Blocks)
}

type zeroWait struct{ ctr device.Buffer }

func (w zeroWait) Waits(_ int, buf []device.CounterWait) []device.CounterWait {
	return append(buf, device.CounterWait{Counter: device.Counter{Buf: w.ctr, Index: 3}})
}
func (w zeroWait) Posts(int, []device.Counter) []device.Counter { return nil }

// Blocks that move no memory (Cycles only) do not take a share of it: a
// memory-bound block beside a GPU full of compute blocks still draws 4/16
// of its SM's 100 bytes/ns.
func TestComputeBlocksLeaveBandwidthAlone(t *testing.T) {
	d := newH100(t, WithTrace(true))
	require.NoError(t, d.Run(func(h device.Host) error {
		s1, _ := h.NewStream(device.StreamOptions{})
		s2, _ := h.NewStream(device.StreamOptions{})
		busy := spinLaunch(1056, 128, 20*time.Microsecond) // 8 blocks, 32 warps per SM
		busy.Label = "compute"
		mem := &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(128), Work: device.Work{Bytes: 25000}, Label: "memory"}
		require.NoError(t, h.Launch(s1, busy))
		require.NoError(t, h.Launch(s2, mem))
		return h.Synchronize()
	}))
	for _, s := range d.lastTrace.spans {
		if s.kind == trackStream && s.name == "memory" {
			assert.Equal(t, time.Microsecond, (s.end - s.start).Duration())
			return
		}
	}
	t.Fatal("no span for the memory kernel")
}
