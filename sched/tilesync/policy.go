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
	// Why is the rule's reasoning, for result tables.
	Why string
}

// Choose applies the package's rule (see the package comment) to a pair on
// device in.
func Choose(in *device.Info, prod, cons tiles.Stage) (Choice, error) {
	wp, err := Waves(in, prod)
	if err != nil {
		return Choice{}, err
	}
	wc, err := Waves(in, cons)
	if err != nil {
		return Choice{}, err
	}
	occ, err := Occupancy(in, prod)
	if err != nil {
		return Choice{}, err
	}
	slots := occ * in.SMs
	c := Choice{IndependentFirst: true}
	oneWave := wp+wc <= 1
	c.WaitKernel = !oneWave
	c.TileOrder = wp > 1
	fine := Finest(prod, cons)
	rowsPerWave := float64(slots) / float64(prod.TilesN())
	switch {
	case wp <= 1 && !oneWave:
		// WaitKernel and TileOrder keep their values for a caller that
		// synchronizes this pair anyway.
		c.Policy = StreamSync
		c.Why = fmt.Sprintf("%.2f + %.2f waves: the producer fits one wave, so its tiles finish together and leave no partial wave to fill, while spinning consumers would hold SMs: stream", wp, wc)
	case oneWave:
		c.Policy = fine
		c.Why = fmt.Sprintf("both fit one wave (%.2f + %.2f): %s, no wait kernel", wp, wc, fine)
	case rowsPerWave >= 2:
		c.Policy = RowSync
		c.Why = fmt.Sprintf("%.2f + %.2f waves; a wave holds %.1f producer rows, so rows finish in order: row", wp, wc, rowsPerWave)
	default:
		c.Policy = fine
		c.Why = fmt.Sprintf("%.2f + %.2f waves; a wave holds %.1f producer rows, so consumers must start on single tiles: %s", wp, wc, rowsPerWave, fine)
	}
	return c, nil
}
