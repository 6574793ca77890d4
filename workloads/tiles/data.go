package tiles

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Inputs are generated, not stored: element i of a tensor is a pure
// function of (seed, tensor, i), so Bind's Init and the CPU reference in
// Check produce the same values without keeping hundreds of megabytes of
// weights alive between them.

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// tensor is a generated fp16 tensor: uniform in [-scale, scale), rounded
// to fp16.
type tensor struct {
	seed  uint64
	n     int
	scale float32
}

func newTensor(seed int64, id uint64, n int, scale float32) tensor {
	return tensor{seed: splitmix(uint64(seed)*0x100000001b3 + id), n: n, scale: scale}
}

func (t tensor) at(i int) float32 {
	u := splitmix(t.seed + uint64(i))
	f := float32(int32(u>>32)) * (1.0 / (1 << 31)) // [-1, 1)
	return RoundHalf(f * t.scale)
}

// values is elements [lo, hi).
func (t tensor) values(lo, hi int) []float32 {
	out := make([]float32, hi-lo)
	for i := range out {
		out[i] = t.at(lo + i)
	}
	return out
}

// fill writes the tensor's fp16 bytes (BufferSpec.Init).
func (t tensor) fill(b []byte) {
	for i := 0; i < t.n && 2*i+1 < len(b); i++ {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(ToHalf(t.at(i))))
	}
}

// poison fills an output with fp16 NaNs, so an element no kernel wrote
// fails the check.
func poison(b []byte) {
	for i := 0; i+1 < len(b); i += 2 {
		binary.LittleEndian.PutUint16(b[i:], 0x7e00)
	}
}

// sampleRows picks the rows (or pixels) Check compares against the CPU
// reference: all of them when there are few, else the first and last and
// evenly spread ones in between (across tile boundaries).
func sampleRows(m, want int) []int {
	if m <= want {
		out := make([]int, m)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for i := 0; i < want; i++ {
		out = append(out, int(int64(i)*int64(m-1)/int64(want-1)))
	}
	return slices.Compact(out)
}

// outHalves decodes output buffer name, failing on any NaN or infinity
// (unwritten elements are NaN).
func outHalves(outputs map[string][]byte, name string, n int) ([]float32, error) {
	b, ok := outputs[name]
	if !ok {
		return nil, fmt.Errorf("output %s missing", name)
	}
	if len(b) != 2*n {
		return nil, fmt.Errorf("output %s has %d bytes, want %d", name, len(b), 2*n)
	}
	v := Halves(b)
	for i, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("output %s element %d is %v (not written, or overflowed)", name, i, f)
		}
	}
	return v, nil
}

// compare checks got against want within Tolerance.
func compare(what string, got, want []float32) error {
	e, err := RelErr(got, want)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !(e <= Tolerance) {
		return fmt.Errorf("%s: relative error %.3g exceeds %.0e", what, e, Tolerance)
	}
	return nil
}
