package rl

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// Params configure the rl-physics workload. Zero values are not defaults:
// start from DefaultParams.
type Params struct {
	Env          string  `yaml:"env"`            // ant, humanoid, halfcheetah, walker2d, grasp
	Envs         int     `yaml:"envs"`           // batch size
	EnvsPerGroup int     `yaml:"envs_per_group"` // environments per kernel
	Steps        int     `yaml:"steps"`          // physics steps in the program
	Warmup       int     `yaml:"warmup"`         // steps run on the host before the program's first
	Iterations   int     `yaml:"iterations"`     // constraint-solver iterations per step
	DT           float64 `yaml:"dt"`             // step, s
	Damping      float64 `yaml:"damping"`        // velocity kept per step (1 = none lost)
	ActionScale  float64 `yaml:"action_scale"`   // largest velocity change an action applies, m/s
	Drop         float64 `yaml:"drop"`           // largest initial clearance above the ground, m
	Block        int     `yaml:"block"`          // threads per block
	// Order is the issue order of the kernels: "phase" (each phase for every
	// group, as a batched physics library issues them) or "group" (each
	// group's whole step, then the next group's).
	Order string `yaml:"order"`
}

// DefaultParams is an ant batch of 128 environments in 8 groups: about 200
// kernels per step, most of 1 to 4 blocks.
func DefaultParams() Params {
	return Params{Env: "ant", Envs: 128, EnvsPerGroup: 16, Steps: 8, Warmup: 20, Iterations: 4,
		DT: 0.01, Damping: 0.999, ActionScale: 0.2, Drop: 0.1, Block: 64, Order: "phase"}
}

// Limits of the generator, besides the program limits of workloads: it
// simulates the whole batch on the host first (warmup and program steps,
// every solver iteration), so the host's work is bounded too. The
// committed experiments use 128 environments x 28 steps x 4 iterations.
const (
	MaxEnvs = 1 << 20
	// MaxEnvSteps bounds envs x (warmup + steps) x iterations.
	MaxEnvSteps = 1 << 22
	// MaxActionScale (m/s) and MaxDrop (m) keep the bodies within
	// float32's useful range (the defaults are 0.2 and 0.1); at 1e300 the
	// host reference's velocities become infinite.
	MaxActionScale, MaxDrop = 100.0, 100.0
	// maxFixedKernels and maxIterKernels bound the kernels one group issues per step:
	// actuate, integrate, broadphase, clear, velocity and observe, one
	// narrow-phase kernel per contact type, and per iteration one solve per
	// contact type, apply and the rods.
	maxFixedKernels = 6 + numContactTypes
	maxIterKernels  = numContactTypes + 2
)

// plan is what generate builds and simulates: at most maxFixedKernels +
// iterations x maxIterKernels kernels per group and step.
func (p *Params) plan() (workloads.Plan, workloads.Size) {
	f := workloads.F
	perGroup := workloads.Product(f("iterations", p.Iterations), f("kernels per iteration", maxIterKernels)).
		Plus(workloads.Product(f("kernels per step", maxFixedKernels)))
	ops := perGroup.Times(f("groups", p.Envs/p.EnvsPerGroup)).Times(f("steps", p.Steps))
	work := workloads.Product(f("envs", p.Envs), f("warmup+steps", p.Warmup+p.Steps), f("iterations", p.Iterations))
	return workloads.Plan{Ops: ops}, work
}

func (p *Params) check() error {
	if _, err := newTemplate(p.Env); err != nil {
		return err
	}
	if err := checkLayout(p.Envs, p.EnvsPerGroup); err != nil {
		return err
	}
	if err := p.checkRanges(); err != nil {
		return err
	}
	plan, work := p.plan()
	if err := work.Check("environment-steps of host simulation", MaxEnvSteps, "rl.MaxEnvSteps"); err != nil {
		return err
	}
	return plan.Check()
}

func (p *Params) checkRanges() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case p.Envs > MaxEnvs:
		return fmt.Errorf("envs must be at most %d (rl.MaxEnvs), got %d", MaxEnvs, p.Envs)
	case p.Steps > MaxEnvSteps || p.Warmup > MaxEnvSteps || p.Iterations > MaxEnvSteps:
		return fmt.Errorf("steps (%d), warmup (%d) and iterations (%d) must each be at most %d (rl.MaxEnvSteps)", p.Steps, p.Warmup, p.Iterations, MaxEnvSteps)
	case !finite(p.ActionScale) || !finite(p.Drop) || p.ActionScale > MaxActionScale || p.Drop > MaxDrop:
		return fmt.Errorf("action_scale (%g) and drop (%g) must be finite, at most %g m/s and %g m (rl.MaxActionScale, MaxDrop)", p.ActionScale, p.Drop, MaxActionScale, MaxDrop)
	}
	switch {
	case p.Steps <= 0:
		return fmt.Errorf("steps must be positive, got %d", p.Steps)
	case p.Warmup < 0:
		return fmt.Errorf("warmup must not be negative, got %d", p.Warmup)
	case p.Iterations <= 0:
		return fmt.Errorf("iterations must be positive, got %d", p.Iterations)
	case !(p.DT > 0 && p.DT <= 0.1):
		return fmt.Errorf("dt must be in (0, 0.1] s, got %g", p.DT)
	case !(p.Damping > 0 && p.Damping <= 1):
		return fmt.Errorf("damping must be in (0, 1], got %g", p.Damping)
	case p.ActionScale < 0:
		return fmt.Errorf("action_scale must not be negative, got %g", p.ActionScale)
	case p.Drop < 0:
		return fmt.Errorf("drop must not be negative, got %g", p.Drop)
	case p.Block <= 0 || p.Block > 1024 || p.Block%32 != 0:
		return fmt.Errorf("block must be a multiple of 32 in [32, 1024], got %d", p.Block)
	case p.Order != "phase" && p.Order != "group":
		return fmt.Errorf("order must be phase or group, got %q", p.Order)
	}
	return nil
}

// Buffer indices of the program.
const (
	bPos = iota
	bPrev
	bVel
	bInvMass
	bRadius
	bRods
	bRest
	bPairIdx
	bPairRad
	bAct
	bLists
	bContacts
	bGather
	bMask
	bObs
	bDelta0 // one per contact type
)

// Tolerance of Check: the kernels are written to match the reference bit for
// bit (see physics.go), so on a conforming GPU the difference is zero; the
// bound only absorbs a last-place difference that chaotic contact dynamics
// might grow over a few steps.
const (
	checkAbs = 1e-4
	checkRel = 1e-4
)

// section is a [off, off+n) range of elements of a list buffer.
type section struct{ off, n int }

// Generate builds the rl-physics program: it runs the whole batch on the
// host (the reference, which also decides each step's contact kernels) and
// emits, per step, the kernels of every group.
func Generate(p Params, seed int64) (*workloads.Program, error) {
	prog, _, err := generate(p, seed)
	return prog, err
}

func generate(p Params, seed int64) (*workloads.Program, *referenceOutputs, error) {
	if err := p.check(); err != nil {
		return nil, nil, fmt.Errorf("rl-physics: %w", err)
	}
	tpl, err := newTemplate(p.Env)
	if err != nil {
		return nil, nil, err
	}
	kern, err := lookupKernels()
	if err != nil {
		return nil, nil, err
	}
	m := newModel(tpl, p.Envs, p.EnvsPerGroup)
	c := stepConsts{dt: float32(p.DT), gdt: gravity * float32(p.DT), invdt: 1 / float32(p.DT), damp: float32(p.Damping), iterations: p.Iterations}
	run := runOnHost(p, m, c, seed)
	lay := layOut(m, run.decisions)
	e := emitter{m: m, p: p, k: kern, c: c, secs: func(s, g, t int) (section, section, section) {
		x := lay.secs[s][g][t]
		return x.list, x.contacts, x.gather
	}}
	prog := &workloads.Program{Name: fmt.Sprintf("rl-physics(%s,envs=%d/%d,steps=%d)", p.Env, p.Envs, p.EnvsPerGroup, p.Steps), Buffers: buffers(p, m, run, lay)}
	for s := 0; s < p.Steps; s++ {
		prog.Steps = append(prog.Steps, workloads.Step{Ops: e.step(s, run.decisions[s])})
	}
	want := &referenceOutputs{pos: run.st.pos, vel: run.st.vel, obs: run.obs, mask: run.masks, pairs: m.pairs() > 0}
	prog.Check = want.check
	prog.Dynamic = true // the host picks each step's contact kernels from the last step's state
	return prog, want, nil
}

// hostRun is the batch run on the host: the state the program starts
// from, the actions it applies, and each step's results and decisions
// (which contact kernels run, over which lists).
type hostRun struct {
	init, st  *state // at the program's first step, and after its last
	acts, obs []float32
	masks     []uint32
	decisions [][]*groupStep // per step, per group
}

// runOnHost runs the warm-up steps and then the program's steps on the
// host, recording each decision.
func runOnHost(p Params, m *model, c stepConsts, seed int64) *hostRun {
	rng := rand.New(rand.NewSource(seed))
	st := m.initialState(rng, float32(p.Drop))
	nPart := m.gp * m.groups
	action := func() []float32 {
		a := make([]float32, 3*nPart)
		for i := range a {
			a[i] = float32(p.ActionScale) * (2*rng.Float32() - 1)
		}
		return a
	}
	obsScratch := make([]float32, 4*p.Envs)
	for w := 0; w < p.Warmup; w++ {
		act := action()
		for g := 0; g < m.groups; g++ {
			m.stepGroup(st, g, act[3*g*m.gp:3*(g+1)*m.gp], c, obsScratch[4*g*m.envsPerGroup:])
		}
	}
	r := &hostRun{
		init:      &state{pos: append([]float32(nil), st.pos...), prev: append([]float32(nil), st.prev...), vel: append([]float32(nil), st.vel...)},
		st:        st,
		acts:      make([]float32, 0, 3*nPart*p.Steps),
		obs:       make([]float32, 4*p.Envs*p.Steps),
		masks:     make([]uint32, 0, p.Steps*m.groups*m.pairs()),
		decisions: make([][]*groupStep, p.Steps),
	}
	for s := 0; s < p.Steps; s++ {
		act := action()
		r.acts = append(r.acts, act...)
		for g := 0; g < m.groups; g++ {
			gs := m.stepGroup(st, g, act[3*g*m.gp:3*(g+1)*m.gp], c, r.obs[4*(s*p.Envs+g*m.envsPerGroup):])
			r.masks = append(r.masks, gs.mask...)
			r.decisions[s] = append(r.decisions[s], gs)
		}
	}
	return r
}

// sections are where a step's group's contact type finds its list, its
// contacts and its gather rows.
type sections struct{ list, contacts, gather section }

// listLayout holds every step's contact lists, contacts and gather rows,
// laid out one after another.
type listLayout struct {
	lists, gather []int32
	contactsLen   int
	secs          [][][numContactTypes]sections // per step, per group, per type
}

// layOut lays out the per-step lists, contacts and gather rows.
func layOut(m *model, decisions [][]*groupStep) *listLayout {
	l := &listLayout{secs: make([][][numContactTypes]sections, len(decisions))}
	for s := range decisions {
		l.secs[s] = make([][numContactTypes]sections, m.groups)
		for g, gs := range decisions[s] {
			for t := 0; t < numContactTypes; t++ {
				if !gs.present(t) {
					continue
				}
				sc := &l.secs[s][g][t]
				sc.list = section{len(l.lists), len(gs.lists[t])}
				l.lists = append(l.lists, gs.lists[t]...)
				sc.contacts = section{l.contactsLen, contactFloats * len(gs.lists[t])}
				l.contactsLen += contactFloats * len(gs.lists[t])
				if t >= numClasses {
					sc.gather = section{len(l.gather), len(gs.gather[t])}
					l.gather = append(l.gather, gs.gather[t]...)
				}
			}
		}
	}
	return l
}

// buffers are the program's device buffers, in the order of the b*
// indices, then a delta buffer per contact type.
func buffers(p Params, m *model, run *hostRun, l *listLayout) []workloads.BufferSpec {
	f32 := int64(4)
	nPart := m.gp * m.groups
	bufs := []workloads.BufferSpec{
		bPos:      {Name: "pos", Bytes: 3 * f32 * int64(nPart), Init: putF32(run.init.pos), Output: true},
		bPrev:     {Name: "prev", Bytes: 3 * f32 * int64(nPart), Init: putF32(run.init.prev)},
		bVel:      {Name: "vel", Bytes: 3 * f32 * int64(nPart), Init: putF32(run.init.vel), Output: true},
		bInvMass:  {Name: "invmass", Bytes: f32 * int64(m.gp), Init: putF32(m.invmass)},
		bRadius:   {Name: "radius", Bytes: f32 * int64(m.gp), Init: putF32(m.radius)},
		bRods:     {Name: "rods", Bytes: 2 * f32 * int64(max(1, len(m.rest))), Init: putI32(m.rods)},
		bRest:     {Name: "rod_rest", Bytes: f32 * int64(max(1, len(m.rest))), Init: putF32(m.rest)},
		bPairIdx:  {Name: "pair_idx", Bytes: 4 * f32 * int64(max(1, m.pairs())), Init: putI32(m.pairIdx)},
		bPairRad:  {Name: "pair_rad", Bytes: 2 * f32 * int64(max(1, m.pairs())), Init: putF32(m.pairRad)},
		bAct:      {Name: "actions", Bytes: f32 * int64(len(run.acts)), Init: putF32(run.acts)},
		bLists:    {Name: "contact_lists", Bytes: f32 * int64(max(1, len(l.lists))), Init: putI32(l.lists)},
		bContacts: {Name: "contacts", Bytes: f32 * int64(max(1, l.contactsLen))},
		bGather:   {Name: "gather", Bytes: f32 * int64(max(1, len(l.gather))), Init: putI32(l.gather)},
		bMask:     {Name: "broadphase", Bytes: f32 * int64(max(1, p.Steps*m.groups*m.pairs())), Output: true},
		bObs:      {Name: "obs", Bytes: f32 * int64(len(run.obs)), Output: true},
	}
	for d := 0; d < numContactTypes; d++ {
		bufs = append(bufs, workloads.BufferSpec{Name: "delta_" + contactTypeNames[d], Bytes: 4 * f32 * int64(nPart)})
	}
	return bufs
}

type kernelSet struct {
	actuate, integrate, broad, clear, rods, apply, velocity, observe *device.Kernel
	narrow, solve                                                    [numContactTypes]*device.Kernel
}

func lookupKernels() (*kernelSet, error) {
	var k kernelSet
	var err error
	get := func(dst **device.Kernel, name string) {
		if err == nil {
			*dst, err = kernels.Lookup("rl", name)
		}
	}
	get(&k.actuate, "rl_actuate")
	get(&k.integrate, "rl_integrate")
	get(&k.broad, "rl_broadphase")
	get(&k.clear, "rl_clear")
	get(&k.rods, "rl_solve_rods")
	get(&k.apply, "rl_apply")
	get(&k.velocity, "rl_velocity")
	get(&k.observe, "rl_observe")
	for t, n := range contactTypeNames {
		get(&k.narrow[t], "rl_"+n)
		get(&k.solve[t], "rl_solve_"+n)
	}
	return &k, err
}

// emitter turns the host's decisions into kernel operations.
type emitter struct {
	m    *model
	p    Params
	k    *kernelSet
	c    stepConsts
	secs func(s, g, t int) (list, contacts, gather section)
}

func i32(v int) workloads.ArgSpec { return workloads.Scalar32(int32(v)) }

// Argument ranges in bytes.
func rng3(buf, g, gp int, mode device.Access) workloads.ArgSpec {
	return workloads.BufRange(buf, mode, int64(12*g*gp), int64(12*gp))
}
func rng4(buf, g, gp int, mode device.Access) workloads.ArgSpec {
	return workloads.BufRange(buf, mode, int64(16*g*gp), int64(16*gp))
}
func rngSec(buf int, sec section, mode device.Access) workloads.ArgSpec {
	return workloads.BufRange(buf, mode, int64(4*sec.off), int64(4*sec.n))
}
func whole(buf int) workloads.ArgSpec { return workloads.BufArg(buf, device.Read) }

// step emits step s: phases in Params.Order.
func (e *emitter) step(s int, gs []*groupStep) []workloads.Op {
	x := &stepEmit{e: e, m: e.m, gp: e.m.gp, s: s, gs: gs}
	// phases[ph](g) appends group g's kernels of phase ph.
	phases := []func(g int) []workloads.Op{x.actuate, x.integrate, x.broadphase, x.clear, x.narrow}
	for it := 0; it < e.p.Iterations; it++ {
		phases = append(phases, x.solve(it), x.apply(it), x.rods(it))
	}
	phases = append(phases, x.velocity, x.observe)
	var ops []workloads.Op
	if e.p.Order == "group" {
		for g := 0; g < x.m.groups; g++ {
			for _, ph := range phases {
				ops = append(ops, ph(g)...)
			}
		}
		return ops
	}
	for _, ph := range phases {
		for g := 0; g < x.m.groups; g++ {
			ops = append(ops, ph(g)...)
		}
	}
	return ops
}

// stepEmit emits the kernels of step s, a phase at a time: each method
// returns group g's kernels of its phase.
type stepEmit struct {
	e  *emitter
	m  *model
	gp int // particles per group
	s  int
	gs []*groupStep
}

// op is a kernel over n threads in blocks of Params.Block.
func (x *stepEmit) op(name string, k *device.Kernel, n int, w perThread, args ...workloads.ArgSpec) workloads.Op {
	b := x.e.p.Block
	return workloads.Op{Name: name, Kind: workloads.OpKernel, Kernel: k, Grid: device.D1((n + b - 1) / b), Block: device.D1(b), Args: args, Work: w.block(b)}
}

func (x *stepEmit) actuate(g int) []workloads.Op {
	s, gp := x.s, x.gp
	actOff := int64(12 * (s*x.m.groups*gp + g*gp))
	return []workloads.Op{x.op(fmt.Sprintf("actuate[s%d,g%d]", s, g), x.e.k.actuate, 3*gp, wActuate,
		rng3(bVel, g, gp, device.ReadWrite), workloads.BufRange(bAct, device.Read, actOff, int64(12*gp)), i32(gp))}
}

func (x *stepEmit) integrate(g int) []workloads.Op {
	s, gp := x.s, x.gp
	return []workloads.Op{x.op(fmt.Sprintf("integrate[s%d,g%d]", s, g), x.e.k.integrate, gp, wIntegrate,
		rng3(bPos, g, gp, device.ReadWrite), rng3(bPrev, g, gp, device.Write), rng3(bVel, g, gp, device.ReadWrite),
		i32(gp), workloads.F32Arg(x.e.c.gdt), workloads.F32Arg(x.e.c.dt))}
}

func (x *stepEmit) broadphase(g int) []workloads.Op {
	m, s, gp := x.m, x.s, x.gp
	if m.pairs() == 0 {
		return nil
	}
	off := int64(4 * (s*m.groups + g) * m.pairs())
	return []workloads.Op{x.op(fmt.Sprintf("broadphase[s%d,g%d]", s, g), x.e.k.broad, m.pairs(), wBroad,
		rng3(bPos, g, gp, device.Read), whole(bPairIdx), whole(bPairRad),
		workloads.BufRange(bMask, device.Write, off, int64(4*m.pairs())), i32(m.pairs()))}
}

func (x *stepEmit) clear(g int) []workloads.Op {
	if !x.gs[g].anyContact() {
		return nil
	}
	args := make([]workloads.ArgSpec, 0, numContactTypes+1)
	for d := 0; d < numContactTypes; d++ {
		args = append(args, rng4(bDelta0+d, g, x.gp, device.Write))
	}
	return []workloads.Op{x.op(fmt.Sprintf("clear[s%d,g%d]", x.s, g), x.e.k.clear, 4*x.gp, wClear, append(args, i32(x.gp))...)}
}

// narrow is the narrow phase, one kernel per present contact type.
func (x *stepEmit) narrow(g int) []workloads.Op {
	s, gp := x.s, x.gp
	var ops []workloads.Op
	for t := 0; t < numContactTypes; t++ {
		if !x.gs[g].present(t) {
			continue
		}
		list, cont, _ := x.e.secs(s, g, t)
		name := fmt.Sprintf("%s[s%d,g%d]", contactTypeNames[t], s, g)
		if t < numClasses {
			ops = append(ops, x.op(name, x.e.k.narrow[t], list.n, wNarrowPlane,
				rng3(bPos, g, gp, device.Read), whole(bRadius), rngSec(bLists, list, device.Read), rngSec(bContacts, cont, device.Write), i32(list.n)))
		} else {
			ops = append(ops, x.op(name, x.e.k.narrow[t], list.n, wNarrowSeg,
				rng3(bPos, g, gp, device.Read), whole(bPairIdx), whole(bPairRad), rngSec(bLists, list, device.Read), rngSec(bContacts, cont, device.Write), i32(list.n)))
		}
	}
	return ops
}

// solve is iteration it's contact solves: independent, each writes its
// own delta.
func (x *stepEmit) solve(it int) func(g int) []workloads.Op {
	return func(g int) []workloads.Op {
		s, gp := x.s, x.gp
		var ops []workloads.Op
		for t := 0; t < numContactTypes; t++ {
			if !x.gs[g].present(t) {
				continue
			}
			list, cont, gath := x.e.secs(s, g, t)
			name := fmt.Sprintf("solve_%s[s%d,g%d,i%d]", contactTypeNames[t], s, g, it)
			if t < numClasses {
				ops = append(ops, x.op(name, x.e.k.solve[t], list.n, wSolvePlane,
					rng3(bPos, g, gp, device.Read), rng3(bPrev, g, gp, device.Read), whole(bRadius), whole(bInvMass),
					rngSec(bLists, list, device.Read), rngSec(bContacts, cont, device.Read), rng4(bDelta0+t, g, gp, device.Write), i32(list.n)))
			} else {
				rows := x.gs[g].rows[t]
				entries := float64(gath.n-2*rows-1) / float64(rows)
				ops = append(ops, x.op(name, x.e.k.solve[t], rows, wSolveSeg.times(entries),
					rng3(bPos, g, gp, device.Read), whole(bInvMass), whole(bPairIdx), whole(bPairRad),
					rngSec(bLists, list, device.Read), rngSec(bGather, gath, device.Read), rngSec(bContacts, cont, device.Read),
					rng4(bDelta0+t, g, gp, device.Write), i32(rows)))
			}
		}
		return ops
	}
}

// apply is iteration it's sum of the contact deltas into the positions.
func (x *stepEmit) apply(it int) func(g int) []workloads.Op {
	return func(g int) []workloads.Op {
		if !x.gs[g].anyContact() {
			return nil
		}
		args := []workloads.ArgSpec{rng3(bPos, g, x.gp, device.ReadWrite)}
		for d := 0; d < numContactTypes; d++ {
			args = append(args, rng4(bDelta0+d, g, x.gp, device.Read))
		}
		return []workloads.Op{x.op(fmt.Sprintf("apply[s%d,g%d,i%d]", x.s, g, it), x.e.k.apply, x.gp, wApply, append(args, i32(x.gp))...)}
	}
}

// rods is iteration it's rod solve, Gauss-Seidel per environment, in place.
func (x *stepEmit) rods(it int) func(g int) []workloads.Op {
	return func(g int) []workloads.Op {
		m := x.m
		return []workloads.Op{x.op(fmt.Sprintf("solve_rods[s%d,g%d,i%d]", x.s, g, it), x.e.k.rods, m.envsPerGroup, wRods.times(float64(len(m.rest))),
			rng3(bPos, g, x.gp, device.ReadWrite), whole(bInvMass), whole(bRods), whole(bRest), i32(m.envsPerGroup), i32(m.per), i32(len(m.rest)))}
	}
}

func (x *stepEmit) velocity(g int) []workloads.Op {
	s, gp := x.s, x.gp
	return []workloads.Op{x.op(fmt.Sprintf("velocity[s%d,g%d]", s, g), x.e.k.velocity, gp, wVelocity,
		rng3(bPos, g, gp, device.Read), rng3(bPrev, g, gp, device.Read), rng3(bVel, g, gp, device.Write),
		i32(gp), workloads.F32Arg(x.e.c.invdt), workloads.F32Arg(x.e.c.damp))}
}

func (x *stepEmit) observe(g int) []workloads.Op {
	m, s, gp := x.m, x.s, x.gp
	off := int64(16 * (s*m.envs + g*m.envsPerGroup))
	return []workloads.Op{x.op(fmt.Sprintf("observe[s%d,g%d]", s, g), x.e.k.observe, m.envsPerGroup, wObserve.times(float64(m.per)),
		rng3(bPos, g, gp, device.Read), rng3(bVel, g, gp, device.Read),
		workloads.BufRange(bObs, device.Write, off, int64(16*m.envsPerGroup)), i32(m.envsPerGroup), i32(m.per))}
}

func putF32(v []float32) func([]byte) {
	return func(b []byte) {
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
	}
}

func putI32(v []int32) func([]byte) {
	return func(b []byte) {
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
		}
	}
}

// referenceOutputs are the host's results, which Check compares a device's
// outputs against.
type referenceOutputs struct {
	pos, vel, obs []float32
	mask          []uint32
	pairs         bool
}

func (r *referenceOutputs) check(out map[string][]byte) error {
	for _, f := range []struct {
		name string
		want []float32
	}{{"pos", r.pos}, {"vel", r.vel}, {"obs", r.obs}} {
		got, ok := out[f.name]
		if !ok {
			return fmt.Errorf("rl-physics: output %q missing", f.name)
		}
		if len(got) != 4*len(f.want) {
			return fmt.Errorf("rl-physics: output %q has %d bytes, want %d", f.name, len(got), 4*len(f.want))
		}
		for i, w := range f.want {
			g := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
			d := math.Abs(float64(g) - float64(w))
			if !(d <= checkAbs+checkRel*math.Abs(float64(w))) { // also catches NaN
				return fmt.Errorf("rl-physics: %s[%d] = %g, reference %g (|diff| %.3g exceeds %g + %g*|ref|)", f.name, i, g, w, d, checkAbs, checkRel)
			}
		}
	}
	if r.pairs {
		got := out["broadphase"]
		if len(got) != 4*len(r.mask) {
			return fmt.Errorf("rl-physics: output broadphase has %d bytes, want %d", len(got), 4*len(r.mask))
		}
		for i, w := range r.mask {
			if g := binary.LittleEndian.Uint32(got[4*i:]); g != w {
				return fmt.Errorf("rl-physics: broadphase[%d] = %d, the host decided %d: the contact kernels it chose do not match the device's state", i, g, w)
			}
		}
	}
	return nil
}
