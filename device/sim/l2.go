package sim

import "github.com/gpusched/gpusched/device"

// l2Cache is the L2 residency across kernels and copies (issue #18): the
// buffers the device touched most recently, least recently used first,
// holding at most capacity bytes (the profile's effective L2). A buffer
// (by address) is resident by a byte count, not by which of its bytes:
// the oldest entry loses bytes first when a newer touch needs room. It
// times a kernel whose profile has a cold term (BlockModel.ColdNsPerByte):
// its launch pays that term times the fraction of its read bytes not
// resident when it starts (coldMiss). Order is the engine's: kernels at
// activation, copies when they start, each deterministic.
type l2Cache struct {
	capacity float64
	total    float64
	lru      []l2Entry // least recent first
}

type l2Entry struct {
	addr  uint64
	bytes float64
}

func (c *l2Cache) reset() { c.lru, c.total = c.lru[:0], 0 }

// resident is how many bytes of the buffer at addr are in L2.
func (c *l2Cache) resident(addr uint64) float64 {
	for i := len(c.lru) - 1; i >= 0; i-- {
		if c.lru[i].addr == addr {
			return c.lru[i].bytes
		}
	}
	return 0
}

// touch makes bytes of the buffer at addr the most recently used,
// evicting the least recently used bytes beyond the capacity.
func (c *l2Cache) touch(addr uint64, bytes float64) {
	for i := range c.lru {
		if c.lru[i].addr == addr {
			bytes = max(bytes, c.lru[i].bytes)
			c.total -= c.lru[i].bytes
			c.lru = append(c.lru[:i], c.lru[i+1:]...)
			break
		}
	}
	bytes = min(bytes, c.capacity)
	c.lru = append(c.lru, l2Entry{addr, bytes})
	c.total += bytes
	drop := 0
	for c.total > c.capacity {
		e := &c.lru[drop]
		over := c.total - c.capacity
		if e.bytes > over {
			e.bytes -= over
			c.total = c.capacity
			break
		}
		c.total -= e.bytes
		drop++
	}
	if drop > 0 {
		c.lru = append(c.lru[:0], c.lru[drop:]...)
	}
}

// argBytes is the bytes a buffer argument touches.
func argBytes(a *device.Arg) float64 {
	lo, hi := a.Range()
	return float64(hi - lo)
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
		n := argBytes(a)
		read += n
		hit += min(c.resident(a.Buf.Addr), n)
	}
	for i := range l.Args {
		if a := &l.Args[i]; a.Kind == device.ArgBuffer {
			c.touch(a.Buf.Addr, argBytes(a))
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
		c.touch(a.Buf.Addr, argBytes(&a))
	}
}
