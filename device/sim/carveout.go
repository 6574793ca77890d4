package sim

import "fmt"

// The SM's L1/shared-memory carve-out (sm.shared_carveout_kb).
//
// An SM's unified L1 and shared memory is split at one of a few steps
// (Hopper: 0 to 228 KiB of shared memory). The driver sets the split for
// the kernel it places on an idle SM, the smallest step that holds the
// shared memory of that kernel's occupancy, and reconfigures an SM only
// when it is idle. Measured on the GPU (calibrate's mixed co-residency
// probe), a kernel needing shared memory released beside one using none
// does not start on any SM the other holds, although registers, threads
// and shared memory would fit: its blocks wait until the SMs empty. A
// kernel released beside one that set a larger carve-out co-runs.

// carveoutOn reports whether SMs have a carve-out.
func (d *Device) carveoutOn() bool { return len(d.cfg.SM.SharedCarveoutKB) > 0 }

// carveoutFor is the shared memory, in bytes, an idle SM's carve-out is
// set to for k: the smallest step that holds k's occupancy's shared
// memory (all of shared_per_sm when no step does).
func (d *Device) carveoutFor(k *command) int {
	need := k.perSM * k.res.Shared
	for _, kb := range d.cfg.SM.SharedCarveoutKB {
		if b := kb * 1024; b >= need {
			return b
		}
	}
	return d.info.SharedPerSM
}

// sharedFree is the shared memory, in bytes, free for k's blocks on sm:
// with the carve-out, an idle SM's is what k would set it to, a busy
// SM's what its carve-out leaves.
func (d *Device) sharedFree(k *command, sm *smState) int {
	switch {
	case !d.carveoutOn():
		return sm.shared
	case sm.resBlocks == 0:
		return d.carveoutFor(k)
	}
	return sm.shared - sm.carveCut
}

// setCarveout sets an idle SM's carve-out for k, whose blocks are about
// to land on it.
func (d *Device) setCarveout(k *command, sm *smState) {
	if d.carveoutOn() && sm.resBlocks == 0 {
		sm.carveCut = d.info.SharedPerSM - d.carveoutFor(k)
	}
}

// carveoutErr is what is wrong with c's sm.shared_carveout_kb ("" if
// nothing).
func carveoutErr(c *Config) string {
	prev := -1
	for _, kb := range c.SM.SharedCarveoutKB {
		switch {
		case kb <= prev:
			return fmt.Sprintf("steps must be ascending and not negative, got %v", c.SM.SharedCarveoutKB)
		case kb*1024 > c.Info.SharedPerSM:
			return fmt.Sprintf("step %d KiB is above info.shared_per_sm (%d bytes)", kb, c.Info.SharedPerSM)
		}
		prev = kb
	}
	return ""
}
