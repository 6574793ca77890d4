package sim

// Waits across engines.
//
// A command that reaches the GPU while the work it follows still runs on
// another engine (a copy behind a kernel or behind the other copy
// engine's copy, a kernel behind a copy; on its stream, or on another
// stream through an event wait) does not start when that work ends: it is looked at again a fixed
// period after it arrived, and every period after, and starts at the
// first look that finds the predecessor done. On an H200 a 64 KiB copy
// issued 0 to 14 us after a 20 us kernel's launch returned ends at a
// sawtooth of the delay, rising 1 us a microsecond and falling 8 us
// every 8.2 us, while a kernel issued after the same kernel ends at a
// flat 7.5 us (calibrate "waits across engines", session 32): a command
// arriving after its predecessor ended starts at once, one arriving
// before waits for the next look. Queued behind a gate, every command of
// a chain of copy-kernel jobs waits for a look, which is why such chains
// cost the GPU 12-13 us a job where their commands issued one by one,
// each after the one before ended, cost 10 ("copies and kernels issued
// live").

// workDone is a kernel, copy or graph that ended: its kind, its engine
// (a copy's; -1 otherwise) and when.
type workDone struct {
	kind   cmdKind
	engine int
	end    Time
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
		st.last = workDone{kind: k.kind, engine: -1, end: d.now}
	case cmdCopy:
		st.last = workDone{kind: cmdCopy, engine: k.engine, end: d.now}
	case cmdWait:
		if k.ev != nil && k.ev.last.end > st.last.end {
			st.last = k.ev.last
		}
	}
}

// pollAt is when stream head k may start: the first look at it after
// the work it follows, on another engine, ended (front_end.copy_poll_ns
// for a copy behind a kernel or behind the other copy engine's copy,
// kernel_poll_ns for a kernel behind a copy), or 0 where none applies:
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
	n := (st.last.end - k.arrive + period - 1) / period
	k.polled = true
	return k.arrive + n*period
}
