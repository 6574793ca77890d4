package graph

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// MeasureCosts runs the program once, serially on one stream in program
// order, with a timing event between consecutive operations, and returns
// each operation's duration on the device (AutoGraph's and IOS's measured
// per-kernel costs; on the simulator the simulated durations). Operations
// shorter than the host's launch interval are measured at that interval,
// which is what they cost a stream schedule. The run is an ordinary run of
// the program (as a warm-up is), so the buffers end as after any run.
func MeasureCosts(h device.Host, in *workloads.Instance) (costs []time.Duration, err error) {
	st, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, h.Destroy(st)) }()
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
