package kineto

import (
	"fmt"
	"sort"
)

// unit is what stream order chains: one operation, or all the kernels of
// one graph launch.
type unit struct {
	ops        []int // indices, in program order
	stream     int64
	graph      bool
	resolved   bool // ordered by data (a single operation with execution-trace accesses)
	start, end int64
	corr       int64
	sources    []int // operations with no predecessor inside the unit
	sinks      []int // operations with no successor inside the unit
}

// order adds the `after` edges the accesses do not give: between the
// GPU operations of one top-level operator (launch order), inside graph launches (what ran
// after what), along each stream around operations without data accesses,
// and across streams at recorded waits.
func (im *importer) order() {
	units := im.units()
	byStream := map[int64][]*unit{}
	for _, u := range units {
		byStream[u.stream] = append(byStream[u.stream], u)
	}
	im.rep.Streams = len(byStream)
	// The GPU work of one top-level operator (aten::conv2d, with every
	// operator it calls) keeps its launch order: its kernels pass data
	// through workspaces the execution trace does not show.
	lastOfTop := map[*span]int{}
	for i, o := range im.ops {
		if o.resolved {
			im.rep.FromET++
			top := o.gpu.op.top
			if p, ok := lastOfTop[top]; ok {
				o.after[p] = true
			}
			lastOfTop[top] = i
		} else {
			im.rep.StreamOrdered++
		}
	}
	for _, us := range byStream {
		for k := 1; k < len(us); k++ {
			if !us[k-1].resolved || !us[k].resolved {
				im.link(us[k-1], us[k])
			}
		}
	}
	if !im.hasET && len(byStream) > 1 {
		im.crossStream(byStream)
	}
}

// units groups the operations and orders each graph launch's kernels.
func (im *importer) units() []*unit {
	var units []*unit
	graphs := map[int64]*unit{}
	for i, o := range im.ops {
		g := o.gpu
		if g.graph {
			if u := graphs[g.corr]; u != nil {
				u.ops = append(u.ops, i)
				u.start, u.end = min(u.start, g.ts), max(u.end, g.ts+g.dur)
				continue
			}
		}
		u := &unit{ops: []int{i}, stream: g.stream, graph: g.graph, resolved: o.resolved, start: g.ts, end: g.ts + g.dur, corr: g.corr}
		if g.graph {
			graphs[g.corr] = u
			im.rep.GraphLaunches++
		}
		units = append(units, u)
	}
	for _, u := range units {
		if u.graph {
			im.graphEdges(u)
		} else {
			u.sources, u.sinks = u.ops, u.ops
		}
	}
	return units
}

// graphEdges orders a graph launch's kernels by what the recording shows:
// a kernel follows every kernel of the launch that ended before it
// started, keeping only the latest of those (the others it follows through
// them). Kernels that overlapped stay unordered.
func (im *importer) graphEdges(u *unit) {
	hasSucc := map[int]bool{}
	for _, b := range u.ops {
		gb := im.ops[b].gpu
		latest := int64(-1 << 62)
		for _, a := range u.ops {
			if ga := im.ops[a].gpu; a != b && ga.ts+ga.dur <= gb.ts {
				latest = max(latest, ga.ts)
			}
		}
		preds := 0
		for _, a := range u.ops {
			if ga := im.ops[a].gpu; a != b && ga.ts+ga.dur <= gb.ts && ga.ts+ga.dur > latest {
				im.ops[b].after[a] = true
				hasSucc[a] = true
				preds++
			}
		}
		if preds == 0 {
			u.sources = append(u.sources, b)
		}
	}
	for _, a := range u.ops {
		if !hasSucc[a] {
			u.sinks = append(u.sinks, a)
		}
	}
}

// link orders unit v after unit u.
func (im *importer) link(u, v *unit) {
	for _, s := range v.sources {
		for _, p := range u.sinks {
			im.ops[s].after[p] = true
		}
	}
}

// crossStream orders operations of different streams: at the recorded
// waits (cudaStreamWaitEvent with Kineto's synchronization events), or,
// where the trace has several streams but no synchronization events,
// conservatively after whatever had finished on every other stream when
// they started.
func (im *importer) crossStream(byStream map[int64][]*unit) {
	if len(im.t.waits) == 0 {
		im.rep.Warnings = append(im.rep.Warnings, fmt.Sprintf("%d streams but no synchronization events in the trace "+
			"(record with enable_cuda_sync_events, or give the execution trace): every operation follows what had "+
			"finished on the other streams when it started", len(byStream)))
		for s, us := range byStream {
			for _, v := range us {
				for t, others := range byStream {
					if t == s {
						continue
					}
					k := sort.Search(len(others), func(i int) bool { return others[i].end > v.start }) - 1
					if k >= 0 && others[k].end <= v.start {
						im.link(others[k], v)
					}
				}
			}
		}
		return
	}
	for _, w := range im.t.waits {
		src := lastBefore(byStream[w.onStream], w.recordCorr)
		dst := firstAfter(byStream[w.stream], w.corr)
		if src != nil && dst != nil {
			im.link(src, dst)
		}
	}
}

func lastBefore(us []*unit, corr int64) *unit {
	var out *unit
	for _, u := range us {
		if u.corr < corr {
			out = u
		}
	}
	return out
}

func firstAfter(us []*unit, corr int64) *unit {
	for _, u := range us {
		if u.corr > corr {
			return u
		}
	}
	return nil
}
