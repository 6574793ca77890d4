package file

import (
	"encoding/binary"
	"math"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// replayV2 is the replay kernel's second version (replay.cu's replay_v2),
// kept only so that TestGPUReplayProbe measures it beside the current one:
// it reads each range's mode and length from a descriptor buffer
// (replay.desc) before its loads.
var replayV2, _ = kernels.Lookup("replay", "replay_v2")

// descArgs is replay_v2's parameters: desc (this kernel's words of
// replay.desc: seed and count, then mode and length per range), state, sig,
// spin_ns and the ranges' pointers a0..a23.
func (b *builder) descArgs(n *node, seen []dataArg, spin int64) []workloads.ArgSpec {
	descOff := int64(len(b.words) * 4)
	b.words = append(b.words, uint32(n.slot+1), uint32(len(seen)))
	for _, a := range seen {
		m := uint32(0)
		if a.hashes() {
			m |= 1
		}
		if a.mode&device.Write != 0 {
			m |= 2
		}
		b.words = append(b.words, m, uint32(min(a.n, math.MaxUint32)))
	}
	specs := []workloads.ArgSpec{
		workloads.BufRange(b.desc, device.Read, descOff, int64(len(b.words)*4)-descOff),
		workloads.BufRange(b.state, device.ReadWrite, int64(n.slot*stateSize), stateSize),
		workloads.BufRange(b.sig, device.Write, int64(n.slot*4), 4),
		workloads.Scalar64(uint64(spin)),
	}
	for i := 0; i < seenArgs; i++ {
		if i < len(seen) {
			a := seen[i]
			specs = append(specs, workloads.BufRange(a.buf, a.mode, a.off, a.n))
		} else {
			specs = append(specs, workloads.Scalar64(0))
		}
	}
	return specs
}

// descInit sizes and fills replay.desc. Every lane of replay_v2's first
// warp reads its range's pair of words along with its kernel's head: 32
// pairs of zeros at the end keep the last kernel's lanes inside the buffer.
func (b *builder) descInit() {
	words := append(b.words, make([]uint32, 2*32)...)
	d := &b.prog.Buffers[b.desc]
	d.Bytes = int64(len(words) * 4)
	d.Init = func(data []byte) {
		for i, w := range words {
			binary.LittleEndian.PutUint32(data[4*i:], w)
		}
	}
}
