package sim

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// dqState is ACS-HW's hardware dependency queue (Durvasula et al., arXiv
// 2401.12377, the ACS-HW section): a window of N slots in the GPU front end.
// The host submits a kernel with the ids of the kernels it still believes
// in flight; the queue drops the ids already done, keeps the rest as the
// kernel's upstream list and dispatches it straight to the block scheduler
// once the list is empty. Insertion occupies the queue's unit for
// insert_cycles, each completion update for complete_cycles.
type dqState struct {
	nextID   uint64
	window   []*command // kernels holding a slot, in insertion order
	reserved int        // slots of submits whose insertion is in flight
	busy     Time       // the queue's unit is busy until then
	done     []bool     // by id
	fullWait []*thread
	syncWait []*thread
}

// dqHost is a host thread's view on a device with the dependency queue.
type dqHost struct{ *thread }

func (h *dqHost) DQSlots() int { return h.d.cfg.DQ.Slots }

// dqFull reports whether a kernel with id next must wait: every slot is
// taken, or the oldest kernel still in the window is more than stale_list
// submissions older (the host's list of recent kernels would miss it).
func (d *Device) dqFull(next uint64) bool {
	q := &d.dq
	if len(q.window)+q.reserved >= d.cfg.DQ.Slots {
		return true
	}
	for _, k := range q.window {
		if !q.done[k.dqID] {
			return next-k.dqID > uint64(d.cfg.DQ.StaleList)
		}
	}
	return false
}

func (h *dqHost) DQSubmit(l *device.Launch, deps []uint64) (uint64, error) {
	th := h.thread
	d := th.d
	if err := d.validateLaunch(l); err != nil {
		return 0, err
	}
	for _, dep := range deps {
		if dep == 0 || dep > d.dq.nextID {
			return 0, &device.APIError{Call: "DQSubmit", Code: "CUDA_ERROR_INVALID_VALUE",
				Msg: fmt.Sprintf("upstream id %d was never submitted (last id %d)", dep, d.dq.nextID)}
		}
	}
	th.charge(d.cost.dqSubmit, "DQSubmit")
	th.catchUp()
	for d.dqFull(d.dq.nextID + 1) {
		d.dq.fullWait = append(d.dq.fullWait, th)
		th.park("DQSubmit (dependency queue full)")
	}
	q := &d.dq
	q.nextID++
	id := q.nextID
	d.hbDQStale(th, id)
	for len(q.done) <= int(id) {
		q.done = append(q.done, false)
	}
	q.reserved++
	k := d.newCommand(cmdKernel)
	k.setLaunch(l)
	k.dqID = id
	k.dqDeps = append(k.dqDeps[:0], deps...)
	k.arrive = th.clock
	if d.hb.on {
		d.hbIssue(k)
		k.hbDeps = append(k.hbDeps[:0], deps...)
	}
	at := max(th.clock, q.busy) + d.cost.dqInsert
	q.busy = at
	d.outstanding++
	d.schedule(at, evDQInsert, 0, 0, k)
	return id, nil
}

func (h *dqHost) DQDone(id uint64) bool {
	th := h.thread
	d := th.d
	th.chargePoll(d.cost.dqPoll, "DQDone")
	th.catchUp()
	if id > 0 && id < uint64(len(d.dq.done)) && d.dq.done[id] {
		if d.hb.on {
			th.vc.join(d.hbDQKnown(id))
		}
		return true
	}
	th.failedPoll(pollTarget{"DQDone(%d)", int64(id), ""})
	return false
}

func (h *dqHost) DQSynchronize() error {
	th := h.thread
	d := th.d
	th.charge(d.cost.syncCall, "DQSynchronize")
	th.catchUp()
	if len(d.dq.window) > 0 || d.dq.reserved > 0 {
		d.dq.syncWait = append(d.dq.syncWait, th)
		th.park("DQSynchronize")
	}
	if d.hb.on {
		th.vc.join(d.hb.dqAll)
	}
	return nil
}

// dqInsert lands kernel k in the window.
func (d *Device) dqInsert(k *command) {
	q := &d.dq
	q.reserved--
	q.window = append(q.window, k)
	keep := k.dqDeps[:0]
	for _, dep := range k.dqDeps {
		if !q.done[dep] {
			keep = append(keep, dep)
		}
	}
	k.dqDeps = keep
	if len(keep) == 0 {
		d.dqDispatch(k)
	}
}

func (d *Device) dqDispatch(k *command) {
	k.waitReg = true // dispatched
	d.hbDQDispatch(k)
	k.firstAt = d.now + d.cost.dqDispatch
	d.acquireSlot(k)
}

// dqKernelDone starts the completion update of a finished kernel.
func (d *Device) dqKernelDone(k *command) {
	q := &d.dq
	at := max(d.now, q.busy) + d.cost.dqComplete
	q.busy = at
	d.schedule(at, evDQComplete, 0, 0, k)
}

// dqComplete removes k from the window and from every upstream list.
func (d *Device) dqComplete(k *command) {
	q := &d.dq
	q.done[k.dqID] = true
	d.hbDQDone(k) // before the dependents it releases start
	for i, w := range q.window {
		if w == k {
			copy(q.window[i:], q.window[i+1:])
			q.window[len(q.window)-1] = nil
			q.window = q.window[:len(q.window)-1]
			break
		}
	}
	for _, w := range q.window {
		if w.waitReg {
			continue
		}
		for j, dep := range w.dqDeps {
			if dep == k.dqID {
				w.dqDeps = append(w.dqDeps[:j], w.dqDeps[j+1:]...)
				break
			}
		}
		if len(w.dqDeps) == 0 {
			d.dqDispatch(w)
		}
	}
	d.outstanding--
	for _, th := range q.fullWait {
		d.wake(th, d.now)
	}
	q.fullWait = q.fullWait[:0]
	if len(q.window) == 0 && q.reserved == 0 {
		for _, th := range q.syncWait {
			d.wake(th, d.now)
		}
		q.syncWait = q.syncWait[:0]
	}
	d.checkIdle()
	d.release(k)
}
