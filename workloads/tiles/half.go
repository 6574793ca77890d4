package tiles

import (
	"encoding/binary"
	"math"
)

// Half is an IEEE 754 binary16 value (the GPU's fp16, CUDA's __half), as its
// bit pattern.
type Half uint16

// ToHalf rounds f to the nearest binary16 value, ties to even, as
// __float2half_rn does: overflow goes to infinity, NaN stays NaN, and
// values below the smallest subnormal round to a signed zero.
func ToHalf(f float32) Half {
	b := math.Float32bits(f)
	sign := Half(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff { // inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half (or zero): shift the full significand, with its
		// implicit bit, into place and round.
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | Half(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to infinity: still correct
	}
	return sign | Half(h)
}

// Float32 widens h exactly.
func (h Half) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch exp {
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: value = man * 2^-24.
		f := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// PutHalves stores v as little-endian binary16 values into b (2 bytes each).
func PutHalves(b []byte, v []float32) {
	for i, f := range v {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(ToHalf(f)))
	}
}

// Halves reads little-endian binary16 values from b, widened to float32.
func Halves(b []byte) []float32 {
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = Half(binary.LittleEndian.Uint16(b[2*i:])).Float32()
	}
	return out
}

// RoundHalf rounds f to the nearest binary16 value and widens it back: the
// value a kernel stores and a later kernel reads.
func RoundHalf(f float32) float32 { return ToHalf(f).Float32() }
