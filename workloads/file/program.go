package file

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// ReplayKernel is the replay kernel's descriptor (workloads/kernels/replay.cu).
var ReplayKernel, replayErr = kernels.Lookup("replay", "replay")

// replayAlt is the eighth replay kernel (replay.cu's replay_v8: the
// replay kernel reading its descriptor from replay.desc), which
// TestGPUReplay and TestGPUReplayProbe measure beside ReplayKernel.
var replayAlt, _ = kernels.Lookup("replay", "replay_v8")

const (
	seenArgs  = 24 // buffer parameters the replay kernel declares (a0..a23)
	fixedArgs = 4  // desc, state, sig, spin_ns
	maxArgs   = 64 // what the CUDA backend passes at most
	descArgs  = 25 // the replay kernel's descriptor parameters (d0..d24: the head and 24 pairs)
	spinArg   = 3  // spin_ns's index in the kernel's parameters
	stateSize = 32 // bytes of replay.state per kernel
	stateBuf  = "replay.state"
	sigBuf    = "replay.sig"
	descBuf   = "replay.desc"
	arenaBuf  = "replay.arena"
	hostPre   = "replay.host:"
)

// Options tune how a file becomes a program.
type Options struct {
	// OverheadNS is taken off every block's spin time: what the replay
	// kernel's block takes beyond its spin (its writes after the spin),
	// measured on the GPU (TestGPUReplayProbe) so that a replayed kernel
	// lasts as long as the recorded one.
	OverheadNS int64
	// FloorNS is the shortest a replayed block lasts on the GPU (its reads
	// and writes with no spin between them, TestGPUReplayProbe): the
	// simulated block lasts at least that long. 0 models none.
	FloorNS int64
	// ProfilerNS is what a profiler's recorded kernel duration holds beyond
	// the kernel's own work (the launch and drain it times as the kernel's,
	// which a graph overlaps with the neighbours): taken off every measured
	// kernel duration before the replay spins for it. The chain probe
	// (scripts/gpu/imported-chain-probe.py) measures it: a sleep kernel's
	// recorded duration less its spin. 0 takes the durations as recorded.
	ProfilerNS int64
	// PinHost replays copies recorded from or to pageable host memory from
	// or to pinned memory: a pageable copy synchronizes the host and cannot
	// be captured into a CUDA graph, so with it recorded as such every
	// graph-based schedule fails, as it would have for the original.
	PinHost bool
	// kernel replaces the replay kernel (TestGPUReplayProbe's replayAlt and replay_bare).
	kernel *device.Kernel
}

// node is one operation of the program being built: an operation of the
// file, or a join kernel standing between two copies that `after` orders.
type node struct {
	op     *Op // nil for a join
	name   string
	kind   string // kernel, memset, copy, join
	reads  []Access
	writes []Access
	tokens []*node // kernels whose signature this one reads (`after` between kernels)
	slot   int     // index in replay.state for kernels, memsets and joins; -1 for copies
}

func (n *node) replayed() bool { return n.kind != "copy" }

// Program turns a checked file into a program: every kernel and memset a
// launch of the replay kernel (grid, block, padded shared memory, spin time,
// the recorded accesses), every copy a copy, `after` edges realized as
// accesses. It fails if the file does not check.
func Program(f *File, opt Options) (*workloads.Program, error) {
	p, _, err := program(f, opt)
	return p, err
}

func program(f *File, opt Options) (*workloads.Program, *reference, error) {
	if replayErr != nil {
		return nil, nil, replayErr
	}
	if err := f.Check(); err != nil {
		return nil, nil, err
	}
	if opt.OverheadNS < 0 {
		return nil, nil, fmt.Errorf("overhead_ns must not be negative, got %d", opt.OverheadNS)
	}
	if opt.FloorNS < 0 {
		return nil, nil, fmt.Errorf("floor_ns must not be negative, got %d", opt.FloorNS)
	}
	if opt.ProfilerNS < 0 {
		return nil, nil, fmt.Errorf("profiler_ns must not be negative, got %d", opt.ProfilerNS)
	}
	steps, err := f.nodes()
	if err != nil {
		return nil, nil, err
	}
	return newBuilder(f, opt, steps).build()
}

// nodes lists each step's operations in issue order and realizes `after`.
func (f *File) nodes() ([][]*node, error) {
	order, err := f.Order()
	if err != nil {
		return nil, err
	}
	byName := map[string]*node{}
	steps := make([][]*node, len(f.Steps))
	slots := 0
	for si, idx := range order {
		for _, i := range idx {
			o := &f.Steps[si].Ops[i]
			n := &node{op: o, name: o.Name(), kind: o.Kind(), slot: -1,
				reads: append([]Access(nil), o.Reads...), writes: append([]Access(nil), o.Writes...)}
			if n.replayed() {
				n.slot, slots = slots, slots+1
			}
			byName[n.name] = n
			steps[si] = append(steps[si], n)
		}
	}
	for si := range steps {
		var out []*node
		for _, s := range steps[si] {
			for _, a := range s.op.After {
				p := byName[a]
				if p.kind == "copy" && s.kind == "copy" {
					j := &node{name: "join " + p.name + " -> " + s.name, kind: "join", slot: slots}
					slots++
					link(p, j)
					link(j, s)
					out = append(out, j)
					continue
				}
				link(p, s)
			}
			out = append(out, s)
		}
		steps[si] = out
	}
	return steps, nil
}

// link makes s follow p through accesses: a kernel reads the signature of
// a kernel before it; a copy's device range is read (or, for a range the
// copy only reads, written) by the kernel on the other side.
func link(p, s *node) {
	switch {
	case p.replayed() && s.replayed():
		s.tokens = append(s.tokens, p)
	case p.replayed(): // s is a copy
		if len(s.writes) > 0 {
			p.reads = append(p.reads, s.writes[0])
		} else {
			p.writes = append(p.writes, s.reads[0])
		}
	default: // p is a copy, s a kernel
		if len(p.writes) > 0 {
			s.reads = append(s.reads, p.writes[0])
		} else {
			s.writes = append(s.writes, p.reads[0])
		}
	}
}

// Durations and occupancy.

// blocksOf is a kernel's grid size (1 for memsets and joins).
func blocksOf(n *node) int {
	if n.kind == "kernel" {
		return n.op.Grid.Count()
	}
	return 1
}

// threadsOf is a block's thread count (256 for memsets, 32 for joins).
func threadsOf(n *node) int {
	switch n.kind {
	case "kernel":
		return n.op.Block.Count()
	case "memset":
		return 256
	}
	return 32
}

// durationNS is the time n took on the recorded device: measured, or
// estimated from its work at the device's throughputs.
func (d *Device) durationNS(n *node, bytes int64) float64 {
	switch {
	case n.kind == "join":
		return 0
	case n.op.DurationNS > 0:
		return float64(n.op.DurationNS)
	case n.kind == "memset":
		return float64(bytes) / d.MemBandwidth * 1e9
	}
	var t float64
	if w := n.op.Work; w.Bytes > 0 {
		t = w.Bytes / d.MemBandwidth
	}
	if w := n.op.Work; w.Flops > 0 {
		t = math.Max(t, w.Flops/d.Flops)
	}
	return t * 1e9
}

// occupancy is how many blocks of the original fit on an SM of the
// recorded device.
func (d *Device) occupancy(n *node) int {
	if n.kind != "kernel" {
		per, _ := d.blocksPerSM(threadsOf(n), ReplayKernel.Regs, ReplayKernel.StaticShared)
		return per
	}
	per, _ := d.blocksPerSM(threadsOf(n), n.op.Registers, n.op.StaticShared+n.op.DynamicShared)
	return per
}

// spinNS is each replayed block's time: the duration (a measured one less
// what the profiler recorded beyond the kernel's work, profiler) spread over
// the original's waves on the recorded device, less the replay's own
// overhead.
func (d *Device) spinNS(n *node, bytes, overhead, profiler int64) int64 {
	waves := math.Ceil(float64(blocksOf(n)) / float64(d.SMs*d.occupancy(n)))
	dur := d.durationNS(n, bytes)
	if n.kind == "kernel" && n.op.DurationNS > 0 {
		dur = math.Max(0, dur-float64(profiler))
	}
	spin := dur/waves - float64(overhead)
	return int64(math.Max(0, math.Round(spin)))
}

// paddedShared is the dynamic shared memory the replay launch asks for so
// that as many of its blocks fit on an SM of the recorded device as did of
// the original's: the original's own shared memory, or, where registers or
// shared memory made the original's occupancy lower than that, the largest
// size that still lets exactly that many blocks fit (a block then holds
// 1/B of the SM's shared memory, as the original held 1/B of the resource
// that bound it).
func (d *Device) paddedShared(n *node) int {
	if n.kind != "kernel" {
		return 0
	}
	want := d.occupancy(n)
	dyn := max(0, n.op.StaticShared+n.op.DynamicShared-ReplayKernel.StaticShared)
	if got, _ := d.blocksPerSM(threadsOf(n), ReplayKernel.Regs, ReplayKernel.StaticShared+dyn); got <= want {
		return dyn
	}
	return d.SharedPerSM/want - d.SharedReserved - ReplayKernel.StaticShared
}

// Program buffers.

// ranges lays the file's buffers out in the program's. Buffers no copy
// touches are compressed: the replay touches a few sampled bytes of each
// range, so only the order of the ranges' endpoints matters, and each such
// buffer shrinks to one byte per gap between endpoints, which keeps every
// overlap (and every non-overlap) of the original ranges; the compressed
// buffers then lie side by side in one arena, one allocation and one upload
// however many tensors a model has. Buffers a copy touches keep their size
// and their own allocation, since the copy moves real bytes.
type ranges struct {
	real       []string                   // file buffers kept whole, in file order: program buffers 0..
	compressed []string                   // file buffers in the arena, in file order
	arena      int                        // program buffer index of the arena (len(real))
	arenaSize  int64                      // bytes
	index      map[string]int             // file buffer -> program buffer
	base       map[string]int64           // compressed buffer -> offset in the arena
	rank       map[string]map[int64]int64 // compressed buffer: endpoint -> offset from its base
}

func newRanges(f *File, steps [][]*node) *ranges {
	sizes := f.sizes()
	r := &ranges{index: map[string]int{}, base: map[string]int64{}, rank: map[string]map[int64]int64{}}
	copied := map[string]bool{}
	ends := map[string]map[int64]bool{}
	for _, b := range f.Buffers {
		ends[b.Name] = map[int64]bool{0: true, b.Bytes: true}
	}
	for _, s := range steps {
		for _, n := range s {
			for _, a := range append(append([]Access(nil), n.reads...), n.writes...) {
				if n.kind == "copy" {
					copied[a.Buffer] = true
				}
				ends[a.Buffer][a.Offset] = true
				ends[a.Buffer][a.Offset+span(a, sizes)] = true
			}
		}
	}
	for _, b := range f.Buffers {
		if copied[b.Name] {
			r.index[b.Name] = len(r.real)
			r.real = append(r.real, b.Name)
		}
	}
	r.arena = len(r.real)
	for _, b := range f.Buffers {
		if copied[b.Name] {
			continue
		}
		keys := make([]int64, 0, len(ends[b.Name]))
		for k := range ends[b.Name] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		m := make(map[int64]int64, len(keys))
		for i, k := range keys {
			m[k] = int64(i)
		}
		r.compressed = append(r.compressed, b.Name)
		r.index[b.Name], r.base[b.Name], r.rank[b.Name] = r.arena, r.arenaSize, m
		r.arenaSize += int64(len(keys) - 1)
	}
	return r
}

// place is an access's program buffer, offset and length.
func (r *ranges) place(a Access, sizes map[string]int64) (buf int, off, n int64) {
	end := a.Offset + span(a, sizes)
	if m, ok := r.rank[a.Buffer]; ok {
		return r.arena, r.base[a.Buffer] + m[a.Offset], m[end] - m[a.Offset]
	}
	return r.index[a.Buffer], a.Offset, end - a.Offset
}

// arenaInit fills each compressed buffer's part of the arena with its
// buffer's pattern.
func (r *ranges) arenaInit(sizes map[string]int64) func([]byte) {
	return func(data []byte) {
		for i, name := range r.compressed {
			end := r.arenaSize
			if i+1 < len(r.compressed) {
				end = r.base[r.compressed[i+1]]
			}
			pattern(name)(data[r.base[name]:end])
		}
	}
}

// owner names the file buffer at byte off of program buffer buf.
func (r *ranges) owner(buf int, off int64) string {
	if buf != r.arena {
		return ""
	}
	name := ""
	for _, c := range r.compressed {
		if r.base[c] <= off {
			name = c
		}
	}
	return name
}

// ReplayBlock is one replayed operation's block as the replay spins for
// it: NS, its share of the recorded duration (less profiler_ns) per wave
// before the replay's overhead comes off, and Waves, how many waves of
// blocks the original ran on the recorded device.
type ReplayBlock struct {
	NS    int64
	Waves int
}

// ReplayBlocks lists the blocks of every kernel, memset and join the file
// replays, in issue order, with profilerNS taken off measured durations as
// Program takes it: what a replay floor of F ns costs the file is the sum
// over them of Waves * max(0, F - NS).
func (f *File) ReplayBlocks(profilerNS int64) ([]ReplayBlock, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	steps, err := f.nodes()
	if err != nil {
		return nil, err
	}
	sizes := f.sizes()
	var out []ReplayBlock
	for _, s := range steps {
		for _, n := range s {
			if !n.replayed() {
				continue
			}
			waves := (blocksOf(n) + f.Device.SMs*f.Device.occupancy(n) - 1) / (f.Device.SMs * f.Device.occupancy(n))
			var bytes int64
			if n.kind == "memset" {
				bytes = copyBytes(n.op, sizes)
			}
			out = append(out, ReplayBlock{NS: f.Device.spinNS(n, bytes, 0, profilerNS), Waves: waves})
		}
	}
	return out, nil
}
