package sim

import "github.com/gpusched/gpusched/device"

// Pinned copies each way at once over PCIe.
//
// A host-to-device and a device-to-host copy run on two copy engines but
// share one link: on an H200 a pinned copy each way at once moves its
// bytes about 1.1 times slower than alone (1.08-1.11 over three leases),
// at 4 MiB as at 64 MiB, while two the same way take turns at no loss
// (calibrate "copies both ways at once";
// calibration-h100.md "Session 25: copies both ways at once, modelled").
// With copy.duplex_slowdown s > 1 the two engines run their copies one at
// a time in issue order: a copy waits copy.latency_ns, then moves its
// bytes at its direction's rate, s times slower while the other engine's
// copy moves too, and every start or end of a transfer re-times the other
// engine's copy. Pageable copies (staged by the driver at a fifth to a
// seventh of the link's rate) neither slow nor are slowed: that was not
// measured. s <= 1 (left out), or a GPU with one engine for both
// directions: each copy's end is fixed when it starts, as before the field
// existed.

// pcieState is the two host copy engines while duplex is on, indexed
// engHtoD and engDtoH (copyengine.go).
type pcieState struct {
	on     bool
	duplex float64
	eng    [2]rateEngine
}

func (d *Device) resetPCIe() {
	p := &d.pcie
	for i := range p.eng {
		p.eng[i] = p.eng[i].emptied()
	}
	p.duplex = d.cfg.Copy.DuplexSlowdown
	p.on = p.duplex > 1 && d.info.CopyEngines >= 2
}

// pcieEvent is the b of a PCIe engine's copy events: engine + 1, so that
// b = 0 stays the device-to-device engine's (bandwidth.go).
func pcieEvent(eng int) int32 { return int32(eng) + 1 }

// startPCIe starts copy k on engine eng, or queues it; queued says k
// waited on the engine's queue for the copy before it.
func (d *Device) startPCIe(eng int, k *command, queued bool) {
	k.engine = eng
	if d.pcie.eng[eng].admit(k, d.now) {
		d.schedule(addTime(d.now, d.hostCopyLatency(eng, k, d.now, queued)), evCopyDone, copyMoves, pcieEvent(eng), k)
	}
}

// pcieMoving starts the transfer of engine eng's copy.
func (d *Device) pcieMoving(eng int) {
	e := &d.pcie.eng[eng]
	e.move(d.now, float64(d.copyTransfer(e.copy)))
	d.pcieRerate()
}

// pcieDone ends engine eng's copy k and starts the next queued one. With
// copy.stream_runs the engine stays idle until the events of this instant
// have run: a copy k's stream issues as k ends takes it before the queue
// (pciePick).
func (d *Device) pcieDone(eng int, k *command) {
	e := &d.pcie.eng[eng]
	e.finishKeep(k, d.now)
	d.pcieRerate()
	// The next copy follows k (hostcopies.go).
	d.noteHostCopy(k, d.now)
	if d.cfg.Copy.StreamRuns {
		if len(e.queue) > 0 {
			d.schedule(d.now, evCopyDone, copyPick, pcieEvent(eng), nil)
		}
		return
	}
	if next := e.pop(); next != nil {
		d.startPCIe(eng, next, true)
	}
}

// pciePick starts engine eng's first queued copy, unless a copy took the
// idle engine since its last copy ended.
func (d *Device) pciePick(eng int) {
	e := &d.pcie.eng[eng]
	if e.copy != nil {
		return
	}
	if next := e.pop(); next != nil {
		d.startPCIe(eng, next, true)
	}
}

// duplexing reports whether e's copy moves pinned bytes now.
func (e *rateEngine) duplexing() bool {
	return e.copy != nil && e.moving && !e.copy.pageable
}

// pcieRerate gives each moving copy the end its remaining bytes take at
// its slowdown now: duplex while both engines move pinned bytes, else 1.
func (d *Device) pcieRerate() {
	p := &d.pcie
	both := p.eng[0].duplexing() && p.eng[1].duplexing()
	for i := range p.eng {
		e := &p.eng[i]
		if !e.moving {
			continue
		}
		s := 1.0
		if both {
			s = p.duplex
		}
		if left, ok := e.setSlow(d.now, s); ok {
			e.seq = d.scheduleF(addTime(d.now, left), evCopyDone, 0, pcieEvent(i), 1, e.copy)
		}
	}
}

// copyTransfer is what the bytes of host copy k take at its direction's
// rate alone (pageable: at most copy.pageable_gbps).
func (d *Device) copyTransfer(k *command) Time { return d.transferTime(&k.cp, k.pageable) }

// transferTime is what host copy c's bytes take at its direction's rate
// alone (pageable: at most copy.pageable_gbps).
func (d *Device) transferTime(c *device.Copy, pageable bool) Time {
	gbps := d.cfg.Copy.HtoDGBps
	if c.Kind == device.DeviceToHost {
		gbps = d.cfg.Copy.DtoHGBps
	}
	if pageable {
		gbps = min(gbps, d.cfg.Copy.PageableGBps)
	}
	// bytes / (GB/s) is nanoseconds.
	return nsTime(float64(c.Bytes) / gbps)
}
