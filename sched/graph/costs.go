package graph

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// gatePerOp is how long the gate kernel holds the stream per operation to
// be measured: more than the host needs to issue one launch and one event
// record, so the whole pass is queued before the device starts it.
const gatePerOp = 12 * time.Microsecond

// MeasureCosts runs the program once, serially on one stream in program
// order, with a timing event between consecutive operations, and returns
// each operation's duration on the device (AutoGraph's and IOS's measured
// per-kernel costs; on the simulator the simulated durations). A gate
// kernel (calibrate's cal_spin, one block spinning on the GPU's timer)
// first holds the stream while the host queues the whole pass, so the
// operations run back to back and kernels shorter than the host's launch
// interval are measured at their own duration, as a CUDA graph runs them.
// The run is an ordinary run of the program (as a warm-up is), so the
// buffers end as after any run.
func MeasureCosts(h device.Host, in *workloads.Instance) (costs []time.Duration, err error) {
	st, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, h.Destroy(st)) }()
	spin, err := kernels.Lookup("calibrate", "cal_spin")
	if err != nil {
		return nil, fmt.Errorf("measure: the gate kernel: %w", err)
	}
	done, err := h.Malloc(4)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, h.Free(done)) }()
	gate := time.Duration(in.N()+1) * gatePerOp
	// The simulator takes the gate's length in SM cycles; 2 cycles per ns
	// holds it at least gate long on any part clocked at up to 2 GHz.
	const cyclesPerNS = 2.0
	gl := &device.Launch{Kernel: spin, Grid: device.D1(1), Block: device.D1(32), Label: "measure gate",
		Args: []device.Arg{device.U64(uint64(gate.Nanoseconds())), device.InOut(done)},
		Work: device.Work{Cycles: float64(gate.Nanoseconds()) * cyclesPerNS}}
	if err := h.Launch(st, gl); err != nil {
		return nil, err
	}
	evs := make([]device.Event, in.N()+1)
	defer func() {
		for _, e := range evs {
			if e != nil {
				err = errors.Join(err, h.Destroy(e))
			}
		}
	}()
	for i := range evs {
		if evs[i], err = h.NewEvent(device.EventOptions{}); err != nil {
			return nil, err
		}
	}
	if err := h.Record(evs[0], st); err != nil {
		return nil, err
	}
	for k := 0; k < in.N(); k++ {
		if err := in.Issue(h, st, k); err != nil {
			return nil, err
		}
		if err := h.Record(evs[k+1], st); err != nil {
			return nil, err
		}
	}
	if err := h.StreamSynchronize(st); err != nil {
		return nil, err
	}
	costs = make([]time.Duration, in.N())
	for k := range costs {
		if costs[k], err = h.Elapsed(evs[k], evs[k+1]); err != nil {
			return nil, fmt.Errorf("measure operation %d (%s): %w", k, in.Op(k).Name, err)
		}
	}
	return costs, nil
}
