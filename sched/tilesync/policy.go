package tilesync

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// Policy is how a consumer's tiles wait for its producer's.
type Policy uint8

const (
	// StreamSync is the baseline: no tile synchronization; the consumer
	// starts after the producer has finished (one stream).
	StreamSync Policy = iota
	// RowSync: one counter per row of producer tiles; a consumer tile waits
	// once, before its first load, for the whole row (target = tiles per row).
	RowSync
	// TileSync: one counter per producer tile; a consumer tile waits for
	// each producer tile just before the k-slices it produced.
	TileSync
	// StridedSync: LLaMA's GEMM1 computes gate (column tiles [0, n/2)) and
	// up ([n/2, n)); tiles y and y+n/2 post to one counter, whose target is
	// 2, and the SwiGLU consumer waits for both.
	StridedSync
	// Conv2DTileSync: one counter per producer tile of an implicit-GEMM
	// convolution; the consumer reduces over channel blocks of the
	// producer's tile width, waiting for block y/(R*S) before its R*S filter
	// positions, on every producer row tile its 3x3 halo touches.
	Conv2DTileSync
)

var policyNames = []string{"stream", "row", "tile", "strided", "conv2d"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("policy(%d)", p)
}

// ParsePolicy reads a policy name (stream, row, tile, strided, conv2d).
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if n == s {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("policy %q: want auto or one of %v", s, policyNames)
}

// Pair is a producer and a consumer stage under one policy: the counter
// mapping that the kernels' arguments and the simulator's BlockSync both
// follow. Producer tile (tm, tn) posts counter
//
//	tm*PostRowStride + (tn % PostColMod) / PostColDiv
//
// and a consumer whose reduction reaches producer column tile pn waits on
// counter tm'*WaitRowStride + (pn % WaitColMod) / WaitColDiv of every
// producer row tile tm' it reads, until the counter reaches iteration *
// PerCounter (counters are never reset).
type Pair struct {
	Policy     Policy
	Prod, Cons tiles.Stage

	PostRowStride, PostColMod, PostColDiv int
	WaitRowStride, WaitColMod, WaitColDiv int
	// WaitTileK is the producer's tile width in the consumer's reduction
	// index (its A columns, or input channels).
	WaitTileK  int
	PerCounter int
	Counters   int
}

// NewPair checks that cons reads what prod writes in a way policy can
// synchronize, and builds the mapping.
func NewPair(policy Policy, prod, cons tiles.Stage) (*Pair, error) {
	if prod.Kind != cons.Kind {
		return nil, fmt.Errorf("producer is a %s, consumer a %s: tile sync pairs two GEMMs or two convolutions", prod.Kind, cons.Kind)
	}
	if prod.M != cons.M || prod.Tile.BM != cons.Tile.BM {
		return nil, fmt.Errorf("producer has %d rows in %d-row tiles, consumer %d in %d: a consumer row tile must be one producer row tile",
			prod.M, prod.Tile.BM, cons.M, cons.Tile.BM)
	}
	reads := cons.K // consumer reduction columns taken from the producer
	switch {
	case prod.Kind == tiles.Conv:
		if cons.Cin != prod.N || cons.Batch != prod.Batch || cons.H != prod.H || cons.W != prod.W {
			return nil, fmt.Errorf("consumer convolution (%dx%dx%dx%d) does not read the producer's output (%dx%dx%dx%d)",
				cons.Batch, cons.H, cons.W, cons.Cin, prod.Batch, prod.H, prod.W, prod.N)
		}
		if prod.Tile != cons.Tile {
			return nil, fmt.Errorf("convolution pair with tiles %s and %s: the consumer reduces over channel blocks of its tile width, which must be the producer's", prod.Tile, cons.Tile)
		}
		reads = cons.Cin
	case cons.AMode == tiles.ASwiGLU:
		if 2*cons.K != prod.N {
			return nil, fmt.Errorf("SwiGLU consumer reads %d gate and %d up columns; the producer writes %d", cons.K, cons.K, prod.N)
		}
	default:
		if cons.K != prod.N {
			return nil, fmt.Errorf("consumer reduces over %d columns; the producer writes %d", cons.K, prod.N)
		}
	}
	if reads%prod.Tile.BN != 0 {
		return nil, fmt.Errorf("consumer reads %d producer columns, not a whole number of %d-column producer tiles", reads, prod.Tile.BN)
	}
	tm, tn := prod.TilesM(), prod.TilesN()
	p := &Pair{Policy: policy, Prod: prod, Cons: cons, WaitTileK: prod.Tile.BN}
	swiglu := prod.Kind == tiles.GEMM && cons.AMode == tiles.ASwiGLU
	switch policy {
	case RowSync:
		p.PostRowStride, p.PostColMod, p.PostColDiv = 1, tn, tn
		p.PerCounter, p.Counters = tn, tm
	case TileSync, Conv2DTileSync:
		if swiglu {
			return nil, fmt.Errorf("%s: a SwiGLU consumer needs the gate and the up tile; use strided or row", policy)
		}
		if (policy == Conv2DTileSync) != (prod.Kind == tiles.Conv) {
			return nil, fmt.Errorf("%s synchronizes %s pairs, not %s", policy, map[bool]string{true: "convolution", false: "GEMM"}[policy == Conv2DTileSync], prod.Kind)
		}
		p.PostRowStride, p.PostColMod, p.PostColDiv = tn, tn, 1
		p.PerCounter, p.Counters = 1, tm*tn
	case StridedSync:
		if !swiglu {
			return nil, fmt.Errorf("strided synchronizes a gate|up producer with a SwiGLU consumer; this pair is a plain %s", prod.Kind)
		}
		half := tn / 2
		p.PostRowStride, p.PostColMod, p.PostColDiv = half, half, 1
		p.PerCounter, p.Counters = 2, tm*half
	default:
		return nil, fmt.Errorf("policy %s has no tile synchronization", policy)
	}
	p.WaitRowStride, p.WaitColMod, p.WaitColDiv = p.PostRowStride, p.PostColMod, p.PostColDiv
	if cols := reads / p.WaitTileK; cols > p.WaitColMod {
		// The kernel's counter groups (tiles.cu) run 0, 1, ... in reduction
		// order; a mapping that wrapped would revisit a group it had passed.
		return nil, fmt.Errorf("%s: the consumer reads %d producer column tiles, more than the %d the counters distinguish", policy, cols, p.WaitColMod)
	}
	return p, nil
}

// PostIndex is the counter producer tile (tm, tn) increments.
func (p *Pair) PostIndex(tm, tn int) int {
	return tm*p.PostRowStride + (tn%p.PostColMod)/p.PostColDiv
}

// WaitRows is the range of producer row tiles consumer row tile tm reads:
// its own for a GEMM; for a 3x3 convolution every row tile holding a pixel
// within one image row and one pixel of the tile's (the halo). cuSync's
// published Conv2DTileSync waits on row tile tm alone, which misses the
// halo where a tile boundary cuts an image row; the kernel and this model
// include it.
func (p *Pair) WaitRows(tm int) (lo, hi int) {
	if p.Cons.Kind != tiles.Conv {
		return tm, tm
	}
	bm := p.Cons.Tile.BM
	first := max(0, tm*bm-(p.Cons.W+1))
	last := min(p.Cons.M-1, (tm+1)*bm-1+p.Cons.W+1)
	return first / bm, last / bm
}

// WaitGroups appends to buf the counter columns a consumer tile waits on,
// in the order its reduction reaches them.
func (p *Pair) WaitGroups(buf []int) []int {
	reads := p.Cons.K
	if p.Cons.Kind == tiles.Conv {
		reads = p.Cons.Cin
	}
	last := -1
	for pn := 0; pn < reads/p.WaitTileK; pn++ {
		g := (pn % p.WaitColMod) / p.WaitColDiv
		if g != last {
			buf = append(buf, g)
			last = g
		}
	}
	return buf
}

// Occupancy is the blocks of s one SM holds, from the kernel's registers
// and shared memory.
func Occupancy(in *device.Info, s tiles.Stage) (int, error) {
	k, err := s.Kernel()
	if err != nil {
		return 0, err
	}
	l := device.Launch{Kernel: k, Grid: s.Grid(), Block: device.D1(tiles.Threads)}
	n, _ := in.Occupancy(&l)
	if n == 0 {
		return 0, fmt.Errorf("%s does not fit on one SM of %s", s.KernelName(), in.Name)
	}
	return n, nil
}

// Waves is the launch's wave count on an idle device: tiles over (SMs x
// blocks per SM).
func Waves(in *device.Info, s tiles.Stage) (float64, error) {
	k, err := s.Kernel()
	if err != nil {
		return 0, err
	}
	l := device.Launch{Kernel: k, Grid: s.Grid(), Block: device.D1(tiles.Threads)}
	if n, _ := in.Occupancy(&l); n == 0 {
		return 0, fmt.Errorf("%s does not fit on one SM of %s", s.KernelName(), in.Name)
	}
	return in.Waves(&l), nil
}

// Finest is the finest-grained policy a pair allows: TileSync, or
// StridedSync for a SwiGLU consumer, or Conv2DTileSync for convolutions.
func Finest(prod, cons tiles.Stage) Policy {
	switch {
	case prod.Kind == tiles.Conv:
		return Conv2DTileSync
	case cons.AMode == tiles.ASwiGLU:
		return StridedSync
	}
	return TileSync
}

// Choice is what the rule picks for one pair.
type Choice struct {
	Policy           Policy
	WaitKernel       bool
	TileOrder        bool
	IndependentFirst bool
	// Gain is the rule's estimate of the fraction of the stream-ordered
	// time that tile synchronization recovers (WaveCounts.Gain).
	Gain float64
	// Why is the rule's reasoning, for result tables.
	Why string
}

// DefaultMinGain is the smallest estimated gain (WaveCounts.Gain, a
// fraction of the stream-ordered time) for which the rule synchronizes a
// pair. Synchronization has a price the wave model does not see: the
// second stream, the wait kernel, the tile-order atomics, the polls, and
// consumer blocks sharing SMs with the producer's last tiles. Measured on
// a GPU (docs/history/tilesync.md), pairs with no gain to find ran 5 to
// 19% slower than stream order and multi-wave pairs realized their
// estimated gain minus 6 to 14 points; 0.10 keeps the pairs whose estimate
// clears that overhead.
const DefaultMinGain = 0.10

// WaveCounts is what the rule reads of a pair on a device: SMs, each
// stage's blocks per SM and tiles, the producer's tiles per row (rows
// complete in row order under the custom tile order), the consumer's tiles
// per row and the producer rows beyond its own that a consumer row tile
// reads (the 3x3 halo), and one tile's work (its flops: the unit of time).
type WaveCounts struct {
	SMs                        int
	ProdPerSM, ConsPerSM       int
	ProdTiles, ConsTiles       int
	ProdRowTiles, ConsRowTiles int
	ConsHaloRows               int
	ProdTileWork, ConsTileWork float64
}

// Check reports counts the model cannot use.
func (w WaveCounts) Check() error {
	switch {
	case w.SMs < 1 || w.ProdPerSM < 1 || w.ConsPerSM < 1:
		return fmt.Errorf("wave counts: SMs %d and blocks per SM %d, %d must be positive", w.SMs, w.ProdPerSM, w.ConsPerSM)
	case w.ProdTiles < 1 || w.ConsTiles < 1 || w.ProdRowTiles < 1 || w.ConsRowTiles < 1:
		return fmt.Errorf("wave counts: tiles %d, %d and tiles per row %d, %d must be positive", w.ProdTiles, w.ConsTiles, w.ProdRowTiles, w.ConsRowTiles)
	case w.ConsHaloRows < 0:
		return fmt.Errorf("wave counts: halo rows %d must not be negative", w.ConsHaloRows)
	case !(w.ProdTileWork > 0) || !(w.ConsTileWork > 0):
		return fmt.Errorf("wave counts: tile work %g, %g must be positive", w.ProdTileWork, w.ConsTileWork)
	}
	return nil
}

// Waves are the producer's and the consumer's wave counts: tiles / (SMs x
// blocks per SM).
func (w WaveCounts) Waves() (prod, cons float64) {
	return float64(w.ProdTiles) / float64(w.SMs*w.ProdPerSM), float64(w.ConsTiles) / float64(w.SMs*w.ConsPerSM)
}

// stageTime is a launch's time on an idle device in the rule's model: each
// full wave takes blocks-per-SM tile times (the SM's throughput is shared
// by its resident blocks); the last, partial wave is placed breadth first
// (one block per SM, then a second, ...), so it takes as many tile times as
// the most loaded SM holds blocks.
func (w WaveCounts) stageTime(tiles, perSM int, work float64) float64 {
	slots := w.SMs * perSM
	t := float64(tiles/slots*perSM) * work
	if r := tiles % slots; r > 0 {
		t += float64((r+w.SMs-1)/w.SMs) * work
	}
	return t
}

// StreamTime is the stream-ordered time of the pair in the rule's model.
func (w WaveCounts) StreamTime() float64 {
	return w.stageTime(w.ProdTiles, w.ProdPerSM, w.ProdTileWork) + w.stageTime(w.ConsTiles, w.ConsPerSM, w.ConsTileWork)
}

// IdleSMTime is the SM time the producer's last, partial wave leaves idle:
// its r blocks, placed breadth first, load the busiest SMs with c =
// ceil(r / SMs) blocks for c tile times, so SMs x c - r block-times of SM
// throughput go unused. Zero when the producer fills its last wave or fits
// one wave (no producer row completes before its last wave ends, so no
// consumer could run in it).
func (w WaveCounts) IdleSMTime() float64 {
	slots := w.SMs * w.ProdPerSM
	full, r := w.ProdTiles/slots, w.ProdTiles%slots
	if full == 0 || r == 0 {
		return 0
	}
	c := (r + w.SMs - 1) / w.SMs
	return float64(w.SMs*c-r) * w.ProdTileWork
}

// ReadyConsumerTiles is how many consumer tiles can run during the
// producer's last wave: those whose producer rows (with the halo)
// completed in the full waves before it, rows completing in order.
func (w WaveCounts) ReadyConsumerTiles() int {
	slots := w.SMs * w.ProdPerSM
	rows := w.ProdTiles / slots * slots / w.ProdRowTiles
	return min(w.ConsTiles, max(0, rows-w.ConsHaloRows)*w.ConsRowTiles)
}

// Gain is the expected fraction of the stream-ordered time that overlap
// recovers: the idle SM time of the producer's last wave that ready
// consumer tiles can fill, spread over all SMs, over StreamTime. It is an
// upper bound on what synchronization can win, before its costs.
func (w WaveCounts) Gain() float64 {
	fill := min(w.IdleSMTime(), float64(w.ReadyConsumerTiles())*w.ConsTileWork)
	return fill / float64(w.SMs) / w.StreamTime()
}

// CountWaves reads a pair's wave counts on device in.
func CountWaves(in *device.Info, prod, cons tiles.Stage) (WaveCounts, error) {
	po, err := Occupancy(in, prod)
	if err != nil {
		return WaveCounts{}, err
	}
	co, err := Occupancy(in, cons)
	if err != nil {
		return WaveCounts{}, err
	}
	w := WaveCounts{SMs: in.SMs, ProdPerSM: po, ConsPerSM: co,
		ProdTiles: prod.NumTiles(), ConsTiles: cons.NumTiles(),
		ProdRowTiles: prod.TilesN(), ConsRowTiles: cons.TilesN(),
		ProdTileWork: prod.FLOPs() / float64(prod.NumTiles()), ConsTileWork: cons.FLOPs() / float64(cons.NumTiles())}
	if cons.Kind == tiles.Conv {
		w.ConsHaloRows = (cons.W + 1 + cons.Tile.BM - 1) / cons.Tile.BM
	}
	return w, w.Check()
}

// Choose applies the package's rule (see the package comment) to a pair on
// device in, synchronizing it only when the estimated gain is at least
// minGain (DefaultMinGain unless measured otherwise).
func Choose(in *device.Info, prod, cons tiles.Stage, minGain float64) (Choice, error) {
	w, err := CountWaves(in, prod, cons)
	if err != nil {
		return Choice{}, err
	}
	return Decide(w, Finest(prod, cons), minGain)
}

// Decide is the rule on wave counts alone; fine is the finest policy the
// pair allows.
func Decide(w WaveCounts, fine Policy, minGain float64) (Choice, error) {
	if err := w.Check(); err != nil {
		return Choice{}, err
	}
	if err := checkMinGain(minGain); err != nil {
		return Choice{}, err
	}
	wp, wc := w.Waves()
	c := Choice{IndependentFirst: true, Gain: w.Gain()}
	// For a caller that synchronizes the pair whatever the rule says: the
	// wait kernel unless every block is resident at once, the tile order
	// when the producer has more than one wave of rows to complete in order.
	c.WaitKernel = wp+wc > 1
	c.TileOrder = wp > 1
	rowsPerWave := float64(w.SMs*w.ProdPerSM) / float64(w.ProdRowTiles)
	switch {
	case wp+wc <= 1:
		c.Policy = StreamSync
		c.Why = fmt.Sprintf("both fit one wave (%.2f + %.2f): every producer tile finishes in the first wave, so consumers could only spin: stream", wp, wc)
	case wp <= 1:
		c.Policy = StreamSync
		c.Why = fmt.Sprintf("%.2f + %.2f waves: the producer fits one wave, so its tiles finish together and leave no partial wave to fill: stream", wp, wc)
	case c.Gain < minGain:
		c.Policy = StreamSync
		c.Why = fmt.Sprintf("%.2f + %.2f waves: the producer's last wave leaves %.0f%% of its SM time idle, an estimated gain of %.1f%% < min_gain %.1f%%: stream",
			wp, wc, 100*w.IdleSMTime()/(float64(w.SMs)*w.stageTime(w.ProdTiles%(w.SMs*w.ProdPerSM), w.ProdPerSM, w.ProdTileWork)), 100*c.Gain, 100*minGain)
	case rowsPerWave >= 2:
		c.Policy = RowSync
		c.Why = fmt.Sprintf("%.2f + %.2f waves, estimated gain %.1f%% >= %.1f%%; a wave holds %.1f producer rows, so rows finish in order: row", wp, wc, 100*c.Gain, 100*minGain, rowsPerWave)
	default:
		c.Policy = fine
		c.Why = fmt.Sprintf("%.2f + %.2f waves, estimated gain %.1f%% >= %.1f%%; a wave holds %.1f producer rows, so consumers must start on single tiles: %s", wp, wc, 100*c.Gain, 100*minGain, rowsPerWave, fine)
	}
	return c, nil
}

func checkMinGain(g float64) error {
	if !(g >= 0 && g < 1) {
		return fmt.Errorf("min_gain %g: want a fraction of the stream-ordered time in [0, 1)", g)
	}
	return nil
}
