package rl

import "math"

// The CPU reference. Every function here mirrors one kernel of
// workloads/kernels/rl.cu operation for operation, in float32, in the same
// order: products are rounded before they are added (mul rounds explicitly
// so that no compiler fuses them into an FMA; the CUDA side uses __fmul_rn,
// which nvcc never contracts), and division and square root are IEEE
// correctly rounded on both sides. Each function works on one group of
// environments: slices start at the group's first particle and indices are
// local to the group, exactly as the kernels see their pointer arguments.

// mul is a float32 product rounded on its own (an explicit conversion
// forbids fusing it with a following add, per the Go spec).
func mul(a, b float32) float32 { return float32(a * b) }

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

type vec3 [3]float32

func load3(a []float32, i int32) vec3 { return vec3{a[3*i], a[3*i+1], a[3*i+2]} }
func store3(a []float32, i int32, v vec3) {
	a[3*i], a[3*i+1], a[3*i+2] = v[0], v[1], v[2]
}
func (a vec3) add(b vec3) vec3             { return vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a vec3) sub(b vec3) vec3             { return vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func (a vec3) scale(f float32) vec3        { return vec3{mul(a[0], f), mul(a[1], f), mul(a[2], f)} }
func (a vec3) dot(b vec3) float32          { return mul(a[0], b[0]) + mul(a[1], b[1]) + mul(a[2], b[2]) }
func clamp01(x float32) float32            { return min(max(x, 0), 1) }
func (a vec3) lerp(b vec3, s float32) vec3 { return a.add(b.sub(a).scale(s)) }

// Physical constants of every environment.
const (
	gravity     = float32(-9.81)
	contactGap  = float32(0.05) // broad-phase and plane-candidate margin, m
	friction    = float32(0.8)  // plane Coulomb friction coefficient
	relaxation  = float32(1.0)  // Jacobi averaging factor (Macklin et al. 2014)
	segEpsilon  = float32(1e-9) // degenerate segment length squared
	distEpsilon = float32(1e-6)
)

// Contact record layout: 8 floats per contact.
const contactFloats = 8

// kActuate: vel[i] += act[i] for the group's particles (the policy's action,
// already scaled to a velocity change).
func kActuate(vel, act []float32, n int) {
	for i := 0; i < 3*n; i++ {
		vel[i] = vel[i] + act[i]
	}
}

// kIntegrate: semi-implicit Euler prediction. vel.z += gdt; prev = pos;
// pos += vel*dt.
func kIntegrate(pos, prev, vel []float32, n int, gdt, dt float32) {
	for i := int32(0); i < int32(n); i++ {
		v := load3(vel, i)
		v[2] = v[2] + gdt
		x := load3(pos, i)
		store3(vel, i, v)
		store3(prev, i, x)
		store3(pos, i, x.add(v.scale(dt)))
	}
}

// pairDef is one candidate pair of segments: particles a0 a1 (sphere when
// equal) and b0 b1, radii ra rb.
func pairEnds(pairIdx []int32, p int32) (a0, a1, b0, b1 int32) {
	return pairIdx[4*p], pairIdx[4*p+1], pairIdx[4*p+2], pairIdx[4*p+3]
}

// kBroadphase: axis-aligned boxes of the two segments, grown by their radii
// and the contact gap, overlap => mask 1.
func kBroadphase(pos []float32, pairIdx []int32, pairRad []float32, mask []uint32, npairs int) {
	for p := int32(0); p < int32(npairs); p++ {
		a0, a1, b0, b1 := pairEnds(pairIdx, p)
		ra := pairRad[2*p] + contactGap
		rb := pairRad[2*p+1]
		xa0, xa1, xb0, xb1 := load3(pos, a0), load3(pos, a1), load3(pos, b0), load3(pos, b1)
		overlap := true
		for d := 0; d < 3; d++ {
			loA := min(xa0[d], xa1[d]) - ra
			hiA := max(xa0[d], xa1[d]) + ra
			loB := min(xb0[d], xb1[d]) - rb
			hiB := max(xb0[d], xb1[d]) + rb
			if loA > hiB || loB > hiA {
				overlap = false
			}
		}
		if overlap {
			mask[p] = 1
		} else {
			mask[p] = 0
		}
	}
}

// kNarrowPlane: contact with the plane z = 0 for each candidate particle:
// normal +z and the signed gap at detection.
func kNarrowPlane(pos, radius []float32, list []int32, contacts []float32) {
	for k := range list {
		i := list[k]
		c := contacts[contactFloats*k : contactFloats*(k+1)]
		c[0], c[1], c[2] = 0, 0, 1
		c[3], c[4] = 0, 0
		c[5] = pos[3*i+2] - radius[i]
		c[6], c[7] = 0, 0
	}
}

// closest returns the parameters s, t of the closest points of segments
// p1-q1 and p2-q2 (Ericson, Real-Time Collision Detection, 5.1.9).
func closest(p1, q1, p2, q2 vec3) (s, t float32) {
	d1 := q1.sub(p1)
	d2 := q2.sub(p2)
	r := p1.sub(p2)
	a := d1.dot(d1)
	e := d2.dot(d2)
	f := d2.dot(r)
	if a <= segEpsilon && e <= segEpsilon {
		return 0, 0
	}
	if a <= segEpsilon {
		return 0, clamp01(f / e)
	}
	c := d1.dot(r)
	if e <= segEpsilon {
		return clamp01(-c / a), 0
	}
	b := d1.dot(d2)
	denom := mul(a, e) - mul(b, b)
	if denom != 0 {
		s = clamp01((mul(b, f) - mul(c, e)) / denom)
	}
	t = (mul(b, s) + f) / e
	if t < 0 {
		t = 0
		s = clamp01(-c / a)
	} else if t > 1 {
		t = 1
		s = clamp01((b - c) / a)
	}
	return s, t
}

// kNarrowSegments: for each overlapping pair, the closest points' parameters,
// the contact normal (from b to a) and the signed gap.
func kNarrowSegments(pos []float32, pairIdx []int32, pairRad []float32, list []int32, contacts []float32) {
	for k := range list {
		p := list[k]
		a0, a1, b0, b1 := pairEnds(pairIdx, p)
		xa0, xa1, xb0, xb1 := load3(pos, a0), load3(pos, a1), load3(pos, b0), load3(pos, b1)
		s, t := closest(xa0, xa1, xb0, xb1)
		d := xa0.lerp(xa1, s).sub(xb0.lerp(xb1, t))
		dist := sqrt32(d.dot(d))
		n := vec3{0, 0, 1}
		if dist > distEpsilon {
			n = vec3{d[0] / dist, d[1] / dist, d[2] / dist}
		}
		c := contacts[contactFloats*k : contactFloats*(k+1)]
		c[0], c[1], c[2] = n[0], n[1], n[2]
		c[3], c[4] = s, t
		c[5] = dist - (pairRad[2*p] + pairRad[2*p+1])
		c[6], c[7] = 0, 0
	}
}

// kSolvePlane: push a penetrating particle out along the contact normal and
// cancel its tangential displacement up to the friction cone. Each
// candidate's correction and count (0 or 1) go to delta.
func kSolvePlane(pos, prev, radius, invmass []float32, list []int32, contacts []float32, delta []float32) {
	for k := range list {
		i := list[k]
		c := contacts[contactFloats*k:]
		n := vec3{c[0], c[1], c[2]}
		x := load3(pos, i)
		pen := x.dot(n) - radius[i]
		var corr vec3
		cnt := float32(0)
		if pen < 0 && invmass[i] > 0 {
			corr = n.scale(-pen)
			disp := x.sub(load3(prev, i))
			tan := disp.sub(n.scale(disp.dot(n)))
			tl := sqrt32(tan.dot(tan))
			if tl > 0 {
				f := min(float32(1), mul(friction, -pen)/tl)
				corr = corr.sub(tan.scale(f))
			}
			cnt = 1
		}
		delta[4*i], delta[4*i+1], delta[4*i+2], delta[4*i+3] = corr[0], corr[1], corr[2], cnt
	}
}

// segmentCorrection is the correction one end (code 0..3: a0 a1 b0 b1) of a
// segment pair receives, and whether the pair is penetrating.
func segmentCorrection(pos, invmass []float32, pairIdx []int32, pairRad []float32, p int32, c []float32, code int32) (vec3, bool) {
	a0, a1, b0, b1 := pairEnds(pairIdx, p)
	n := vec3{c[0], c[1], c[2]}
	s, t := c[3], c[4]
	pa := load3(pos, a0).lerp(load3(pos, a1), s)
	pb := load3(pos, b0).lerp(load3(pos, b1), t)
	pen := pa.sub(pb).dot(n) - (pairRad[2*p] + pairRad[2*p+1])
	if pen >= 0 {
		return vec3{}, false
	}
	s1, t1 := 1-s, 1-t
	wa0, wa1, wb0, wb1 := invmass[a0], invmass[a1], invmass[b0], invmass[b1]
	w := mul(mul(s1, s1), wa0) + mul(mul(s, s), wa1) + mul(mul(t1, t1), wb0) + mul(mul(t, t), wb1)
	if w <= 0 {
		return vec3{}, false
	}
	lam := -pen / w
	var coef float32
	switch code {
	case 0:
		coef = mul(s1, wa0)
	case 1:
		coef = mul(s, wa1)
	case 2:
		coef = -mul(t1, wb0)
	default:
		coef = -mul(t, wb1)
	}
	return n.scale(mul(lam, coef)), true
}

// kSolveSegments: each involved particle gathers its corrections from the
// penetrating pairs it belongs to. gather holds rowptr[nrows+1],
// particle[nrows], then entries k*4+code (k indexes list and contacts).
func kSolveSegments(pos, invmass []float32, pairIdx []int32, pairRad []float32, list []int32, gather []int32, nrows int, contacts []float32, delta []float32) {
	rowptr := gather[:nrows+1]
	parts := gather[nrows+1 : 2*nrows+1]
	entries := gather[2*nrows+1:]
	for r := 0; r < nrows; r++ {
		var sum vec3
		cnt := float32(0)
		for e := rowptr[r]; e < rowptr[r+1]; e++ {
			k := entries[e] >> 2
			code := entries[e] & 3
			corr, ok := segmentCorrection(pos, invmass, pairIdx, pairRad, list[k], contacts[contactFloats*k:], code)
			if ok {
				sum = sum.add(corr)
				cnt = cnt + 1
			}
		}
		i := parts[r]
		delta[4*i], delta[4*i+1], delta[4*i+2], delta[4*i+3] = sum[0], sum[1], sum[2], cnt
	}
}

// kSolveRods: one thread per environment walks the environment's distance
// constraints in order and corrects both ends in place (Gauss-Seidel within
// an environment; environments are independent). rods holds a b pairs of
// environment-local particle indices.
func kSolveRods(pos, invmass []float32, rods []int32, rest []float32, envs, per int) {
	for e := int32(0); e < int32(envs); e++ {
		base := e * int32(per)
		for r := range rest {
			a, b := base+rods[2*r], base+rods[2*r+1]
			xa, xb := load3(pos, a), load3(pos, b)
			wa, wb := invmass[a], invmass[b]
			d := xa.sub(xb)
			l := sqrt32(d.dot(d))
			ws := wa + wb
			if l > distEpsilon && ws > 0 {
				g := (l - rest[r]) / l / ws
				store3(pos, a, xa.sub(d.scale(mul(g, wa))))
				store3(pos, b, xb.add(d.scale(mul(g, wb))))
			}
		}
	}
}

// kApply: pos += relaxation/count * sum of the contact corrections, summed
// in the fixed order sphere-plane, capsule-plane, box-plane,
// capsule-capsule, sphere-capsule.
func kApply(pos []float32, deltas [numContactTypes][]float32, n int) {
	for i := int32(0); i < int32(n); i++ {
		var sum vec3
		cnt := float32(0)
		for _, d := range deltas {
			sum = sum.add(vec3{d[4*i], d[4*i+1], d[4*i+2]})
			cnt = cnt + d[4*i+3]
		}
		if cnt > 0 {
			store3(pos, i, load3(pos, i).add(sum.scale(relaxation/cnt)))
		}
	}
}

// kVelocity: vel = (pos - prev) / dt, damped.
func kVelocity(pos, prev, vel []float32, n int, invdt, damp float32) {
	for i := int32(0); i < int32(n); i++ {
		v := load3(pos, i).sub(load3(prev, i)).scale(invdt)
		store3(vel, i, v.scale(damp))
	}
}

// kObserve: per environment, the mean position and mean x velocity (the
// observation and forward-progress reward an RL policy reads).
func kObserve(pos, vel []float32, obs []float32, envs, per int) {
	for e := int32(0); e < int32(envs); e++ {
		var s vec3
		vx := float32(0)
		for j := int32(0); j < int32(per); j++ {
			i := e*int32(per) + j
			s = s.add(load3(pos, i))
			vx = vx + vel[3*i]
		}
		fn := float32(per)
		obs[4*e], obs[4*e+1], obs[4*e+2], obs[4*e+3] = s[0]/fn, s[1]/fn, s[2]/fn, vx/fn
	}
}
