package tilesync

import (
	"github.com/gpusched/gpusched/device"
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
// increments the tile's counter. With flag set, the first block also
// raises the start flag the wait kernel spins on. (The kernel raises it
// when that block starts; a block's posts in the simulator land when it
// completes, so the model holds the consumer back one producer tile longer
// than the hardware does. Consumers wait for whole tiles anyway.)
type ProducerSync struct {
	Pair     *Pair
	Counters device.Buffer
	Order    []int32
	Flag     bool
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
	buf = append(buf, device.Counter{Buf: s.Counters, Index: s.Pair.PostIndex(t/tn, t%tn)})
	if s.Flag && b == 0 {
		buf = append(buf, device.Counter{Buf: s.Counters, Index: s.Pair.flagIndex()})
	}
	return buf
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

// Waits implements device.BlockSync.
func (s *WaitKernelSync) Waits(_ int, buf []device.CounterWait) []device.CounterWait {
	return append(buf, device.CounterWait{Counter: device.Counter{Buf: s.Counters, Index: s.Pair.flagIndex()}, Target: s.Iter})
}

// Posts implements device.BlockSync.
func (s *WaitKernelSync) Posts(int, []device.Counter) []device.Counter { return nil }
