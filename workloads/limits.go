package workloads

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Limits on one program. Every generator computes, from its parameters
// alone and with overflow-checked arithmetic, what it is about to build
// (a Plan) and checks it before it allocates anything, so that a typo
// (width: 1e9, max_blocks: 1e11) fails at once with the parameters and
// the limit named instead of growing memory for minutes; Program.Validate
// checks the built program against the same limits. They are far above
// every committed experiment (the largest has 12,288 operations, 8,192
// buffers, 10,805 blocks in one kernel, 1,048,576 blocks in all, 2.1 GB of
// device and 0.8 GB of host memory).
const (
	MaxOps         = 1 << 20   // operations (kernels and copies) of a program
	MaxBuffers     = 1 << 20   // device plus host buffers of a program
	MaxGridBlocks  = 1<<31 - 1 // blocks of one kernel (CUDA's grid x limit)
	MaxBlocks      = 1 << 34   // blocks over every kernel of a program
	MaxDeviceBytes = 1 << 37   // device memory of a program's buffers (128 GiB)
	MaxHostBytes   = 1 << 33   // host memory: host buffers and initial data (8 GiB)
)

// Factor is one named factor of a size: a parameter (or a derived figure)
// and its value.
type Factor struct {
	Name string
	N    int64
}

// F names a factor.
func F(name string, n int) Factor { return Factor{name, int64(n)} }

// Size is a figure computed from parameters, with how it was computed (for
// errors); a product or sum that overflows int64 is marked, not wrapped.
type Size struct {
	N        int64
	Expr     string // "layers x width x steps = 8 x 1000000000 x 4"
	overflow bool
}

// Product multiplies factors with overflow checking. Sizes are not
// negative: generators reject negative parameters before they plan (a
// negative factor gives a negative product, and an intermediate overflow
// is then not always a final one).
func Product(factors ...Factor) Size {
	names := make([]string, len(factors))
	vals := make([]string, len(factors))
	s := Size{N: 1}
	for i, f := range factors {
		names[i], vals[i] = f.Name, fmt.Sprint(f.N)
		s = s.times(f.N)
	}
	s.Expr = strings.Join(names, " x ") + " = " + strings.Join(vals, " x ")
	if len(factors) == 1 {
		s.Expr = fmt.Sprintf("%s = %d", factors[0].Name, factors[0].N)
	}
	return s
}

func (s Size) times(n int64) Size {
	if n == 0 {
		return Size{Expr: s.Expr} // anything times 0, however large, is 0
	}
	if s.overflow {
		return s
	}
	neg := (s.N < 0) != (n < 0)
	hi, lo := bits.Mul64(uint64(abs(s.N)), uint64(abs(n)))
	if hi != 0 || lo > math.MaxInt64 {
		s.overflow = true
		return s
	}
	s.N = int64(lo)
	if neg {
		s.N = -s.N
	}
	return s
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// Times multiplies s by a factor.
func (s Size) Times(f Factor) Size {
	out := s.times(f.N)
	out.Expr = fmt.Sprintf("(%s) x %s %d", s.Expr, f.Name, f.N)
	return out
}

// Plus adds sizes with overflow checking.
func (s Size) Plus(o Size) Size {
	out := Size{N: s.N + o.N, Expr: s.Expr + " + " + o.Expr, overflow: s.overflow || o.overflow}
	if (o.N > 0 && s.N > math.MaxInt64-o.N) || (o.N < 0 && s.N < math.MinInt64-o.N) {
		out.overflow = true
	}
	return out
}

// Check reports s if it is above most: "layers x width x steps = 8 x
// 1000000000 x 4 = 32000000000 operations, above the limit of 1048576
// (workloads.MaxOps)".
func (s Size) Check(what string, most int64, limit string) error {
	switch {
	case s.overflow:
		return fmt.Errorf("%s overflows 64 bits as %s, above the limit of %d (%s)", s.Expr, what, most, limit)
	case s.N > most:
		return fmt.Errorf("%s = %d %s, above the limit of %d (%s)", s.Expr, s.N, what, most, limit)
	}
	return nil
}

// Plan is what a generator is about to build, computed from its
// parameters before it allocates anything. Zero sizes are not checked.
type Plan struct {
	Ops         Size // operations
	Buffers     Size // device plus host buffers
	GridBlocks  Size // blocks of the largest kernel
	Blocks      Size // blocks of every kernel
	DeviceBytes Size // device memory
	HostBytes   Size // host memory: host buffers, initial data, references
}

// Check reports the first figure of the plan above its limit.
func (p Plan) Check() error {
	for _, c := range []struct {
		s     Size
		what  string
		max   int64
		limit string
	}{
		{p.Ops, "operations", MaxOps, "workloads.MaxOps"},
		{p.Buffers, "buffers", MaxBuffers, "workloads.MaxBuffers"},
		{p.GridBlocks, "blocks in one kernel", MaxGridBlocks, "workloads.MaxGridBlocks"},
		{p.Blocks, "blocks in all", MaxBlocks, "workloads.MaxBlocks"},
		{p.DeviceBytes, "bytes of device memory", MaxDeviceBytes, "workloads.MaxDeviceBytes"},
		{p.HostBytes, "bytes of host memory", MaxHostBytes, "workloads.MaxHostBytes"},
	} {
		if c.s.Expr == "" {
			continue
		}
		if err := c.s.Check(c.what, c.max, c.limit); err != nil {
			return err
		}
	}
	return nil
}

// checkLimits checks a built program against the limits: the backstop
// behind the generators' plans.
func (p *Program) checkLimits() error {
	var ops, blocks, dev, host int64
	for _, b := range p.Buffers {
		dev += b.Bytes
		if b.Init != nil {
			host += b.Bytes
		}
		if dev > MaxDeviceBytes {
			return fmt.Errorf("program %q: its buffers need more than %d bytes of device memory (workloads.MaxDeviceBytes)", p.Name, int64(MaxDeviceBytes))
		}
	}
	for _, b := range p.Host {
		host += b.Bytes
		if host > MaxHostBytes {
			return fmt.Errorf("program %q: its host buffers and initial data need more than %d bytes (workloads.MaxHostBytes)", p.Name, int64(MaxHostBytes))
		}
	}
	if n := len(p.Buffers) + len(p.Host); n > MaxBuffers {
		return fmt.Errorf("program %q has %d buffers, above the limit of %d (workloads.MaxBuffers)", p.Name, n, MaxBuffers)
	}
	for si := range p.Steps {
		for oi := range p.Steps[si].Ops {
			op := &p.Steps[si].Ops[oi]
			if ops++; ops > MaxOps {
				return fmt.Errorf("program %q has more than %d operations (workloads.MaxOps)", p.Name, MaxOps)
			}
			if op.Kind != OpKernel {
				continue
			}
			g := Product(F("grid.x", op.Grid.X), F("grid.y", op.Grid.Y), F("grid.z", op.Grid.Z))
			if err := g.Check("blocks", MaxGridBlocks, "workloads.MaxGridBlocks"); err != nil {
				return fmt.Errorf("program %q step %d op %d (%s): %w", p.Name, si, oi, op.Name, err)
			}
			if blocks += g.N; blocks > MaxBlocks {
				return fmt.Errorf("program %q has more than %d blocks in all (workloads.MaxBlocks)", p.Name, int64(MaxBlocks))
			}
		}
	}
	return nil
}
