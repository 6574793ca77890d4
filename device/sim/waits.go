package sim

// Waits across engines.
//
// A command that reaches the GPU while the work it follows still runs on
// another engine (a copy behind a kernel or behind the other copy
// engine's copy, a kernel behind a copy; on its stream, or on another
// stream through an event wait) does not start when that work ends: it
// is looked at again a fixed period after it arrived, and every period
// after, and starts at the first look that finds the work done. On an
// H200 a 64 KiB copy issued 0 to 14 us after a 20 us kernel's launch
// returned ends on a sawtooth of the delay, rising 1 us a microsecond and
// falling 8 us every 8.2 us, while a kernel issued after the same kernel
// ends at a flat 7.5 us (calibrate "waits across engines", session 32): a
// command arriving after the work ended starts at once, one arriving
// while it runs waits for the next look (front_end.copy_poll_ns,
// kernel_poll_ns).
//
// In a running pipeline, where a command arrives before the work it
// waits on has started, it does not wait for a look: 16 copy-kernel-copy
// jobs cost the GPU 2-5 us a job more than with no wait across engines,
// live or queued behind a gate, where a look per wait would add 9-12. With
// front_end.engine_wait_ns set such a command starts that long after the
// work ends instead. The shipped configs set none of these fields
// (docs/results/calibration-h100.md "Session 32").

// workDone is a kernel, copy or graph that ended: its kind, its engine
// (a copy's; -1 otherwise), when it started and when it ended.
type workDone struct {
	kind       cmdKind
	engine     int
	start, end Time
}

// noteWorkDone records k, which has just ended on its stream, as the
// work the stream's next commands follow: a kernel, copy or graph itself;
// for a stream wait, the work before the record it waited on, when that
// ended later than the stream's own (a command behind a wait on another
// stream's copy waits on the copy engine). The event keeps what its
// latest completed record followed: a wait bound to an earlier record
// reads the later one's, which is rare and only shifts a poll.
func (d *Device) noteWorkDone(k *command) {
	st := k.st
	switch k.kind {
	case cmdKernel, cmdGraph:
		st.last = workDone{kind: k.kind, engine: -1, start: k.start, end: d.now}
	case cmdCopy:
		st.last = workDone{kind: cmdCopy, engine: k.engine, start: k.start, end: d.now}
	case cmdWait:
		if k.ev != nil && k.ev.last.end > st.last.end {
			st.last = k.ev.last
		}
	}
}

// pollAt is when stream head k may start: the first look at it after
// the work it follows, on another engine, ended (front_end.copy_poll_ns
// for a copy behind a kernel or behind the other copy engine's copy,
// kernel_poll_ns for a kernel behind a copy), or engine_wait_ns after
// that work ended if k arrived before it started, or 0 where none applies:
// k arrived after that work ended, the work ran on k's own engine (a
// kernel behind a kernel, on any stream, does not poll: "waits across
// engines", session 32), or the period is not set.
func (d *Device) pollAt(k *command) Time {
	st := k.st
	if st == nil || k.gr != nil || st.last.end <= k.arrive {
		return 0
	}
	var period Time
	switch {
	case k.kind == cmdCopy && st.last.kind == cmdKernel:
		period = d.cost.copyPoll
	case k.kind == cmdCopy && st.last.kind == cmdCopy && st.last.engine != d.copyEngine(&k.cp):
		period = d.cost.copyPoll
	case k.kind == cmdKernel && st.last.kind == cmdCopy:
		period = d.cost.kernelPoll
	}
	if period <= 0 {
		return 0
	}
	// Queued before the work started: a running pipeline's wait.
	if x := d.cost.engineWait; x > 0 && k.arrive < st.last.start {
		k.polled = true
		return st.last.end + x
	}
	n := (st.last.end - k.arrive + period - 1) / period
	k.polled = true
	return k.arrive + n*period
}
