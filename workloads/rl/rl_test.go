package rl

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// singleSphere is one sphere of radius r at height z.
func singleSphere(z, r float32) *model {
	b := newBuilder("sphere")
	b.sphere(0, 0, z, r, 1)
	return newModel(b.build(), 1, 1)
}

func consts(dt float32, damp float32, iters int) stepConsts {
	return stepConsts{dt: dt, gdt: gravity * dt, invdt: 1 / dt, damp: damp, iterations: iters}
}

func stateOf(m *model) *state {
	n := 3 * m.gp * m.groups
	st := &state{pos: make([]float32, n), prev: make([]float32, n), vel: make([]float32, n)}
	for i, p := range m.tpl.Pos {
		copy(st.pos[3*i:], p[:])
	}
	copy(st.prev, st.pos)
	return st
}

func run(m *model, st *state, steps int, c stepConsts) []*groupStep {
	act := make([]float32, 3*m.gp)
	obs := make([]float32, 4*m.envsPerGroup)
	var out []*groupStep
	for s := 0; s < steps; s++ {
		for g := 0; g < m.groups; g++ {
			out = append(out, m.stepGroup(st, g, act, c, obs))
		}
	}
	return out
}

func TestFreeFallMatchesSemiImplicitEuler(t *testing.T) {
	// Far from the ground, no constraint acts: v_n = n g dt and
	// z_n = z0 + g dt^2 n(n+1)/2, up to float32 rounding (velocity is
	// recovered from positions, (x - x_prev)/dt, which loses digits).
	m := singleSphere(10, 0.1)
	st := stateOf(m)
	const n = 50
	dt := float32(0.01)
	decisions := run(m, st, n, consts(dt, 1, 4))
	for _, gs := range decisions {
		for typ := 0; typ < numContactTypes; typ++ {
			assert.False(t, gs.present(typ), "no contact far above the ground")
		}
	}
	g, d := float64(gravity), float64(dt)
	assert.InDelta(t, n*g*d, st.vel[2], 2e-3)
	assert.InDelta(t, 10+g*d*d*n*(n+1)/2, st.pos[2], 1e-3)
	assert.Zero(t, st.pos[0])
	assert.Zero(t, st.vel[0])
}

func TestSphereRestsOnThePlane(t *testing.T) {
	m := singleSphere(0.1, 0.1)
	st := stateOf(m)
	decisions := run(m, st, 200, consts(0.01, 1, 4))
	assert.True(t, decisions[len(decisions)-1].present(typeSpherePlane), "the sphere touches the plane")
	// Each step gravity sinks it by g dt^2 and the contact pushes it back:
	// it stays within one step's fall of z = r and does not move.
	assert.InDelta(t, 0.1, st.pos[2], 0.0011)
	assert.InDelta(t, 0, st.vel[2], 0.1)
}

func TestDroppedSphereStopsAtTheGround(t *testing.T) {
	m := singleSphere(1, 0.1)
	st := stateOf(m)
	run(m, st, 300, consts(0.01, 1, 4))
	assert.InDelta(t, 0.1, st.pos[2], 0.0011, "a plane contact is inelastic: no bounce, no sinking")
	assert.InDelta(t, 0, st.vel[2], 0.1)
}

func TestFrictionStopsSlidingSphere(t *testing.T) {
	m := singleSphere(0.1, 0.1)
	st := stateOf(m)
	st.vel[0] = 1 // sliding along x
	run(m, st, 100, consts(0.01, 1, 4))
	assert.InDelta(t, 0, st.vel[0], 1e-3, "Coulomb friction (mu 0.8) stops a 1 m/s slide within 1 s")
	assert.Greater(t, st.pos[0], float32(0.01), "it slid before it stopped")
}

func TestCapsulesCollide(t *testing.T) {
	// Two crossing capsules, one above the other and overlapping: the
	// capsule-capsule kernels fire and separate them to the sum of radii.
	b := newBuilder("cross")
	a0 := b.end(-0.5, 0, 2, 1, 0.1)
	a1 := b.end(0.5, 0, 2, 1, 0.1)
	b.capsule(a0, a1, 0.1)
	c0 := b.end(0, -0.5, 2.15, 1, 0.1)
	c1 := b.end(0, 0.5, 2.15, 1, 0.1)
	b.capsule(c0, c1, 0.1)
	m := newModel(b.build(), 1, 1)
	require.Equal(t, 1, m.nCC)
	st := stateOf(m)
	gs := run(m, st, 1, consts(0.001, 1, 8))
	assert.True(t, gs[0].present(typeCapsuleCapsule))
	gap := st.pos[3*2+2] - st.pos[2]
	assert.InDelta(t, 0.2, gap, 0.01, "separated to the sum of the radii")
	// The rods keep both capsules at their length.
	assert.InDelta(t, 1.0, st.pos[3]-st.pos[0], 1e-3)
}

func TestBatchEnergyDoesNotExplode(t *testing.T) {
	for _, env := range Environments() {
		t.Run(env, func(t *testing.T) {
			tpl, err := newTemplate(env)
			require.NoError(t, err)
			m := newModel(tpl, 8, 4)
			st := m.initialState(rand.New(rand.NewSource(3)), 0.3)
			e0 := m.energy(st)
			run(m, st, 150, consts(0.01, 1, 4))
			e1 := m.energy(st)
			for _, x := range st.pos {
				require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0))
			}
			// Contacts and constraints only dissipate; allow a little
			// numerical gain from the Jacobi solver.
			assert.Less(t, e1, e0+0.02*math.Abs(e0), "energy %g -> %g", e0, e1)
			for i := 0; i < len(st.pos)/3; i++ {
				assert.Greater(t, st.pos[3*i+2], float32(-0.05), "particle %d sank through the ground", i)
			}
		})
	}
}

func TestGenerateProgram(t *testing.T) {
	for _, env := range Environments() {
		t.Run(env, func(t *testing.T) {
			p := DefaultParams()
			p.Env = env
			prog, err := Generate(p, 7)
			require.NoError(t, err)
			require.NoError(t, prog.Validate())
			require.Len(t, prog.Steps, p.Steps)
			small, total := 0, 0
			for _, st := range prog.Steps {
				assert.Greater(t, len(st.Ops), 150, "hundreds of kernels per step")
				for _, op := range st.Ops {
					total++
					if op.Grid.X <= 200 {
						small++
					}
				}
			}
			assert.Equal(t, total, small, "every kernel is 1 to 200 blocks")
		})
	}
}

// signature is a step's kernel graph: kernel names in order with grids.
func signature(ops []string) string {
	s := ""
	for _, o := range ops {
		s += o + ";"
	}
	return s
}

func TestKernelGraphChangesBetweenSteps(t *testing.T) {
	p := DefaultParams()
	p.Steps = 12
	prog, err := Generate(p, 11)
	require.NoError(t, err)
	distinct := map[string]bool{}
	for _, st := range prog.Steps {
		var ops []string
		for _, op := range st.Ops {
			ops = append(ops, op.Kernel.Name+"/"+op.Grid.String())
		}
		distinct[signature(ops)] = true
	}
	assert.Greater(t, len(distinct), len(prog.Steps)/2, "contacts change the kernels or their sizes in most steps")
}

func TestGenerateIsDeterministic(t *testing.T) {
	p := DefaultParams()
	a, err := Generate(p, 5)
	require.NoError(t, err)
	b, err := Generate(p, 5)
	require.NoError(t, err)
	require.Equal(t, a.NumOps(), b.NumOps())
	for s := range a.Steps {
		for i := range a.Steps[s].Ops {
			assert.Equal(t, a.Steps[s].Ops[i].Name, b.Steps[s].Ops[i].Name)
			assert.Equal(t, a.Steps[s].Ops[i].Args, b.Steps[s].Ops[i].Args)
		}
	}
}

// hostOutputs encodes the reference itself as a device would return it.
func hostOutputs(r *referenceOutputs) map[string][]byte {
	enc := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		putF32(v)(b)
		return b
	}
	m := make([]byte, 4*len(r.mask))
	for i, x := range r.mask {
		binary.LittleEndian.PutUint32(m[4*i:], x)
	}
	return map[string][]byte{"pos": enc(r.pos), "vel": enc(r.vel), "obs": enc(r.obs), "broadphase": m}
}

func TestCheckAcceptsReferenceAndRejectsCorruption(t *testing.T) {
	p := DefaultParams()
	p.Steps = 2
	prog, ref, err := generate(p, 1)
	require.NoError(t, err)
	require.NoError(t, prog.Check(hostOutputs(ref)))

	bad := hostOutputs(ref)
	x := math.Float32frombits(binary.LittleEndian.Uint32(bad["pos"][40:]))
	binary.LittleEndian.PutUint32(bad["pos"][40:], math.Float32bits(x+0.01))
	assert.ErrorContains(t, prog.Check(bad), "pos[10]")

	bad = hostOutputs(ref)
	bad["broadphase"][0] ^= 1
	assert.ErrorContains(t, prog.Check(bad), "broadphase[0]")

	bad = hostOutputs(ref)
	delete(bad, "vel")
	assert.ErrorContains(t, prog.Check(bad), `"vel" missing`)
}

func TestParamErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Params)
		want string
	}{
		{"env", func(p *Params) { p.Env = "spider" }, `unknown environment "spider"`},
		{"groups", func(p *Params) { p.EnvsPerGroup = 3 }, "multiple of envs_per_group"},
		{"steps", func(p *Params) { p.Steps = 0 }, "steps must be positive"},
		{"dt", func(p *Params) { p.DT = 0 }, "dt must be in"},
		{"block", func(p *Params) { p.Block = 100 }, "block must be a multiple of 32"},
		{"order", func(p *Params) { p.Order = "random" }, "order must be phase or group"},
		{"iterations", func(p *Params) { p.Iterations = -1 }, "iterations must be positive"},
		// Issue 23: NaN and sizes that ran the host simulation for hours.
		{"drop NaN", func(p *Params) { p.Drop = math.NaN() }, "drop (NaN) must be finite"},
		{"action_scale Inf", func(p *Params) { p.ActionScale = math.Inf(1) }, "action_scale (+Inf)"},
		{"action_scale 1e300", func(p *Params) { p.ActionScale = 1e300 }, "at most 100 m/s and 100 m (rl.MaxActionScale, MaxDrop)"},
		{"damping NaN", func(p *Params) { p.Damping = math.NaN() }, "damping must be in (0, 1], got NaN"},
		{"steps 1e9", func(p *Params) { p.Steps = 1e9 }, "at most 4194304 (rl.MaxEnvSteps)"},
		{"host work", func(p *Params) { p.Envs, p.EnvsPerGroup, p.Steps = 1<<16, 1<<16, 100 },
			"envs x warmup+steps x iterations = 65536 x 120 x 4 = 31457280 environment-steps of host simulation, above the limit of 4194304 (rl.MaxEnvSteps)"},
		{"kernels", func(p *Params) { p.Envs, p.EnvsPerGroup, p.Steps, p.Warmup, p.Iterations = 4096, 1, 1000, 0, 1 },
			"operations, above the limit of 1048576 (workloads.MaxOps)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			c.mod(&p)
			_, err := Generate(p, 1)
			assert.ErrorContains(t, err, c.want)
		})
	}
}
