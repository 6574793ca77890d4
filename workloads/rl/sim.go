package rl

import (
	"fmt"
	"math/rand"
	"slices"
)

// model is an environment replicated envs times, cut into groups of
// envsPerGroup environments: every kernel works on one group. All groups have
// the same layout, so the static tables (masses, radii, rods, candidate
// pairs) are built once, in group-local particle indices, and shared.
type model struct {
	tpl          *template
	envs         int
	envsPerGroup int
	groups       int
	per          int // particles per environment
	gp           int // particles per group

	invmass, radius []float32
	class           []uint8
	rods            []int32 // a b per rod, environment-local
	rest            []float32
	pairIdx         []int32 // 4 per pair: a0 a1 b0 b1
	pairRad         []float32
	nCC, nSC        int // capsule-capsule pairs come first, then sphere-capsule
}

func newModel(tpl *template, envs, envsPerGroup int) *model {
	m := &model{tpl: tpl, envs: envs, envsPerGroup: envsPerGroup, groups: envs / envsPerGroup, per: len(tpl.Pos)}
	m.gp = m.per * envsPerGroup
	for e := 0; e < envsPerGroup; e++ {
		m.invmass = append(m.invmass, tpl.InvMass...)
		m.radius = append(m.radius, tpl.Radius...)
		m.class = append(m.class, tpl.Class...)
	}
	for _, r := range tpl.Rods {
		m.rods = append(m.rods, r.A, r.B)
		m.rest = append(m.rest, r.L)
	}
	addPair := func(base int32, a, b segment) {
		m.pairIdx = append(m.pairIdx, base+a.A, base+a.B, base+b.A, base+b.B)
		m.pairRad = append(m.pairRad, a.R, b.R)
	}
	for e := 0; e < envsPerGroup; e++ {
		for _, p := range tpl.CCPairs {
			addPair(int32(e*m.per), tpl.Capsules[p[0]], tpl.Capsules[p[1]])
		}
	}
	m.nCC = len(m.pairRad) / 2
	for e := 0; e < envsPerGroup; e++ {
		for _, p := range tpl.SCPairs {
			addPair(int32(e*m.per), tpl.Spheres[p[0]], tpl.Capsules[p[1]])
		}
	}
	m.nSC = len(m.pairRad)/2 - m.nCC
	return m
}

func (m *model) pairs() int { return m.nCC + m.nSC }

// state is the whole batch's particle state.
type state struct {
	pos, prev, vel []float32
}

func (m *model) initialState(rng *rand.Rand, drop float32) *state {
	n := 3 * m.per * m.envs
	st := &state{pos: make([]float32, n), prev: make([]float32, n), vel: make([]float32, n)}
	lowest := float32(1e9)
	for i, p := range m.tpl.Pos {
		lowest = min(lowest, p[2]-m.tpl.Radius[i])
	}
	for e := 0; e < m.envs; e++ {
		lift := -lowest + drop*rng.Float32()
		for j, p := range m.tpl.Pos {
			i := 3 * (e*m.per + j)
			st.pos[i] = p[0] + 0.02*(rng.Float32()-0.5)
			st.pos[i+1] = p[1] + 0.02*(rng.Float32()-0.5)
			st.pos[i+2] = p[2] + lift
			st.vel[i] = 0.2 * (rng.Float32() - 0.5)
			st.vel[i+1] = 0.2 * (rng.Float32() - 0.5)
			st.vel[i+2] = 0.2 * (rng.Float32() - 0.5)
		}
	}
	copy(st.prev, st.pos)
	return st
}

// stepConsts are the scalars every step's kernels receive.
type stepConsts struct {
	dt, gdt, invdt, damp float32
	iterations           int
}

// groupStep is what the host decides for one group at one step, from the
// predicted positions: the candidates of each contact type, and the gather
// rows of the segment types. A type with no candidates launches no kernels.
type groupStep struct {
	mask   []uint32
	lists  [numContactTypes][]int32 // plane types: particles; segment types: pair indices
	gather [numContactTypes][]int32
	rows   [numContactTypes]int
}

func (gs *groupStep) present(t int) bool { return len(gs.lists[t]) > 0 }

// anyContact reports whether the group has any contact candidate: without
// one, the step needs no delta clearing and no apply.
func (gs *groupStep) anyContact() bool {
	for t := 0; t < numContactTypes; t++ {
		if gs.present(t) {
			return true
		}
	}
	return false
}

// buildGather makes the per-particle rows of a segment contact type: each
// particle touched by a listed pair gathers entries k*4+code, rows sorted
// by particle, entries in list order.
func (m *model) buildGather(list []int32) ([]int32, int) {
	byPart := map[int32][]int32{}
	for k, p := range list {
		a0, a1, b0, b1 := pairEnds(m.pairIdx, p)
		ends := []int32{a0, a1, b0, b1}
		for code, part := range ends {
			if code == 1 && a1 == a0 || code == 3 && b1 == b0 {
				continue // a sphere is one particle: it takes one share
			}
			byPart[part] = append(byPart[part], int32(k)*4+int32(code))
		}
	}
	parts := make([]int32, 0, len(byPart))
	for p := range byPart {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	rowptr := []int32{0}
	var entries []int32
	for _, p := range parts {
		entries = append(entries, byPart[p]...)
		rowptr = append(rowptr, int32(len(entries)))
	}
	out := append(append(rowptr, parts...), entries...)
	return out, len(parts)
}

// groupView is group g's slices of the state.
func (m *model) groupView(st *state, g int) (pos, prev, vel []float32) {
	lo, hi := 3*g*m.gp, 3*(g+1)*m.gp
	return st.pos[lo:hi], st.prev[lo:hi], st.vel[lo:hi]
}

// stepGroup advances group g by one step on the CPU, exactly as the kernels
// the generator emits for it do, and returns the host's decisions and the
// observation. act is the group's action slice for this step.
func (m *model) stepGroup(st *state, g int, act []float32, c stepConsts, obs []float32) *groupStep {
	pos, prev, vel := m.groupView(st, g)
	kActuate(vel, act, m.gp)
	kIntegrate(pos, prev, vel, m.gp, c.gdt, c.dt)
	gs := &groupStep{mask: make([]uint32, m.pairs())}
	kBroadphase(pos, m.pairIdx, m.pairRad, gs.mask, m.pairs())
	for i := 0; i < m.gp; i++ {
		if pos[3*i+2]-m.radius[i] < contactGap {
			t := int(m.class[i]) // plane types are numbered as classes
			gs.lists[t] = append(gs.lists[t], int32(i))
		}
	}
	for p := 0; p < m.pairs(); p++ {
		if gs.mask[p] != 0 {
			t := typeCapsuleCapsule
			if p >= m.nCC {
				t = typeSphereCapsule
			}
			gs.lists[t] = append(gs.lists[t], int32(p))
		}
	}
	for _, t := range []int{typeCapsuleCapsule, typeSphereCapsule} {
		if gs.present(t) {
			gs.gather[t], gs.rows[t] = m.buildGather(gs.lists[t])
		}
	}
	var deltas [numContactTypes][]float32
	for i := range deltas {
		deltas[i] = make([]float32, 4*m.gp) // kClear
	}
	contacts := [numContactTypes][]float32{}
	for t := 0; t < numContactTypes; t++ {
		if !gs.present(t) {
			continue
		}
		contacts[t] = make([]float32, contactFloats*len(gs.lists[t]))
		if t < numClasses {
			kNarrowPlane(pos, m.radius, gs.lists[t], contacts[t])
		} else {
			kNarrowSegments(pos, m.pairIdx, m.pairRad, gs.lists[t], contacts[t])
		}
	}
	for it := 0; it < c.iterations; it++ {
		for t := 0; t < numContactTypes; t++ {
			if !gs.present(t) {
				continue
			}
			if t < numClasses {
				kSolvePlane(pos, prev, m.radius, m.invmass, gs.lists[t], contacts[t], deltas[t])
			} else {
				kSolveSegments(pos, m.invmass, m.pairIdx, m.pairRad, gs.lists[t], gs.gather[t], gs.rows[t], contacts[t], deltas[t])
			}
		}
		if gs.anyContact() {
			kApply(pos, deltas, m.gp)
		}
		kSolveRods(pos, m.invmass, m.rods, m.rest, m.envsPerGroup, m.per)
	}
	kVelocity(pos, prev, vel, m.gp, c.invdt, c.damp)
	kObserve(pos, vel, obs, m.envsPerGroup, m.per)
	return gs
}

// energy is the batch's kinetic plus potential energy (J), for tests.
func (m *model) energy(st *state) float64 {
	e := 0.0
	for i := 0; i < m.per*m.envs; i++ {
		w := float64(m.tpl.InvMass[i%m.per])
		if w == 0 {
			continue
		}
		mass := 1 / w
		v2 := 0.0
		for d := 0; d < 3; d++ {
			v2 += float64(st.vel[3*i+d]) * float64(st.vel[3*i+d])
		}
		e += 0.5*mass*v2 - mass*float64(gravity)*float64(st.pos[3*i+2])
	}
	return e
}

func checkLayout(envs, envsPerGroup int) error {
	if envs <= 0 || envsPerGroup <= 0 {
		return fmt.Errorf("envs (%d) and envs_per_group (%d) must be positive", envs, envsPerGroup)
	}
	if envs%envsPerGroup != 0 {
		return fmt.Errorf("envs (%d) must be a multiple of envs_per_group (%d)", envs, envsPerGroup)
	}
	return nil
}
