package synthetic

import (
	"math"
	"math/rand/v2"
)

// Draw bounds: a drawn program has at most this many kernel and copy
// operations, and its kernels at most this many element-iterations in all
// (the CPU reference's cost: about 5 s on one core, split over all of them).
const (
	drawMaxOps  = 320
	drawMaxWork = 4e9
)

// Draw returns the parameters of a random DAG: its shape (layers, per-layer
// widths, fan-in, skips), grid sizes, kernel lengths, block size, steps and
// copy mix all drawn from seed and index, so that a held-out check can run
// shapes nobody chose (nor committed) by giving a fresh seed. The ranges
// span chains to wide layers, single blocks to several waves of an H100,
// launch-bound to compute-bound kernels; the total stays within drawMaxOps
// operations and drawMaxWork element-iterations, so a program runs in
// milliseconds on a GPU and its reference in seconds.
func Draw(seed int64, index int) Params {
	r := rand.New(rand.NewPCG(uint64(seed), 0xd7a3+uint64(index)))
	logUniform := func(lo, hi float64) int { return int(math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo)))) }
	p := Defaults()
	p.Layers = logUniform(1, 40)
	p.Width = logUniform(1, 33)
	if r.Float64() < 0.5 { // uneven layers: forks, joins, diamonds
		p.Widths = make([]int, p.Layers)
		for i := range p.Widths {
			p.Widths[i] = logUniform(1, 33)
		}
	}
	p.FanIn = 1 + r.IntN(4)
	p.Skip = r.Float64() * 0.5
	p.Threads = []int{64, 128, 256}[r.IntN(3)]
	p.MinBlocks = logUniform(1, 1024)
	p.MaxBlocks = min(p.MinBlocks*logUniform(1, 64), 8192)
	p.Iters = logUniform(16, 4096)
	if r.Float64() < 0.3 {
		p.MaxIters = min(p.Iters*logUniform(2, 64), 16384)
	}
	p.Steps = 1 + r.IntN(4)
	if r.Float64() < 0.3 {
		p.Copies = 0.1 + 0.3*r.Float64()
		p.CopyBytes = 4 * int64(logUniform(1<<12, 1<<20))
		p.Downloads = r.Float64() < 0.5
	}
	p.shrink()
	return p
}

// shrink halves steps, then layers, then kernel lengths and grids in
// turn, until the program is within the draw bounds.
func (p *Params) shrink() {
	for turn := 0; ; turn++ {
		nodes := 0
		for l := 1; l <= p.Layers; l++ {
			nodes += p.width(l)
		}
		ops := nodes * p.Steps
		work := float64(ops) * float64(p.MaxBlocks*p.Threads) * float64(max(p.Iters, p.MaxIters)+1)
		switch {
		case ops > drawMaxOps && p.Steps > 1:
			p.Steps = (p.Steps + 1) / 2
		case ops > drawMaxOps:
			p.Layers = (p.Layers + 1) / 2
			if len(p.Widths) > 0 {
				p.Widths = p.Widths[:p.Layers]
			}
		case work > drawMaxWork && max(p.Iters, p.MaxIters) > 16 && (turn%2 == 0 || p.MaxBlocks == 1):
			p.Iters = max(p.Iters/2, 1)
			if p.MaxIters > 0 {
				p.MaxIters = max(p.MaxIters/2, p.Iters)
			}
		case work > drawMaxWork && p.MaxBlocks > 1:
			p.MaxBlocks = max(p.MaxBlocks/2, 1)
			p.MinBlocks = min(p.MinBlocks, p.MaxBlocks)
		default:
			return
		}
	}
}
