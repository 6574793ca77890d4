package acs

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// HW is ACS-HW: kernels are submitted in program order to the device's
// hardware dependency queue with upstream ids the host computed against its
// list of the last M submissions.
type HW struct {
	p HWParams
}

var _ sched.Scheduler = (*HW)(nil)

// NewHW returns ACS-HW with parameters p.
func NewHW(p HWParams) (*HW, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &HW{p: p}, nil
}

func (s *HW) Name() string {
	n := fmt.Sprintf("acs-hw(M=%d", s.p.StaleList)
	if !s.p.CheckCost {
		n += ",free-check"
	}
	return n + ")"
}

// submitted is one entry of the host's stale list.
type submitted struct {
	id uint64
	op int
}

// Run submits every kernel to the dependency queue and waits for the queue
// to drain. A copy is not a kernel the queue can hold: the host drains the
// queue, runs the copy on a stream and synchronizes, then goes on (the
// programs ACS targets have no copies between their kernels).
func (s *HW) Run(h device.Host, in *workloads.Instance) error {
	dq, ok := h.(device.DependencyQueue)
	if !ok {
		return fmt.Errorf("acs-hw: %w", device.ErrUnsupported)
	}
	var copyStream device.Stream
	defer func() {
		if copyStream != nil {
			h.Destroy(copyStream)
		}
	}()
	recent := make([]submitted, 0, s.p.StaleList) // a ring: oldest at head
	head := 0
	var deps []uint64
	for k := 0; k < in.N(); k++ {
		l := in.Launch(k)
		if l == nil {
			if err := dq.DQSynchronize(); err != nil {
				return err
			}
			if copyStream == nil {
				var err error
				if copyStream, err = h.NewStream(device.StreamOptions{}); err != nil {
					return err
				}
			}
			if err := in.Issue(h, copyStream, k); err != nil {
				return err
			}
			if err := h.StreamSynchronize(copyStream); err != nil {
				return err
			}
			recent, head = recent[:0], 0 // everything before is done
			continue
		}
		acc := in.Access(k)
		deps = deps[:0]
		for i := range recent {
			e := recent[(head+i)%len(recent)]
			if device.Conflicts(acc, in.Access(e.op)) {
				deps = append(deps, e.id)
			}
		}
		if s.p.CheckCost {
			h.Spend(CheckCost(len(recent), rangesOf(acc)))
		}
		id, err := dq.DQSubmit(l, deps)
		if err != nil {
			return fmt.Errorf("acs-hw: submit %s: %w", l.Name(), err)
		}
		if len(recent) < s.p.StaleList {
			recent = append(recent, submitted{id, k})
		} else {
			recent[head] = submitted{id, k}
			head = (head + 1) % len(recent)
		}
	}
	return dq.DQSynchronize()
}
