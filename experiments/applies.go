package experiments

import (
	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/tilesync"
	"github.com/gpusched/gpusched/workloads"
)

// ProgramOffers is what program p offers a scheduler: the traits of its
// steps and access sets (sched.ProgramTraits) and its tile pairs.
func ProgramOffers(p *workloads.Program) []sched.Trait {
	out := sched.ProgramTraits(p)
	if tilesync.HasPairs(p) {
		out = append(out, sched.TraitTilePairs)
	}
	return out
}

// DeviceOffers is what dev offers beyond running programs (a hardware
// dependency queue), found on a host thread of an empty Run.
func DeviceOffers(dev device.Device) ([]sched.Trait, error) {
	var out []sched.Trait
	err := dev.Run(func(h device.Host) error {
		out = sched.DeviceTraits(h)
		return nil
	})
	return out, err
}

// Applies reports what scheduler kind s needs that workload p on a device
// offering dev lacks (nil: it applies).
func Applies(s sched.Scheduler, p *workloads.Program, dev []sched.Trait) []sched.Trait {
	return sched.Missing(s, append(ProgramOffers(p), dev...))
}
