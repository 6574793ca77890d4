package file

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// refOp is one operation as the reference replays it: a copy, or a replay
// kernel's seed, grid size, state slot and the ranges it sees.
type refOp struct {
	copy *workloads.CopySpec
	seed uint32
	slot int
	args []dataArg
}

// reference computes, on the CPU and in program order, the bytes the replay
// kernels and copies leave in every output buffer: what the serial schedule
// leaves on a GPU, and what any correct schedule must leave too.
type reference struct {
	prog  *workloads.Program
	sig   int                             // replay.sig's buffer index
	owner func(buf int, off int64) string // the file buffer at a byte of the arena
	ops   []refOp
	once  sync.Once
	want  map[string][]byte
}

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
	samples   = 16
)

// samplePos is the j-th of k sampled positions of a range of n bytes, as
// replay.cu's replay_pos computes it (k is 16 unless n is smaller).
func samplePos(n int64, j, k int) int64 {
	if int64(k) == n {
		return int64(j)
	}
	return int64(j) * n / int64(k)
}

func (r *reference) run() map[string][]byte {
	order := make([]int, len(r.ops))
	for i := range order {
		order[i] = i
	}
	return r.exec(order, 1)
}

// exec replays the operations in the given order (flat indices), `times`
// times over, from the initial contents, and returns the output buffers.
func (r *reference) exec(order []int, times int) map[string][]byte {
	mem := make([][]byte, len(r.prog.Buffers))
	for i, b := range r.prog.Buffers {
		mem[i] = make([]byte, b.Bytes)
		if b.Init != nil {
			b.Init(mem[i])
		}
	}
	host := make([][]byte, len(r.prog.Host))
	for i, hs := range r.prog.Host {
		host[i] = make([]byte, hs.Bytes)
		if hs.Init != nil {
			hs.Init(host[i])
		}
	}
	sig := mem[r.sig]
	for t := 0; t < times; t++ {
		for _, k := range order {
			r.step(r.ops[k], mem, host, sig)
		}
	}
	out := map[string][]byte{}
	for i, b := range r.prog.Buffers {
		if b.Output {
			out[b.Name] = mem[i]
		}
	}
	for i, hs := range r.prog.Host {
		if hs.Output {
			out[hs.Name] = host[i]
		}
	}
	return out
}

// step applies one operation to device memory, host memory and signatures.
func (r *reference) step(op refOp, mem, host [][]byte, sig []byte) {
	if op.copy != nil {
		c := op.copy
		switch c.Kind {
		case device.HostToDevice:
			copy(mem[c.Dst][c.DstOff:c.DstOff+c.Bytes], host[c.Host][c.HostOff:])
		case device.DeviceToHost:
			copy(host[c.Host][c.HostOff:c.HostOff+c.Bytes], mem[c.Src][c.SrcOff:])
		default:
			copy(mem[c.Dst][c.DstOff:c.DstOff+c.Bytes], mem[c.Src][c.SrcOff:c.SrcOff+c.Bytes])
		}
		return
	}
	// Each hashed range folds its sampled bytes from a basis of the seed and
	// its index; h is the seed's basis plus the ranges' values.
	h := uint32(fnvOffset) ^ op.seed
	for i, a := range op.args {
		if !a.hashes() {
			continue
		}
		x := uint32(fnvOffset) ^ op.seed ^ uint32(i)<<24
		k := int(min(a.n, samples))
		for j := 0; j < k; j++ {
			x = (x ^ uint32(mem[a.buf][a.off+samplePos(a.n, j, k)])) * fnvPrime
		}
		h += x
	}
	for i, a := range op.args {
		if a.mode&device.Write == 0 {
			continue
		}
		k := int(min(a.n, samples))
		for j := 0; j < k; j++ {
			mem[a.buf][a.off+samplePos(a.n, j, k)] = byte(((h ^ uint32(i<<8) ^ uint32(j)) * fnvPrime) >> 24)
		}
	}
	binary.LittleEndian.PutUint32(sig[op.slot*4:], h)
}

// check compares a run's outputs with the reference's.
func (r *reference) check(outputs map[string][]byte) error {
	r.once.Do(func() { r.want = r.run() })
	for i, b := range r.prog.Buffers {
		if err := compare(b.Name, b.Output, outputs, r.want); err != nil {
			var d *diffError
			if errors.As(err, &d) && r.owner(i, d.at) != "" {
				return fmt.Errorf("%w (buffer %s)", err, r.owner(i, d.at))
			}
			return err
		}
	}
	for _, hs := range r.prog.Host {
		if err := compare(hs.Name, hs.Output, outputs, r.want); err != nil {
			return err
		}
	}
	return nil
}

func compare(name string, output bool, got, want map[string][]byte) error {
	if !output {
		return nil
	}
	g, ok := got[name]
	if !ok {
		return fmt.Errorf("replay: output %q is missing", name)
	}
	w := want[name]
	if bytes.Equal(g, w) {
		return nil
	}
	if len(g) != len(w) {
		return fmt.Errorf("replay: output %q has %d bytes, the reference %d", name, len(g), len(w))
	}
	for i := range g {
		if g[i] != w[i] {
			return &diffError{name: name, at: int64(i), got: g[i], want: w[i]}
		}
	}
	return nil
}

// diffError is an output byte that differs from the reference's.
type diffError struct {
	name      string
	at        int64
	got, want byte
}

func (e *diffError) Error() string {
	return fmt.Sprintf("replay: output %q differs from the serial reference at byte %d (%#02x, want %#02x)", e.name, e.at, e.got, e.want)
}
