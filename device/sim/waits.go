package sim

// Waits across engines.
//
// A command that reaches the GPU while its stream predecessor still runs
// on another engine (a copy behind a kernel, a kernel behind a copy) does
// not start when the predecessor ends: it is looked at again a fixed
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

// pollAt is when stream head k may start: the first look at it after
// its stream predecessor on another engine ended (front_end.copy_poll_ns
// for a copy behind a kernel, kernel_poll_ns for a kernel behind a copy),
// or 0 where none applies: k arrived after the predecessor ended, the
// predecessor ran on k's own engine, or the period is not set.
func (d *Device) pollAt(k *command) Time {
	st := k.st
	if st == nil || k.gr != nil || st.lastWorkEnd <= k.arrive {
		return 0
	}
	var period Time
	switch {
	case k.kind == cmdCopy && st.lastWork == cmdKernel:
		period = d.cost.copyPoll
	case k.kind == cmdKernel && st.lastWork == cmdCopy:
		period = d.cost.kernelPoll
	}
	if period <= 0 {
		return 0
	}
	n := (st.lastWorkEnd - k.arrive + period - 1) / period
	k.polled = true
	return k.arrive + n*period
}
