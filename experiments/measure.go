package experiments

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// once is what one repetition measured.
type once struct {
	makespan, t0, t1 time.Duration
	outputs          map[string][]byte
	choices          []string
	// stats0 is the device's counts when the timed run began.
	stats0 device.Stats
}

// runOnce runs prog under s on dev: bind, prepare, the warm run
// (sched.Warm, which leaves every buffer as Bind did), on a device that
// computes host outputs poisoned (poison), synchronize, time the
// scheduler's Run between two synchronizations, read the outputs (if
// computes), clean up. Every scheduler, the serial reference included,
// runs exactly so.
func runOnce(dev device.Device, prog *workloads.Program, s sched.Scheduler, computes bool) (once, error) {
	var r once
	// The simulator counts kernels as they run, so its count before the
	// timed run leaves Prepare's and the warm run's kernels out of the row.
	obs, _ := dev.(device.Observer)
	// The simulator moves no data: generating its inputs would only cost
	// CPU time (most of a simulated row's), never change a timing.
	_, simulated := dev.(*sim.Device)
	err := dev.Run(func(h device.Host) (err error) {
		inst, err := workloads.BindWith(h, prog, workloads.BindOptions{NoDeviceData: simulated && !computes})
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, inst.Release(h)) }()
		prep, _ := s.(sched.Preparer)
		if prep != nil {
			if err := prep.Prepare(h, inst); err != nil {
				return fmt.Errorf("%s: prepare: %w", s.Name(), err)
			}
			defer func() {
				if cerr := prep.Cleanup(h); cerr != nil && err == nil {
					err = fmt.Errorf("%s: cleanup: %w", s.Name(), cerr)
				}
			}()
		}
		if c, ok := s.(interface{ Choices() []string }); ok {
			r.choices = c.Choices()
		}
		if err := sched.Warm(h, s, inst); err != nil {
			return err
		}
		if computes {
			poison(inst)
		}
		if obs != nil {
			r.stats0 = obs.Stats()
		}
		if !simulated {
			defer collectorOff()()
		}
		if c, ok := h.(device.ColdCacher); ok {
			// On a GPU the host work since the warm run (the reset's
			// refill, the poison) leaves the CPU's caches cold, and the
			// timed run's first calls pay for it (host.cold_call_ns).
			c.ColdCaches()
		}
		return r.timed(h, inst, s, computes)
	})
	return r, err
}

// collectorOff keeps Go's garbage collector out of a timed run on a real
// device until the returned function is called: it waits for a collection
// in progress to end and starts none. A collection that the earlier rows'
// allocations trigger would otherwise run beside whichever timed run it
// falls into, slowing a host-bound schedule's launches (write barriers,
// assists, CPU taken), and in interleaved rounds, which repeat the same
// allocations in the same order, it can fall on the same row every round.
// Runs may overlap (the portfolio's cost model runs simulated ones in
// parallel, which never call this): the collector comes back when the
// last one ends.
func collectorOff() (on func()) {
	gcOff.Lock()
	defer gcOff.Unlock()
	if gcOff.n == 0 {
		gcOff.percent = debug.SetGCPercent(-1)
	}
	gcOff.n++
	return func() {
		gcOff.Lock()
		defer gcOff.Unlock()
		if gcOff.n--; gcOff.n == 0 {
			debug.SetGCPercent(gcOff.percent)
		}
	}
}

var gcOff struct {
	sync.Mutex
	n       int // timed runs in progress
	percent int // GOGC before the first of them
}

// timed is the measured part of runOnce.
func (r *once) timed(h device.Host, inst *workloads.Instance, s sched.Scheduler, computes bool) error {
	if err := h.Synchronize(); err != nil {
		return err
	}
	r.t0 = h.Now()
	if err := s.Run(h, inst); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	if err := h.Synchronize(); err != nil {
		return err
	}
	r.t1 = h.Now()
	r.makespan = r.t1 - r.t0
	if computes {
		var err error
		if r.outputs, err = inst.Outputs(h); err != nil {
			return fmt.Errorf("read outputs: %w", err)
		}
	}
	return nil
}

// poison fills every output host buffer with 0xFF bytes (NaN in every
// float32, -1 in every int32) before the timed run, so that the outputs
// read after it pass only if it wrote them: the warm run's Reset gives
// device buffers their initial contents (a NaN poison where the program
// defines one) and host buffers theirs, often zeros, which a job that
// writes nothing would leave looking like a result.
func poison(inst *workloads.Instance) {
	for i, hs := range inst.Prog.Host {
		if hs.Output {
			data := inst.Host[i].Data
			for k := range data {
				data[k] = 0xFF
			}
		}
	}
}

// reference is the serial schedule's outputs for one workload on a GPU.
type reference struct {
	outputs map[string][]byte
	err     error
}

// serialReference runs the workload once under the serial scheduler and
// keeps its outputs, checked against the program's CPU reference if it has
// one.
func serialReference(dev device.Device, j *job) *reference {
	prog, _, err := j.program()
	if err != nil {
		return &reference{err: err}
	}
	s, err := NewScheduler("serial", nil)
	if err != nil {
		return &reference{err: fmt.Errorf("no serial scheduler to compare outputs with: %w", err)}
	}
	r, err := runOnce(dev, prog, s, true)
	if err != nil {
		return &reference{err: fmt.Errorf("serial reference run: %w", err)}
	}
	if prog.Check != nil {
		if err := prog.Check(r.outputs); err != nil {
			return &reference{outputs: r.outputs, err: fmt.Errorf("serial reference fails the workload's own check: %w", err)}
		}
	}
	return &reference{outputs: r.outputs}
}

// hashOutputs is the SHA-256 of outputs: each name and its bytes, by name.
func hashOutputs(out map[string][]byte) string {
	h := sha256.New()
	for _, n := range sortedKeys(out) {
		h.Write([]byte(n))
		h.Write(out[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// compareOutputs describes the first difference between two output sets,
// or returns "".
func compareOutputs(want, got map[string][]byte) string {
	for _, n := range sortedKeys(want) {
		g, ok := got[n]
		if !ok {
			return fmt.Sprintf("output %s missing", n)
		}
		w := want[n]
		if len(g) != len(w) {
			return fmt.Sprintf("output %s has %d bytes, serial's has %d", n, len(g), len(w))
		}
		if !bytes.Equal(g, w) {
			diff, first := 0, -1
			for i := range w {
				if w[i] != g[i] {
					diff++
					if first < 0 {
						first = i
					}
				}
			}
			return fmt.Sprintf("output %s differs from serial's in %d of %d bytes, first at byte %d", n, diff, len(w), first)
		}
	}
	for _, n := range sortedKeys(got) {
		if _, ok := want[n]; !ok {
			return fmt.Sprintf("output %s not produced by serial", n)
		}
	}
	return ""
}
