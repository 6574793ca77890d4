package nn

import (
	"fmt"

	"github.com/gpusched/gpusched/workloads"
)

// Memory is the CPU image of a program's buffers, as float32, filled lazily
// from each buffer's Init (the weight arena from the net's generators).
type Memory struct {
	net  *Net
	bufs [][]float32
	// wDone counts the weights already generated into the arena.
	wDone int
}

func newMemory(n *Net) *Memory { return &Memory{net: n} }

// buf is buffer b's contents, initialized on first touch.
func (m *Memory) buf(b int) []float32 {
	p := m.net.prog
	for len(m.bufs) < len(p.Buffers) {
		m.bufs = append(m.bufs, nil)
	}
	if b == 0 {
		// The arena grows while a net is built: generate what is missing.
		if len(m.bufs[0]) < m.net.wElems {
			m.bufs[0] = append(m.bufs[0], make([]float32, m.net.wElems-len(m.bufs[0]))...)
		}
		for ; m.wDone < len(m.net.weights); m.wDone++ {
			w := m.net.weights[m.wDone]
			genWeight(w, m.bufs[0][w.off:w.off+w.n])
		}
		return m.bufs[0]
	}
	if m.bufs[b] == nil {
		spec := p.Buffers[b]
		raw := make([]byte, spec.Bytes)
		if spec.Init != nil {
			spec.Init(raw)
		}
		m.bufs[b] = Floats(raw)
	}
	return m.bufs[b]
}

// View is t's elements in m (shared, not copied).
func (m *Memory) View(t Tensor) []float32 {
	return m.buf(t.Buf)[t.Off : t.Off+t.Numel()]
}

// runThrough runs the ops from *at up to the end of the program so far.
func (m *Memory) runThrough(at *workloads.Ref) {
	n := m.net
	for ; at.Step < len(n.host); at.Step, at.Op = at.Step+1, 0 {
		for ; at.Op < len(n.host[at.Step]); at.Op++ {
			n.host[at.Step][at.Op](m)
		}
		if at.Step == len(n.host)-1 {
			return // the current step may still grow
		}
	}
}

// Value evaluates the program built so far on the CPU (incrementally: ops
// already evaluated are not rerun) and returns a copy of t's elements. A
// dynamic network uses it to decide its structure from its controller.
func (n *Net) Value(t Tensor) ([]float32, error) {
	if n.err != nil {
		return nil, n.err
	}
	if !t.Valid() {
		return nil, fmt.Errorf("nn %s: value of an invalid tensor", n.prog.Name)
	}
	if n.live == nil {
		n.live = newMemory(n)
	}
	n.live.runThrough(&n.liveAt)
	return append([]float32(nil), n.live.View(t)...), nil
}

// Reference evaluates the whole program on the CPU from fresh memory and
// returns every output buffer by name.
func (n *Net) Reference() (map[string][]float32, error) {
	if n.err != nil {
		return nil, n.err
	}
	m := newMemory(n)
	var at workloads.Ref
	m.runThrough(&at)
	out := map[string][]float32{}
	for b, spec := range n.prog.Buffers {
		if spec.Output {
			out[spec.Name] = append([]float32(nil), m.buf(b)...)
		}
	}
	return out, nil
}
