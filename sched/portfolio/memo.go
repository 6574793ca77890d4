package portfolio

import (
	"sync"
	"weak"

	"github.com/gpusched/gpusched/workloads"
)

// Memo keeps selections by program, device and options, for the
// Portfolios of one factory. A selection is forgotten once its program is
// garbage. Safe for concurrent use; the zero Memo is ready, a nil one
// keeps nothing.
type Memo struct {
	mu sync.Mutex
	m  map[memoEntry]*decision
}

type memoKey struct {
	prog   *workloads.Program
	device string
	opt    Options
}

type memoEntry struct {
	prog   weak.Pointer[workloads.Program]
	device string
	opt    Options
}

// decision is a selection: the candidate picked and the stats it reports.
type decision struct {
	pick  candidate
	stats map[string]float64
}

// statsCached is the decision's stats, marked as recalled.
func (d *decision) statsCached() map[string]float64 {
	out := make(map[string]float64, len(d.stats))
	for k, v := range d.stats {
		out[k] = v
	}
	out["cached"] = 1
	return out
}

func (k memoKey) entry() memoEntry {
	return memoEntry{prog: weak.Make(k.prog), device: k.device, opt: k.opt}
}

func (m *Memo) get(k memoKey) (*decision, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.m[k.entry()]
	return d, ok
}

func (m *Memo) put(k memoKey, d *decision) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[memoEntry]*decision{}
	}
	for e := range m.m {
		if e.prog.Value() == nil {
			delete(m.m, e)
		}
	}
	m.m[k.entry()] = d
}
