package sched

import (
	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Serial issues every operation in program order on one stream: the
// baseline every strategy is measured against, and the schedule whose
// outputs every other schedule must reproduce.
type Serial struct{ stream device.Stream }

// NewSerial returns the one-stream baseline.
func NewSerial() *Serial { return &Serial{} }

func (*Serial) Name() string { return "serial" }

func (s *Serial) Prepare(h device.Host, _ *workloads.Instance) (err error) {
	s.stream, err = h.NewStream(device.StreamOptions{})
	return err
}

func (s *Serial) Cleanup(h device.Host) error {
	if s.stream == nil {
		return nil
	}
	err := h.Destroy(s.stream)
	s.stream = nil
	return err
}

func (s *Serial) Run(h device.Host, in *workloads.Instance) (err error) {
	if s.stream == nil {
		if err := s.Prepare(h, in); err != nil {
			return err
		}
		defer JoinCleanup(h, s, &err)
	}
	for k := 0; k < in.N(); k++ {
		if err := in.Issue(h, s.stream, k); err != nil {
			return err
		}
	}
	return h.StreamSynchronize(s.stream)
}
