package sim

// The callback thread's release waits for the host's driver calls.
//
// On an H200 the callback thread's release of the work queued behind a
// host function (front_end.callback_release_ns) comes later while a host
// thread is making driver calls: 1 or 4 streams each behind a 100 us gate,
// a no-op host function and a record behind it; the record lands 10-19 us
// later than with the host spinning when the host queries an event back
// to back, 15-30 us later when it launches empty kernels, 20-40 us later
// (medians; some rounds 150-700 us) when it updates and launches SET-batch's
// chunk graph (calibrate "host function releases beside driver calls",
// session 36, three leases; calibration-h100.md "Session 36"). As if the
// callback thread took a lock every driver call holds: with
// front_end.callback_release_host_wait_ns w set, a release that would
// begin while a host thread is inside a driver call begins when that call
// returns, plus w (the sleeping thread's hand-off), and the callback
// thread is busy meanwhile; one that begins between calls does not wait.
// SET-batch's dispatcher is in such calls, launching one worker's chunk,
// when another worker's completion callback releases its queued chunk.
// One wait, not more: a thread that waited for every call back to back
// (the host re-taking the lock first) would starve through the probe's
// 400 us of launches, which the GPU mostly does not. Nor is it only the
// call a release falls inside: launches spaced 2-40 us apart delay it
// about as much on a fourth lease; the one wait stands in, on average,
// for the host's driver activity as such.

// hostCall is a driver call's time on its host thread.
type hostCall struct{ from, to Time }

// noteHostCall keeps the thread's call [from, to) while the model is on,
// dropping its calls that have ended (a thread's calls come in order).
func (th *thread) noteHostCall(from, to Time) {
	if th.d.cost.releaseHostWait == 0 || to <= from {
		return
	}
	th.dropEndedCalls()
	th.calls = append(th.calls, hostCall{from, to})
}

// dropEndedCalls drops the thread's calls that ended by now (now only
// grows) from the front, moving the rest down only once half are gone.
func (th *thread) dropEndedCalls() {
	for th.callsHead < len(th.calls) && th.calls[th.callsHead].to <= th.d.now {
		th.callsHead++
	}
	if th.callsHead > 32 && 2*th.callsHead > len(th.calls) {
		th.calls = append(th.calls[:0], th.calls[th.callsHead:]...)
		th.callsHead = 0
	}
}

// releaseHostWait is how much later than now the callback thread's
// release starts: until the end of the driver call a host thread is
// inside now, plus the hand-off; 0 when none is.
func (d *Device) releaseHostWait() Time {
	if d.cost.releaseHostWait == 0 {
		return 0
	}
	end := Time(0)
	for _, th := range d.threads {
		th.dropEndedCalls()
		if c := th.calls[th.callsHead:]; len(c) > 0 && c[0].from <= d.now {
			end = max(end, c[0].to)
		}
	}
	if end == 0 {
		return 0
	}
	return end - d.now + d.cost.releaseHostWait
}
