package calibrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// threadRelease starts n host threads that prepare on their own, report
// ready and wait for one release, so that their timed loops overlap: the
// harness of "host threads at once", "queue calls over threads" and
// "launches over threads". A thread calls Ready once after preparing and,
// when that was nil, Wait before its timed loop.
type threadRelease struct {
	ready device.Queue
	start []device.Queue
}

// newThreadRelease makes the round's queues and starts its threads, named
// "NAME 0" to "NAME n-1"; thread w runs body(h, w, r) (r is passed, not
// captured: a thread may run before newThreadRelease returns).
func newThreadRelease(h device.Host, name string, n int, body func(h device.Host, w int, r *threadRelease) error) *threadRelease {
	r := &threadRelease{ready: h.NewQueue(name + " ready"), start: make([]device.Queue, n)}
	for w := range r.start {
		r.start[w] = h.NewQueue(fmt.Sprintf("%s start %d", name, w))
		h.Go(fmt.Sprintf("%s %d", name, w), func(h device.Host) error { return body(h, w, r) })
	}
	return r
}

// Ready reports that the calling thread is prepared (nil) or cannot run.
func (r *threadRelease) Ready(err error) { r.ready.Put(err) }

// Wait blocks thread w until the release; false when the round was called
// off because a thread failed to prepare.
func (r *threadRelease) Wait(h device.Host, w int) bool {
	_, ok := h.Get(r.start[w])
	return ok
}

// Release waits for every thread's Ready, then releases them all at once
// and returns the host time just before the release; when a thread failed
// to prepare it calls the round off instead (every Wait returns false) and
// returns the failures.
func (r *threadRelease) Release(h device.Host) (time.Duration, error) {
	var errs []error
	for range r.start {
		v, ok := h.Get(r.ready)
		if !ok {
			return 0, errors.New("ready queue closed")
		}
		if err, _ := v.(error); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		for _, q := range r.start {
			q.Close()
		}
		return 0, errors.Join(errs...)
	}
	t0 := h.Now()
	for _, q := range r.start {
		q.Put(struct{}{})
	}
	return t0, nil
}
