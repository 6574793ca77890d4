package sim

import "github.com/gpusched/gpusched/device"

// Other streams' copies slow the callback path.
//
// On an H200 a host function's hand-off (its stream reaching it, the
// driver's callback thread running it, its Put waking the host thread
// in Get) after a 20-110 us kernel takes 41-53 us alone and as long
// beside other streams running graphs, but 1.4-6.3 us longer beside one
// other stream copying 1.6 MB in and then out, and 2.8-17.6 us longer
// beside three: the more of those copies are still to run when the host
// function becomes ready, the longer, by about a tenth of their time left
// (calibrate "callbacks beside running graphs", session 34 call 5;
// calibration-h100.md "Other streams' copies delay a host function's
// hand-off"). But not without bound: beside copies of 6.6 MB each way,
// whose time left is 120-680 us, it grows by 14-19 us beside one stream
// and 15-36 beside three, and beside 0.4 MB copies by 0-2 us (session 35;
// "Session 35" there). With front_end.callback_copy_delay f set, a
// callback starts f times the pinned host copies' time left later than it
// would, but at most front_end.callback_copy_delay_max_ns later: the
// transfer time, at each direction's rate alone, of the copies moving or
// waiting on the host engines and of those issued to the GPU behind other
// work (a stream's as it is called, a graph's copy nodes as the graph
// starts) that have not reached their engine yet. Copies a callback's
// own work issues after it do not count, nor do device-to-device ones; a
// pageable copy (staged by the driver with the host waiting) counts only
// once on its engine, where the engines' time left does not tell it
// apart. On the
// H200 f = 0.16 and a bound of 16 us fit the probe's 32 figures on two
// leases within 2.1 us on average (8.8 us without the delay), as if the
// callback path were slowed by what the copies move in the next 100 us.

// noteCopyIssued counts copy c, just issued, among the copies not yet on
// their engine.
func (d *Device) noteCopyIssued(c *device.Copy, pageable bool) {
	if c.Kind != device.DeviceToDevice && !pageable {
		d.copiesIssued += d.transferTime(c, false)
	}
}

// noteCopyStarted takes copy k, reaching its engine now, off the copies
// not yet on their engine.
func (d *Device) noteCopyStarted(k *command) {
	if k.cp.Kind != device.DeviceToDevice && !k.pageable {
		d.copiesIssued = max(0, d.copiesIssued-d.transferTime(&k.cp, false))
	}
}

// callbackCopyDelay is what the host copies' time left adds to a callback
// becoming ready now (front_end.callback_copy_delay of it, at most
// front_end.callback_copy_delay_max_ns).
func (d *Device) callbackCopyDelay() Time {
	f := d.cfg.FrontEnd.CallbackCopyDelay
	if f <= 0 {
		return 0
	}
	return min(psTime(f*float64(d.hostCopiesLeft())), nsTime(d.cfg.FrontEnd.CallbackCopyDelayMaxNs))
}

// hostCopiesLeft is the transfer time, at each direction's rate alone, of
// the host copies on the host engines (moving or queued) and of the pinned
// ones issued and not yet there.
func (d *Device) hostCopiesLeft() Time {
	left := d.copiesIssued
	if !d.pcie.on {
		// Each copy's end is fixed as it starts: the engines are busy
		// until copyFree.
		for _, eng := range []int{engHtoD, engDtoH} {
			left += max(0, d.copyFree[eng]-d.now)
		}
		return left
	}
	for i := range d.pcie.eng {
		e := &d.pcie.eng[i]
		if e.copy != nil {
			left += e.left(d.now, d.copyTransfer(e.copy))
		}
		for _, k := range e.queue {
			left += d.copyTransfer(k)
		}
	}
	return left
}
