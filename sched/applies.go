package sched

import (
	"slices"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// Trait is a structure that a program (or the device it runs on) offers and
// a scheduling strategy may need. Whether a strategy applies to a workload
// is computed from these, never listed by hand: each scheduler says what
// it needs (Needer), and ProgramTraits and DeviceTraits say what a program
// and a device offer.
type Trait string

const (
	// TraitOps: kernels and copies with buffer access sets, from which the
	// dependency DAG follows. Every program offers it; a scheduler that
	// declares no needs needs only this.
	TraitOps Trait = "ops"
	// TraitWholeProgram: every step's operations are known before the
	// program runs (not workloads.Program.Dynamic), so a strategy may plan
	// or capture the whole program ahead.
	TraitWholeProgram Trait = "whole-program"
	// TraitStaticSteps: every step is the same operations on the same
	// buffers, so one captured graph replays any step.
	TraitStaticSteps Trait = "static-steps"
	// TraitIndependentSteps: two or more steps, none of which writes a
	// device buffer another step reads or writes (tasks that may run
	// concurrently, as KeSCo's processes).
	TraitIndependentSteps Trait = "independent-steps"
	// TraitJobs: independent steps of one shape, the same kernels in the
	// same order on each job's own buffers (SET's pipelines).
	TraitJobs Trait = "jobs"
	// TraitTilePairs: a producer and a consumer tile kernel, the consumer
	// reading the producer's output (cuSync's pairs). The program's
	// kernels show it; the tile workloads' package recognizes them.
	TraitTilePairs Trait = "tile-pairs"
	// TraitDependencyQueue: the device has a hardware dependency queue
	// (device.DependencyQueue; ACS-HW, simulator only).
	TraitDependencyQueue Trait = "dependency-queue"
)

// Needer is a scheduler that needs more than a program's operations.
type Needer interface {
	// Needs lists the traits a program and its device must offer.
	Needs() []Trait
}

// NeedsOf is what s needs: TraitOps and, for a Needer, its Needs.
func NeedsOf(s Scheduler) []Trait {
	out := []Trait{TraitOps}
	if n, ok := s.(Needer); ok {
		for _, t := range n.Needs() {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Missing lists what s needs that offers lack; s applies where it is empty.
func Missing(s Scheduler, offers []Trait) []Trait {
	var out []Trait
	for _, t := range NeedsOf(s) {
		if !slices.Contains(offers, t) {
			out = append(out, t)
		}
	}
	return out
}

// DeviceTraits is what the host h's device offers beyond running programs.
func DeviceTraits(h device.Host) []Trait {
	if _, ok := h.(device.DependencyQueue); ok {
		return []Trait{TraitDependencyQueue}
	}
	return nil
}

// ProgramTraits computes the traits of p that follow from its steps and
// access sets (every trait but tile pairs and the device's).
func ProgramTraits(p *workloads.Program) []Trait {
	out := []Trait{TraitOps}
	if !p.Dynamic {
		out = append(out, TraitWholeProgram)
	}
	if ok, _ := StaticProgram(p); ok {
		out = append(out, TraitStaticSteps)
	}
	if len(p.Steps) < 2 || !independentSteps(p) {
		return out
	}
	out = append(out, TraitIndependentSteps)
	if sameShape(p) {
		out = append(out, TraitJobs)
	}
	return out
}

// independentSteps reports whether no step writes a device buffer that
// another step reads or writes.
func independentSteps(p *workloads.Program) bool {
	owner := make([]int, len(p.Buffers)) // step+1 of the one step touching it, -1 for several
	writer := make([]bool, len(p.Buffers))
	for s := range p.Steps {
		for k := range p.Steps[s].Ops {
			for _, a := range opBuffers(&p.Steps[s].Ops[k]) {
				switch o := owner[a.buf]; {
				case o == 0:
					owner[a.buf] = s + 1
				case o != s+1:
					owner[a.buf] = -1
				}
				writer[a.buf] = writer[a.buf] || a.write
				if owner[a.buf] == -1 && writer[a.buf] {
					return false
				}
			}
		}
	}
	return true
}

// sameShape reports whether every step has step 0's kinds of operations
// and kernels, in the same order.
func sameShape(p *workloads.Program) bool {
	first := p.Steps[0].Ops
	for _, st := range p.Steps[1:] {
		if len(st.Ops) != len(first) {
			return false
		}
		for k := range st.Ops {
			a, b := &st.Ops[k], &first[k]
			if a.Kind != b.Kind || a.Kernel != b.Kernel || (a.Kind == workloads.OpCopy && a.Copy.Kind != b.Copy.Kind) {
				return false
			}
		}
	}
	return true
}

type bufAccess struct {
	buf   int
	write bool
}

// opBuffers lists the device buffers op accesses.
func opBuffers(op *workloads.Op) []bufAccess {
	var out []bufAccess
	switch op.Kind {
	case workloads.OpKernel:
		for _, a := range op.Args {
			if a.Buf >= 0 {
				out = append(out, bufAccess{a.Buf, a.Mode&device.Write != 0})
			}
		}
	case workloads.OpCopy:
		switch c := op.Copy; c.Kind {
		case device.HostToDevice:
			out = append(out, bufAccess{c.Dst, true})
		case device.DeviceToHost:
			out = append(out, bufAccess{c.Src, false})
		case device.DeviceToDevice:
			out = append(out, bufAccess{c.Src, false}, bufAccess{c.Dst, true})
		}
	}
	return out
}
