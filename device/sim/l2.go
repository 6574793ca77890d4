package sim

import (
	"math"

	"github.com/gpusched/gpusched/device"
)

// l2Cache is the L2 residency across kernels and copies (issue #18): the
// address ranges the device touched most recently, least recently used
// first, holding at most capacity bytes (the profile's effective L2). It
// keeps ranges, not buffers: a DNN's layers each read their own slice of
// one weights buffer, and a slice read a whole run ago is not resident
// because another slice of the same buffer was just read (session 16: the
// H100's resnext-50-s2 layer4 GEMMs ran 1.3x their simulated time on the
// GPU while the simulator counted their weights warm). A newer touch of
// an overlapping range takes those bytes over; the oldest range loses its
// lowest bytes first when a newer touch needs room. It times a kernel
// whose profile has a cold term (BlockModel.ColdNsPerByte): its launch
// pays that term times the fraction of its read bytes not resident when
// it starts (coldMiss). Order is the engine's: kernels at activation,
// copies when they start, each deterministic.
type l2Cache struct {
	capacity float64
	total    float64
	lru      []l2Entry // least recent first, disjoint
	spare    []l2Entry // touch builds the next lru here, then swaps (no allocation per touch)
}

// l2Entry is the resident range [lo, hi) of device addresses.
type l2Entry struct {
	lo, hi uint64
}

func (e l2Entry) bytes() float64 { return float64(e.hi - e.lo) }

func (c *l2Cache) reset() { c.lru, c.total = c.lru[:0], 0 }

// resident is how many bytes of [lo, hi) are in L2.
func (c *l2Cache) resident(lo, hi uint64) float64 {
	n := 0.0
	for _, e := range c.lru {
		if a, b := max(e.lo, lo), min(e.hi, hi); a < b {
			n += float64(b - a)
		}
	}
	return n
}

// touch makes [lo, hi) the most recently used bytes (its last capacity
// bytes when it is larger), evicting the least recently used bytes beyond
// the capacity.
func (c *l2Cache) touch(lo, hi uint64) {
	if hi <= lo || c.capacity < 1 {
		return
	}
	if float64(hi-lo) > c.capacity {
		lo = hi - uint64(c.capacity)
	}
	for i, e := range c.lru {
		if e.hi <= lo || e.lo >= hi {
			continue
		}
		if e.lo == lo && e.hi == hi { // the range again (most touches): entries are disjoint, so
			// it is the only one overlapping; it moves to the most recent end, the bytes stay the same
			copy(c.lru[i:], c.lru[i+1:])
			c.lru[len(c.lru)-1] = e
			return
		}
		break
	}
	keep := c.spare[:0]
	for _, e := range c.lru {
		if e.hi <= lo || e.lo >= hi { // disjoint: kept whole
			keep = append(keep, e)
			continue
		}
		if e.lo < lo {
			keep = append(keep, l2Entry{e.lo, lo})
		}
		if e.hi > hi {
			keep = append(keep, l2Entry{hi, e.hi})
		}
	}
	c.spare = c.lru
	c.lru = append(keep, l2Entry{lo, hi})
	c.total = 0
	for _, e := range c.lru {
		c.total += e.bytes()
	}
	drop := 0
	for c.total > c.capacity {
		e := &c.lru[drop]
		over := c.total - c.capacity
		if e.bytes() > over {
			e.lo += uint64(math.Ceil(over))
			c.total = 0
			for _, r := range c.lru[drop:] {
				c.total += r.bytes()
			}
			break
		}
		c.total -= e.bytes()
		drop++
	}
	if drop > 0 {
		c.lru = append(c.lru[:0], c.lru[drop:]...)
	}
}

// launch returns the fraction of l's read bytes not resident in L2 as it
// starts (0 when it reads none), then touches every buffer it reads or
// writes, in argument order.
func (c *l2Cache) launch(l *device.Launch) (miss float64) {
	read, hit := 0.0, 0.0
	for i := range l.Args {
		a := &l.Args[i]
		if a.Kind != device.ArgBuffer || a.Mode == device.Write {
			continue
		}
		lo, hi := a.Range()
		read += float64(hi - lo)
		hit += c.resident(lo, hi)
	}
	for i := range l.Args {
		if a := &l.Args[i]; a.Kind == device.ArgBuffer {
			c.touch(a.Range())
		}
	}
	if read <= 0 {
		return 0
	}
	return 1 - hit/read
}

// copy touches the device buffers c reads and writes.
func (c *l2Cache) copy(cp *device.Copy) {
	reads, writes := cp.DeviceRanges()
	for _, a := range append(reads, writes...) {
		c.touch(a.Range())
	}
}
