package rl

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Particle classes decide which plane-contact kernel handles a particle.
const (
	classSphere  = iota // the centre of a sphere: sphere-plane
	classCapsule        // an end of a capsule: capsule-plane
	classBox            // a corner of a box: box-plane
	numClasses
)

// Contact types, in the fixed order the apply kernel sums their corrections.
// The joint (distance constraint) delta comes first.
const (
	typeSpherePlane = iota
	typeCapsulePlane
	typeBoxPlane
	typeCapsuleCapsule
	typeSphereCapsule
	numContactTypes
)

var contactTypeNames = [numContactTypes]string{"sphere_plane", "capsule_plane", "box_plane", "capsule_capsule", "sphere_capsule"}

// segment is a collision shape between two particles: a capsule (A != B) or
// a sphere (A == B) of radius R.
type segment struct {
	A, B int32
	R    float32
}

// rod is a distance constraint between two particles with its rest length.
type rod struct {
	A, B int32
	L    float32
}

// template is one environment: particles, shapes and rods, in local indices.
type template struct {
	Name     string
	Pos      [][3]float32
	InvMass  []float32
	Radius   []float32 // plane-contact radius (0 for box corners)
	Class    []uint8
	Capsules []segment
	Spheres  []segment
	Rods     []rod
	// Pairs that may collide: capsule-capsule and sphere-capsule pairs of
	// shapes that share no particle and are not excluded as attached.
	CCPairs [][2]int
	SCPairs [][2]int // sphere index, capsule index
}

type builder struct {
	t       template
	exclude map[[2]int]bool // shape pairs never tested (attached parts)
}

func newBuilder(name string) *builder {
	return &builder{t: template{Name: name}, exclude: map[[2]int]bool{}}
}

func (b *builder) particle(x, y, z, mass, radius float32, class uint8) int32 {
	b.t.Pos = append(b.t.Pos, [3]float32{x, y, z})
	b.t.InvMass = append(b.t.InvMass, 1/mass)
	b.t.Radius = append(b.t.Radius, radius)
	b.t.Class = append(b.t.Class, class)
	return int32(len(b.t.Pos) - 1)
}

func (b *builder) rod(a, c int32) {
	d := [3]float32{b.t.Pos[a][0] - b.t.Pos[c][0], b.t.Pos[a][1] - b.t.Pos[c][1], b.t.Pos[a][2] - b.t.Pos[c][2]}
	l := float32(math.Sqrt(float64(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])))
	b.t.Rods = append(b.t.Rods, rod{a, c, l})
}

// sphere adds a sphere of radius r at (x, y, z); it returns its particle and
// shape index.
func (b *builder) sphere(x, y, z, r, mass float32) (int32, int) {
	p := b.particle(x, y, z, mass, r, classSphere)
	b.t.Spheres = append(b.t.Spheres, segment{p, p, r})
	return p, len(b.t.Spheres) - 1
}

// capsule adds a capsule between existing particles a and c, held rigid by a
// rod; it returns the capsule's index.
func (b *builder) capsule(a, c int32, r float32) int {
	for _, p := range []int32{a, c} {
		if b.t.Class[p] == classCapsule && b.t.Radius[p] < r {
			b.t.Radius[p] = r
		}
	}
	b.rod(a, c)
	b.t.Capsules = append(b.t.Capsules, segment{a, c, r})
	return len(b.t.Capsules) - 1
}

// end adds a capsule end particle.
func (b *builder) end(x, y, z, mass, r float32) int32 {
	return b.particle(x, y, z, mass, r, classCapsule)
}

// box adds a box of half extents (hx, hy, hz) centred at (x, y, z): eight
// corner particles held rigid by its 12 edges, 12 face diagonals and 4 body
// diagonals. It returns the corner particles.
func (b *builder) box(x, y, z, hx, hy, hz, mass float32) [8]int32 {
	var c [8]int32
	for i := 0; i < 8; i++ {
		sx, sy, sz := float32(-1), float32(-1), float32(-1)
		if i&1 != 0 {
			sx = 1
		}
		if i&2 != 0 {
			sy = 1
		}
		if i&4 != 0 {
			sz = 1
		}
		c[i] = b.particle(x+sx*hx, y+sy*hy, z+sz*hz, mass/8, 0, classBox)
	}
	for i := 0; i < 8; i++ {
		for j := i + 1; j < 8; j++ {
			b.rod(c[i], c[j]) // all 28 pairs: edges, face and body diagonals
		}
	}
	return c
}

// attach excludes capsule-capsule pair (i, j) from collision tests (parts
// joined through a rod rather than a shared particle).
func (b *builder) attachCC(i, j int) { b.exclude[[2]int{min(i, j), max(i, j)}] = true }

// attachSC excludes sphere s and capsule c from collision tests.
func (b *builder) attachSC(s, c int) { b.exclude[[2]int{-1 - s, c}] = true }

func (b *builder) build() *template {
	t := &b.t
	share := func(x, y segment) bool { return x.A == y.A || x.A == y.B || x.B == y.A || x.B == y.B }
	for i := range t.Capsules {
		for j := i + 1; j < len(t.Capsules); j++ {
			if !share(t.Capsules[i], t.Capsules[j]) && !b.exclude[[2]int{i, j}] {
				t.CCPairs = append(t.CCPairs, [2]int{i, j})
			}
		}
	}
	for s := range t.Spheres {
		for c := range t.Capsules {
			if !share(t.Spheres[s], t.Capsules[c]) && !b.exclude[[2]int{-1 - s, c}] {
				t.SCPairs = append(t.SCPairs, [2]int{s, c})
			}
		}
	}
	return t
}

// Environments lists the environment names, sorted.
func Environments() []string {
	out := make([]string, 0, len(envBuilders))
	for k := range envBuilders {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func newTemplate(env string) (*template, error) {
	f, ok := envBuilders[env]
	if !ok {
		return nil, fmt.Errorf("unknown environment %q (known: %s)", env, strings.Join(Environments(), ", "))
	}
	return f(), nil
}

// The environments follow the body layouts of Brax's (and MuJoCo's) ant,
// humanoid, halfcheetah, walker2d and grasp at their published dimensions,
// reduced to spheres, capsules and boxes made of particles. Masses are in kg,
// lengths in m.
var envBuilders = map[string]func() *template{
	"ant": func() *template {
		b := newBuilder("ant")
		torso, ts := b.sphere(0, 0, 0.75, 0.25, 4)
		for k := 0; k < 4; k++ {
			sx := float32(1 - 2*(k&1))
			sy := float32(1 - 2*(k>>1))
			hip := b.end(0.2*sx, 0.2*sy, 0.75, 0.5, 0.08)
			knee := b.end(0.4*sx, 0.4*sy, 0.75, 0.5, 0.08)
			foot := b.end(0.7*sx, 0.7*sy, 0.45, 0.5, 0.08)
			b.rod(torso, hip)
			b.rod(torso, knee) // the hip joint's stiffness
			up := b.capsule(hip, knee, 0.08)
			b.capsule(knee, foot, 0.08)
			b.attachSC(ts, up)
		}
		// the hips form a rigid ring with the torso
		for k := 0; k < 4; k++ {
			b.rod(int32(1+3*k), int32(1+3*((k+1)%4)))
		}
		return b.build()
	},
	"humanoid": func() *template {
		b := newBuilder("humanoid")
		head, hs := b.sphere(0, 0, 1.6, 0.09, 2)
		neck := b.end(0, 0, 1.45, 3, 0.07)
		pelvis := b.end(0, 0, 1.05, 5, 0.09)
		b.rod(head, neck)
		torso := b.capsule(neck, pelvis, 0.07)
		b.attachSC(hs, torso)
		for _, side := range []float32{-1, 1} {
			sh := b.end(0.17*side, 0, 1.4, 1, 0.04)
			el := b.end(0.33*side, 0, 1.2, 1, 0.04)
			ha := b.end(0.45*side, 0, 1.0, 0.5, 0.03)
			b.rod(sh, neck)
			b.rod(sh, pelvis)
			ua := b.capsule(sh, el, 0.04)
			la := b.capsule(el, ha, 0.03)
			b.attachCC(torso, ua)
			b.attachCC(torso, la)
			hip := b.end(0.1*side, 0, 1.0, 2, 0.06)
			kn := b.end(0.1*side, 0, 0.6, 2, 0.05)
			an := b.end(0.1*side, 0, 0.2, 1, 0.05)
			b.rod(hip, pelvis)
			b.rod(hip, neck)
			th := b.capsule(hip, kn, 0.06)
			b.capsule(kn, an, 0.05)
			b.attachCC(torso, th)
			foot := b.box(0.1*side, 0.05, 0.06, 0.05, 0.1, 0.03, 1)
			for _, c := range foot[4:] { // top corners hang from the ankle
				b.rod(an, c)
			}
		}
		return b.build()
	},
	"halfcheetah": func() *template {
		b := newBuilder("halfcheetah")
		back := b.end(-0.5, 0, 0.7, 3, 0.046)
		front := b.end(0.5, 0, 0.7, 3, 0.046)
		torso := b.capsule(back, front, 0.046)
		head, _ := b.sphere(0.7, 0, 0.85, 0.05, 1)
		b.rod(head, front)
		b.rod(head, back)
		for _, hipEnd := range []int32{back, front} {
			dir := float32(1)
			if hipEnd == back {
				dir = -1
			}
			hx := 0.5 * dir
			th := b.end(hx+0.1*dir, 0, 0.45, 1, 0.046)
			sh := b.end(hx-0.05*dir, 0, 0.25, 1, 0.046)
			ft := b.end(hx+0.1*dir, 0, 0.05, 0.5, 0.046)
			b.rod(th, back+front-hipEnd) // the hip's stiffness against the other end
			c1 := b.capsule(hipEnd, th, 0.046)
			b.capsule(th, sh, 0.046)
			b.capsule(sh, ft, 0.046)
			b.attachCC(torso, c1)
		}
		return b.build()
	},
	"walker2d": func() *template {
		b := newBuilder("walker2d")
		top := b.end(0, 0, 1.25, 3.5, 0.05)
		hip := b.end(0, 0, 1.05, 3.5, 0.05)
		torso := b.capsule(top, hip, 0.05)
		for _, side := range []float32{-1, 1} {
			h := b.end(0, 0.1*side, 1.05, 1, 0.05)
			kn := b.end(0, 0.1*side, 0.6, 1, 0.04)
			an := b.end(0, 0.1*side, 0.1, 1, 0.04)
			toe := b.end(0.2, 0.1*side, 0.1, 0.5, 0.06)
			b.rod(h, hip)
			b.rod(h, top)
			th := b.capsule(h, kn, 0.05)
			b.capsule(kn, an, 0.04)
			b.capsule(an, toe, 0.06)
			b.attachCC(torso, th)
		}
		return b.build()
	},
	"grasp": func() *template {
		b := newBuilder("grasp")
		palm := b.box(0, 0, 0.9, 0.08, 0.08, 0.02, 2)
		obj, _ := b.sphere(0, 0, 0.3, 0.06, 0.5)
		_ = obj
		ball := b.box(0.3, 0.0, 0.15, 0.05, 0.05, 0.05, 0.4)
		_ = ball
		for f := 0; f < 4; f++ {
			ang := float64(f) * math.Pi / 2
			cx, cy := float32(0.07*math.Cos(ang)), float32(0.07*math.Sin(ang))
			base := b.end(cx, cy, 0.88, 0.1, 0.015)
			mid := b.end(cx*1.6, cy*1.6, 0.8, 0.1, 0.015)
			tip := b.end(cx*1.4, cy*1.4, 0.7, 0.1, 0.012)
			for _, c := range palm {
				b.rod(base, c)
			}
			b.rod(mid, palm[f%4])
			b.capsule(base, mid, 0.015)
			b.capsule(mid, tip, 0.012)
		}
		return b.build()
	},
}
