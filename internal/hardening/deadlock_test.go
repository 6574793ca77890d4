package hardening

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

var spinKernel = &device.Kernel{Module: "test", Name: "spin", Regs: 32}

// counterSync makes every block of a launch wait for a counter to reach
// target (waiter) or post to it (poster).
type counterSync struct {
	c      device.Counter
	target uint32
	post   bool
}

func (s counterSync) Waits(_ int, buf []device.CounterWait) []device.CounterWait {
	if s.post {
		return buf
	}
	return append(buf, device.CounterWait{Counter: s.c, Target: s.target})
}

func (s counterSync) Posts(_ int, buf []device.Counter) []device.Counter {
	if !s.post {
		return buf
	}
	return append(buf, s.c)
}

// TestDeadlocks: each way a schedule can hang ends the run with a
// *device.DeadlockError whose message names what waits on what.
func TestDeadlocks(t *testing.T) {
	cases := []struct {
		name string
		main func(h device.Host) error
		want []string // substrings of the error
	}{
		{"event wait that never fires", func(h device.Host) error {
			s, err := h.NewStream(device.StreamOptions{})
			if err != nil {
				return err
			}
			e, err := h.NewEvent(device.EventOptions{})
			if err != nil {
				return err
			}
			buf, err := h.Malloc(4096)
			if err != nil {
				return err
			}
			if err := h.Wait(s, e); err != nil { // e is never recorded
				return err
			}
			l := &device.Launch{Kernel: spinKernel, Grid: device.D1(1), Block: device.D1(32), Args: []device.Arg{device.Out(buf)}, Work: device.Work{Cycles: 100}, Label: "after-wait"}
			if err := h.Launch(s, l); err != nil {
				return err
			}
			return h.StreamSynchronize(s)
		}, []string{"stream", "event", "never recorded", "main"}},
		{"host threads waiting on each other", func(h device.Host) error {
			toA, toB := h.NewQueue("to-alice"), h.NewQueue("to-bob")
			h.Go("alice", func(h device.Host) error {
				if _, ok := h.Get(toA); !ok { // only bob puts to it, after his own Get
					return nil
				}
				toB.Put(1)
				return nil
			})
			h.Go("bob", func(h device.Host) error {
				if _, ok := h.Get(toB); !ok {
					return nil
				}
				toA.Put(1)
				return nil
			})
			return nil
		}, []string{"alice", "bob", "to-alice", "to-bob"}},
		{"spinning blocks that fill the GPU", func(h device.Host) error {
			info := h.(device.InfoHost).DeviceInfo()
			hi, err := h.NewStream(device.StreamOptions{Priority: info.StreamPriorityHigh})
			if err != nil {
				return err
			}
			lo, err := h.NewStream(device.StreamOptions{})
			if err != nil {
				return err
			}
			counters, err := h.Malloc(4096)
			if err != nil {
				return err
			}
			c := device.Counter{Buf: counters, Index: 0}
			// Consumer first: one block per SM slot (1024 threads: two
			// per H100 SM), every one spinning on the producer's counter.
			consumer := &device.Launch{Kernel: spinKernel, Grid: device.D1(info.SMs * 2), Block: device.D1(1024),
				Args: []device.Arg{device.In(counters)}, Work: device.Work{Cycles: 1000}, Label: "consumer", Sync: counterSync{c: c, target: 1}}
			producer := &device.Launch{Kernel: spinKernel, Grid: device.D1(1), Block: device.D1(1024),
				Args: []device.Arg{device.InOut(counters)}, Work: device.Work{Cycles: 1000}, Label: "producer", Sync: counterSync{c: c, post: true}}
			if err := h.Launch(lo, consumer); err != nil {
				return err
			}
			h.Spend(50_000) // the producer comes 50 us later: the SMs are full
			if err := h.Launch(hi, producer); err != nil {
				return err
			}
			return h.Synchronize()
		}, []string{"consumer", "counter", "producer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := sim.NewNamed("h100")
			require.NoError(t, err)
			err = d.Run(tc.main)
			require.Error(t, err)
			var dl *device.DeadlockError
			require.True(t, errors.As(err, &dl), "want a *device.DeadlockError, got %T: %v", err, err)
			require.NotEmpty(t, dl.Waiting)
			msg := err.Error()
			t.Log(msg)
			for _, w := range tc.want {
				assert.Contains(t, strings.ToLower(msg), strings.ToLower(w))
			}
		})
	}
}
