package file

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// builder turns the nodes of a file into a program and remembers what the
// reference needs to compute the same bytes.
type builder struct {
	f     *File
	opt   Options
	steps [][]*node
	sizes map[string]int64
	r     *ranges
	prog  *workloads.Program
	state int      // program buffer index of replay.state
	sig   int      // of replay.sig
	desc  int      // of replay.desc
	words []uint32 // replay.desc's contents
	ref   []refOp
}

func newBuilder(f *File, opt Options, steps [][]*node) *builder {
	return &builder{f: f, opt: opt, steps: steps, sizes: f.sizes(), r: newRanges(f, steps)}
}

func (b *builder) build() (*workloads.Program, *reference, error) {
	p := &workloads.Program{Name: b.f.Name}
	slots := 0
	for _, s := range b.steps {
		for _, n := range s {
			if n.replayed() {
				slots++
			}
		}
	}
	for _, name := range b.r.real {
		p.Buffers = append(p.Buffers, workloads.BufferSpec{Name: name, Bytes: b.sizes[name], Init: pattern(name), Output: true})
	}
	p.Buffers = append(p.Buffers, workloads.BufferSpec{Name: arenaBuf, Bytes: max(1, b.r.arenaSize), Init: b.r.arenaInit(b.sizes), Output: true})
	b.state, b.sig, b.desc = len(p.Buffers), len(p.Buffers)+1, len(p.Buffers)+2
	p.Buffers = append(p.Buffers,
		workloads.BufferSpec{Name: stateBuf, Bytes: int64(max(1, slots) * stateSize)},
		workloads.BufferSpec{Name: sigBuf, Bytes: int64(max(1, slots) * 4), Output: true},
		workloads.BufferSpec{Name: descBuf, Bytes: 4}) // sized below
	b.prog = p
	args := map[*node][]dataArg{}
	for _, s := range b.steps {
		for _, n := range s {
			if n.replayed() {
				args[n] = b.dataArgs(n)
			}
		}
	}
	b.markOrderOnly(args)
	for _, s := range b.steps {
		var step workloads.Step
		for _, n := range s {
			var op workloads.Op
			var err error
			if n.replayed() {
				op, err = b.replay(n, args[n])
			} else {
				op, err = b.copyOp(n)
			}
			if err != nil {
				return nil, nil, err
			}
			step.Ops = append(step.Ops, op)
		}
		p.Steps = append(p.Steps, step)
	}
	// Every lane of the replay's first warp reads its range's pair of
	// words along with its kernel's head (replay.cu): 32 pairs of zeros at
	// the end keep the last kernel's lanes inside the buffer.
	words := append(b.words, make([]uint32, 2*32)...)
	p.Buffers[b.desc].Bytes = int64(len(words) * 4)
	p.Buffers[b.desc].Init = func(data []byte) {
		for i, w := range words {
			binary.LittleEndian.PutUint32(data[4*i:], w)
		}
	}
	ref := &reference{prog: p, sig: b.sig, ops: b.ref, owner: b.r.owner}
	p.Check = ref.check
	if err := p.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", b.f.Name, err)
	}
	return p, ref, nil
}

// dataArg is one range a replayed kernel touches. orderOnly marks a read
// whose bytes the kernel does not hash (markOrderOnly says why).
type dataArg struct {
	buf       int
	off, n    int64
	mode      device.Access
	orderOnly bool
}

// hashes reports whether the kernel hashes the range's bytes.
func (a dataArg) hashes() bool { return a.mode&device.Read != 0 && !a.orderOnly }

// descMode is the range's mode in replay.desc: bit 0 hash, bit 1 write.
func (a dataArg) descMode() uint32 {
	m := uint32(0)
	if a.hashes() {
		m |= 1
	}
	if a.mode&device.Write != 0 {
		m |= 2
	}
	return m
}

// dataArgs lists n's ranges as the kernel sees them: writes first (merged
// with reads of the same range), then reads, then the signatures of the
// kernels `after` names, so that when more than 24 ranges are touched the
// kernel's own writes are among those it sees.
func (b *builder) dataArgs(n *node) []dataArg {
	var out []dataArg
	seen := map[[3]int64]int{}
	add := func(a Access, mode device.Access) {
		buf, off, l := b.r.place(a, b.sizes)
		key := [3]int64{int64(buf), off, l}
		if i, ok := seen[key]; ok {
			out[i].mode |= mode
			return
		}
		seen[key] = len(out)
		out = append(out, dataArg{buf: buf, off: off, n: l, mode: mode})
	}
	for _, a := range n.writes {
		add(a, device.Write)
	}
	for _, a := range n.reads {
		add(a, device.Read)
	}
	for _, t := range n.tokens {
		out = append(out, dataArg{buf: b.sig, off: int64(t.slot * 4), n: 4, mode: device.Read})
	}
	return out
}

// kernel is the kernel every replayed operation launches.
func (b *builder) kernel() *device.Kernel {
	if b.opt.kernel != nil {
		return b.opt.kernel
	}
	return ReplayKernel
}

// replay builds the replay kernel's launch for a kernel, memset or join.
func (b *builder) replay(n *node, args []dataArg) (workloads.Op, error) {
	limit := maxArgs - fixedArgs
	if descInParams(b.kernel()) {
		limit -= descArgs
	}
	if len(args) > limit {
		return workloads.Op{}, b.nodeErr(n, fmt.Errorf("touches %d buffer ranges; the replay passes at most %d", len(args), limit))
	}
	var bytes int64
	if n.kind == "memset" {
		bytes = copyBytes(n.op, b.sizes)
	}
	d := &b.f.Device
	// The GPU block spins for its share of the recorded time less the
	// replay's own cost after its spin; the simulated block lasts the spin
	// plus that cost, and never less than the replay's floor (its time at
	// spin 0): what the replayed block takes on the GPU.
	spin := d.spinNS(n, bytes, b.opt.OverheadNS, b.opt.ProfilerNS)
	block := math.Max(float64(spin+b.opt.OverheadNS), float64(b.opt.FloorNS))
	seen := min(len(args), seenArgs)
	descOff := int64(len(b.words) * 4)
	b.words = append(b.words, uint32(n.slot+1), b.count(args[:seen])|overheadWord(b.opt.OverheadNS))
	for _, a := range args[:seen] {
		b.words = append(b.words, a.descMode(), uint32(min(a.n, math.MaxUint32)))
	}
	specs := []workloads.ArgSpec{
		workloads.BufRange(b.desc, device.Read, descOff, int64(len(b.words)*4)-descOff),
		workloads.BufRange(b.state, device.ReadWrite, int64(n.slot*stateSize), stateSize),
		workloads.BufRange(b.sig, device.Write, int64(n.slot*4), 4),
		workloads.Scalar64(uint64(spin)),
	}
	for i := 0; i < seenArgs; i++ {
		if i < seen {
			a := args[i]
			specs = append(specs, workloads.BufRange(a.buf, a.mode, a.off, a.n))
		} else {
			specs = append(specs, workloads.Scalar64(0))
		}
	}
	if descInParams(b.kernel()) {
		specs = append(specs, descParams(b.words[descOff/4:])...)
	}
	for _, a := range args[seen:] {
		specs = append(specs, workloads.BufRange(a.buf, a.mode, a.off, a.n))
	}
	op := workloads.Op{Name: n.name, Kind: workloads.OpKernel, Kernel: b.kernel(), Args: specs,
		Grid: device.D1(1), Block: device.D1(threadsOf(n)), SharedMem: d.paddedShared(n),
		Work: device.Work{Cycles: block * float64(d.ClockHz) / 1e9}}
	if n.kind == "kernel" {
		op.Grid = device.Dim3{X: n.op.Grid.X, Y: n.op.Grid.Y, Z: n.op.Grid.Z}
		op.Block = device.Dim3{X: n.op.Block.X, Y: n.op.Block.Y, Z: n.op.Block.Z}
		if n.op.DurationNS == 0 { // a work estimate: the simulator's throughput model times it
			blocks := float64(blocksOf(n))
			op.Work = device.Work{Flops: n.op.Work.Flops / blocks, Bytes: n.op.Work.Bytes / blocks}
		}
	}
	b.ref = append(b.ref, refOp{seed: uint32(n.slot + 1), slot: n.slot, args: args[:seen]})
	return op, nil
}

// descInParams reports whether k reads its descriptor from its parameters
// (replay.cu's replay, the ninth: d0..d24 after a0..a23) rather than
// replay.desc (the earlier versions).
func descInParams(k *device.Kernel) bool {
	return k.Module == "replay" && k.Name == "replay"
}

// descParams is a kernel's descriptor (its words in replay.desc: the head,
// then a pair a range) as descArgs parameters of 8 bytes, a pair each
// (the first word in the low half), zeros past its ranges, less the seed
// (the head's first word), which the replay kernel reads from replay.desc: kernels
// of one shape and the same ranges pass the same parameters.
func descParams(words []uint32) []workloads.ArgSpec {
	out := make([]workloads.ArgSpec, descArgs)
	for i := range out {
		var v uint64
		if i > 0 && 2*i+1 < len(words) {
			v = uint64(words[2*i]) | uint64(words[2*i+1])<<32
		} else if i == 0 {
			v = uint64(words[1]) << 32
		}
		out[i] = workloads.Scalar64(v)
	}
	return out
}

// orderedWrites is the bit of a kernel's range count in replay.desc that
// tells the replay kernel to write its ranges one after another.
const orderedWrites = 1 << 31

// count is the kernel's range count as replay.desc holds it: with
// orderedWrites where two of its written ranges overlap, so that the
// later one's bytes win as in the reference (the kernel otherwise writes
// every range at once).
func (b *builder) count(seen []dataArg) uint32 {
	if writesOverlap(seen) {
		return uint32(len(seen)) | orderedWrites
	}
	return uint32(len(seen))
}

// writesOverlap reports whether two written ranges share a byte.
func writesOverlap(seen []dataArg) bool {
	for i, a := range seen {
		for _, c := range seen[:i] {
			if a.mode&c.mode&device.Write != 0 && a.buf == c.buf && a.off < c.off+c.n && c.off < a.off+a.n {
				return true
			}
		}
	}
	return false
}

// overheadWord is overhead_ns in bits 8-30 of a kernel's range count in
// replay.desc (capped at 2^23-1 ns), where replay reads it to place its
// waves (replay.cu's replay_wave_end).
func overheadWord(ns int64) uint32 {
	return uint32(min(max(ns, 0), 1<<23-1)) << 8
}

// copyBytes is what a copy or memset moves: its bytes field, or the
// smallest of its ranges.
func copyBytes(o *Op, sizes map[string]int64) int64 {
	if o.Bytes > 0 {
		return o.Bytes
	}
	n := int64(math.MaxInt64)
	for _, a := range append(append([]Access(nil), o.Reads...), o.Writes...) {
		n = min(n, span(a, sizes))
	}
	return n
}

func (b *builder) copyOp(n *node) (workloads.Op, error) {
	o := n.op
	bytes := copyBytes(o, b.sizes)
	c := workloads.CopySpec{Bytes: bytes, Host: -1}
	switch o.Direction {
	case "HtoD":
		c.Kind = device.HostToDevice
		c.Dst, c.DstOff = b.r.index[o.Writes[0].Buffer], o.Writes[0].Offset
		c.Host = b.hostBuffer(n, bytes, true)
	case "DtoH":
		c.Kind = device.DeviceToHost
		c.Src, c.SrcOff = b.r.index[o.Reads[0].Buffer], o.Reads[0].Offset
		c.Host = b.hostBuffer(n, bytes, false)
	default:
		c.Kind = device.DeviceToDevice
		c.Src, c.SrcOff = b.r.index[o.Reads[0].Buffer], o.Reads[0].Offset
		c.Dst, c.DstOff = b.r.index[o.Writes[0].Buffer], o.Writes[0].Offset
	}
	b.ref = append(b.ref, refOp{copy: &c})
	return workloads.Op{Name: n.name, Kind: workloads.OpCopy, Copy: c}, nil
}

// hostBuffer adds the host memory a copy to (filled) or from (compared)
// the host uses.
func (b *builder) hostBuffer(n *node, bytes int64, source bool) int {
	hs := workloads.HostSpec{Name: hostPre + n.name, Bytes: bytes, Pinned: !n.op.Pageable || b.opt.PinHost}
	if source {
		hs.Init = pattern(hs.Name)
	} else {
		hs.Output = true
	}
	b.prog.Host = append(b.prog.Host, hs)
	return len(b.prog.Host) - 1
}

func (b *builder) nodeErr(n *node, err error) error {
	if n.op != nil {
		return lineErrorf(n.op.line, "%s %q: %v", n.kind, n.name, err)
	}
	return fmt.Errorf("%s: %w", n.name, err)
}

// pattern fills a buffer with bytes that depend on its name, so that the
// replay's reads of data nothing wrote (weights, inputs) are not all zero.
func pattern(name string) func([]byte) {
	h := fnv.New32a()
	h.Write([]byte(name))
	seed := h.Sum32()
	return func(data []byte) {
		x := seed
		for i := range data {
			x = x*1664525 + 1013904223
			data[i] = byte(x >> 24)
		}
	}
}

// markOrderOnly keeps the replay idempotent: schedulers may run the whole
// program more than once on one binding (AutoGraph and KeSCo time every
// operation before they schedule), and the outputs must still equal the
// serial reference's. A read whose sampled bytes nothing before it in
// program order wrote, but something writes at some point (the operation
// itself, in place, or a later one), would see initial bytes the first time
// and written ones the next: such a read still orders the kernel (it stays
// in the access set) but its bytes are not hashed.
func (b *builder) markOrderOnly(args map[*node][]dataArg) {
	ever := make([][]bool, len(b.prog.Buffers))
	sofar := make([][]bool, len(b.prog.Buffers))
	for i, bs := range b.prog.Buffers {
		if bs.Name != descBuf {
			ever[i], sofar[i] = make([]bool, bs.Bytes), make([]bool, bs.Bytes)
		}
	}
	walk := func(visit func(n *node)) {
		for _, s := range b.steps {
			for _, n := range s {
				visit(n)
			}
		}
	}
	walk(func(n *node) { b.markWrites(n, args[n], ever) })
	walk(func(n *node) {
		for i := range args[n] {
			a := &args[n][i]
			if a.mode&device.Read == 0 {
				continue
			}
			k := int(min(a.n, samples))
			for j := 0; j < k; j++ {
				if p := a.off + samplePos(a.n, j, k); ever[a.buf][p] && !sofar[a.buf][p] {
					a.orderOnly = true
					break
				}
			}
		}
		b.markWrites(n, args[n], sofar)
	})
}

// markWrites marks the bytes n writes: a replayed kernel's sampled
// positions, a copy's whole destination range.
func (b *builder) markWrites(n *node, args []dataArg, mark [][]bool) {
	if !n.replayed() {
		if n.op.Direction == "DtoH" {
			return
		}
		w := n.op.Writes[0]
		off, l := w.Offset, copyBytes(n.op, b.sizes)
		buf := b.r.index[w.Buffer]
		for p := off; p < off+l; p++ {
			mark[buf][p] = true
		}
		return
	}
	for _, a := range args[:min(len(args), seenArgs)] {
		if a.mode&device.Write == 0 {
			continue
		}
		k := int(min(a.n, samples))
		for j := 0; j < k; j++ {
			mark[a.buf][a.off+samplePos(a.n, j, k)] = true
		}
	}
}
