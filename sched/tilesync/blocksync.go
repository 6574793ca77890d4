package tilesync

import (
	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// Counter buffer layout of one pair: the policy's counters, then the
// producer's start flag (the wait kernel's), then the two order counters.
func (p *Pair) flagIndex() int      { return p.Counters }
func (p *Pair) prodOrderIndex() int { return p.Counters + 1 }
func (p *Pair) consOrderIndex() int { return p.Counters + 2 }

// CounterWords is the size of a pair's counter buffer in 32-bit words.
func (p *Pair) CounterWords() int { return p.Counters + 3 }

// ProducerSync is what the simulator sees of the producer: block b
// computes tile order[b] (order nil: tile b) and, when it completes,
// increments the tile's counter. With flag set, the first block raises the
// start flag the wait kernel spins on when it starts, as the kernel does
// (device.StartPoster). Operands are the launch's A, B and C arguments,
// from which BlockArgs derives each tile's accesses.
type ProducerSync struct {
	Pair     *Pair
	Counters device.Buffer
	Order    []int32
	Flag     bool
	Operands [3]device.Arg
}

// ConsumerSync is what the simulator sees of the consumer: block b computes
// tile order[b] and waits, before it starts, on every counter its
// reduction reaches, until each holds Iter * PerCounter. The kernel waits
// for each producer tile just before the k-slices it needs, so under
// TileSync and Conv2DTileSync it starts its first slices earlier than this
// block-granular model lets it; under RowSync both wait once, up front.
type ConsumerSync struct {
	Pair     *Pair
	Counters device.Buffer
	Order    []int32
	Iter     uint32
	Operands [3]device.Arg
	groups   []int
}

// WaitKernelSync is the wait kernel's single block: it waits until the
// producer's start flag reaches the run number.
type WaitKernelSync struct {
	Pair     *Pair
	Counters device.Buffer
	Iter     uint32
}

func tileOf(order []int32, b int) int {
	if order != nil {
		return int(order[b])
	}
	return b
}

// Posts implements device.BlockSync.
func (s *ProducerSync) Posts(b int, buf []device.Counter) []device.Counter {
	t := tileOf(s.Order, b)
	tn := s.Pair.Prod.TilesN()
	return append(buf, device.Counter{Buf: s.Counters, Index: s.Pair.PostIndex(t/tn, t%tn)})
}

// StartPosts implements device.StartPoster: with Flag, block 0 raises the
// wait kernel's start flag as it starts.
func (s *ProducerSync) StartPosts(b int, buf []device.Counter) []device.Counter {
	if s.Flag && b == 0 {
		buf = append(buf, device.Counter{Buf: s.Counters, Index: s.Pair.flagIndex()})
	}
	return buf
}

// BlockArgs implements device.BlockAccess: the producer tile's rows of A
// (with the 3x3 halo for a convolution), all of B, and its band of rows of
// C (every column: a superset of the tile's own columns).
func (s *ProducerSync) BlockArgs(b int, buf []device.Arg) []device.Arg {
	return tileArgs(s.Pair.Prod, s.Operands, tileOf(s.Order, b), buf)
}

// Waits implements device.BlockSync: a producer does not wait.
func (s *ProducerSync) Waits(int, []device.CounterWait) []device.CounterWait { return nil }

// Waits implements device.BlockSync.
func (s *ConsumerSync) Waits(b int, buf []device.CounterWait) []device.CounterWait {
	if s.groups == nil {
		s.groups = s.Pair.WaitGroups(nil)
	}
	t := tileOf(s.Order, b)
	tm := t / s.Pair.Cons.TilesN()
	lo, hi := s.Pair.WaitRows(tm)
	target := s.Iter * uint32(s.Pair.PerCounter)
	for pm := lo; pm <= hi; pm++ {
		for _, g := range s.groups {
			buf = append(buf, device.CounterWait{
				Counter: device.Counter{Buf: s.Counters, Index: pm*s.Pair.WaitRowStride + g},
				Target:  target,
			})
		}
	}
	return buf
}

// Posts implements device.BlockSync: the consumer posts nothing.
func (s *ConsumerSync) Posts(int, []device.Counter) []device.Counter { return nil }

// BlockArgs implements device.BlockAccess: the consumer tile reads whole
// rows of the producer's output (its reduction spans every column; for a
// convolution, every pixel its 3x3 window reaches), all of B, and writes
// its band of rows of C. Its counter reads are synchronization, not data.
func (s *ConsumerSync) BlockArgs(b int, buf []device.Arg) []device.Arg {
	return tileArgs(s.Pair.Cons, s.Operands, tileOf(s.Order, b), buf)
}

// BlockArgs implements device.BlockAccess: the wait kernel touches only
// the start flag, a synchronization word.
func (s *WaitKernelSync) BlockArgs(_ int, buf []device.Arg) []device.Arg { return buf }

// elemBytes is the size of an element of the tile kernels' operands (fp16).
const elemBytes = 2

// tileArgs appends the accesses of tile t of stage st, whose operands are
// ops (A or X, B or W, C or Y): rows [r0, r1) of the output row tile, the
// A rows they read (for a 3x3 convolution, W+1 pixels either side), all of
// B, and the output rows.
func tileArgs(st tiles.Stage, ops [3]device.Arg, t int, buf []device.Arg) []device.Arg {
	tm := t / st.TilesN()
	r0 := tm * st.Tile.BM
	r1 := min(st.M, r0+st.Tile.BM)
	a0, a1, rowA := r0, r1, st.LDA
	if st.Kind == tiles.Conv {
		a0, a1, rowA = max(0, r0-(st.W+1)), min(st.M, r1+st.W+1), st.Cin
	}
	buf = appendBand(buf, ops[0], int64(a0)*int64(rowA)*elemBytes, int64(a1)*int64(rowA)*elemBytes)
	buf = append(buf, ops[1])
	return appendBand(buf, ops[2], int64(r0)*int64(st.N)*elemBytes, int64(r1)*int64(st.N)*elemBytes)
}

// appendBand appends bytes [lo, hi) of buffer argument a's range, clamped
// to it (nothing if that is empty).
func appendBand(buf []device.Arg, a device.Arg, lo, hi int64) []device.Arg {
	l, h := a.Range()
	n := int64(h - l)
	lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
	if hi <= lo {
		return buf
	}
	a.Off += lo
	a.Len = hi - lo
	return append(buf, a)
}

// PlainArgs implements device.PlainArger: the producer's stream-ordered
// arguments (tiles.PlainArgs).
func (s *ProducerSync) PlainArgs(args []device.Arg) []device.Arg { return tiles.PlainArgs(args) }

// PlainArgs implements device.PlainArger: the consumer's stream-ordered
// arguments (tiles.PlainArgs).
func (s *ConsumerSync) PlainArgs(args []device.Arg) []device.Arg { return tiles.PlainArgs(args) }

// Waits implements device.BlockSync.
func (s *WaitKernelSync) Waits(_ int, buf []device.CounterWait) []device.CounterWait {
	return append(buf, device.CounterWait{Counter: device.Counter{Buf: s.Counters, Index: s.Pair.flagIndex()}, Target: s.Iter})
}

// Posts implements device.BlockSync.
func (s *WaitKernelSync) Posts(int, []device.Counter) []device.Counter { return nil }

// The simulator times the pair's launches from their plain launches'
// profile points (device.PlainArger).
var (
	_ device.PlainArger = (*ProducerSync)(nil)
	_ device.PlainArger = (*ConsumerSync)(nil)
)
