package kineto

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/workloads/file"
)

// opInfo is one imported operation on its way to the file.
type opInfo struct {
	gpu      *gpuOp
	name     string
	node     *etNode // the execution-trace operator that launched it (nil if unknown)
	reads    []file.Access
	writes   []file.Access
	resolved bool         // its accesses come from the execution trace
	after    map[int]bool // predecessors by index
}

type importer struct {
	t        *trace
	ops      []*opInfo
	rep      *Report
	hasET    bool
	bufSize  map[string]int64
	bufOrder []string
	version  map[int64]int // storage id -> current version
}

func newImporter(t *trace, gpu []*gpuOp, rep *Report) *importer {
	im := &importer{t: t, rep: rep, bufSize: map[string]int64{}, version: map[int64]int{}}
	for _, g := range gpu {
		o := &opInfo{gpu: g, after: map[int]bool{}}
		switch g.kind {
		case "kernel":
			o.name = fmt.Sprintf("k%d.%s", g.index, shortName(g.name))
			rep.Kernels++
		case "memcpy":
			o.name = fmt.Sprintf("c%d.%s", g.index, copyDirection(g.name))
			rep.Copies++
		default:
			o.name = fmt.Sprintf("m%d.memset", g.index)
			rep.Memsets++
		}
		if g.graph {
			rep.GraphKernels++
		}
		im.ops = append(im.ops, o)
	}
	return im
}

// copyDirection reads Kineto's "Memcpy HtoD (Pinned -> Device)".
func copyDirection(name string) string {
	for _, d := range []string{"HtoD", "DtoH", "DtoD"} {
		if strings.Contains(name, d) {
			return d
		}
	}
	return "copy"
}

// matchET pairs the trace's operators with execution-trace nodes: by
// record function id (Kineto's "Record function id", or in older traces
// its "External id", which then equals rf_id), checking names; if that
// pairs fewer than half of the operators that launched GPU work, by
// aligning the two sequences of operator names instead.
func (im *importer) matchET(nodes []*etNode) map[*span]*etNode {
	byRF := map[int64]*etNode{}
	for _, n := range nodes {
		if n.rfID >= 0 {
			byRF[n.rfID] = n
		}
	}
	out := map[*span]*etNode{}
	for _, s := range im.t.spans {
		if s.cat != "cpu_op" {
			continue
		}
		for _, id := range []int64{s.rfID, s.extID} {
			if n := byRF[id]; id >= 0 && n != nil && n.name == s.name {
				out[s] = n
				break
			}
		}
	}
	launching, matched := 0, 0
	for _, o := range im.ops {
		if o.gpu.op != nil {
			launching++
			if out[o.gpu.op] != nil {
				matched++
			}
		}
	}
	if 2*matched >= launching {
		return out
	}
	im.rep.Warnings = append(im.rep.Warnings, fmt.Sprintf("only %d of %d launching operators match the execution trace by id; matched by name sequence instead", matched, launching))
	return alignByName(im.t.spans, nodes)
}

// alignByName pairs operators and nodes in order of entry (span start,
// node id), skipping up to 64 nodes to find the next name.
func alignByName(spans []*span, nodes []*etNode) map[*span]*etNode {
	var ops []*span
	for _, s := range spans {
		if s.cat == "cpu_op" {
			ops = append(ops, s)
		}
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].ts < ops[j].ts })
	sorted := append([]*etNode(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].id < sorted[j].id })
	out := map[*span]*etNode{}
	j := 0
	for _, s := range ops {
		for k := j; k < len(sorted) && k < j+64; k++ {
			if sorted[k].name == s.name {
				out[s] = sorted[k]
				j = k + 1
				break
			}
		}
	}
	return out
}

// useET gives each operation the accesses of the operator that launched it.
// Storages are renamed as they are written anew (SSA): the execution trace
// identifies a storage by its data pointer, which the caching allocator
// reuses, so without renaming two tensors that merely shared an address in
// turn would look dependent.
func (im *importer) useET(nodes []*etNode, w window) {
	im.hasET = true
	match := im.matchET(nodes)
	launches := map[*span]bool{}
	for _, o := range im.ops {
		if o.gpu.op != nil {
			launches[o.gpu.op] = true
			o.node = match[o.gpu.op]
		}
	}
	type ev struct {
		ts    int64
		alloc *etNode
		op    *opInfo
	}
	var evs []ev
	for s, n := range match {
		if n.leaf && !launches[s] && s.ts >= w.from && s.ts < w.to {
			evs = append(evs, ev{ts: s.ts, alloc: n})
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].alloc.id < evs[j].alloc.id }) // map order is random
	for _, o := range im.ops {
		evs = append(evs, ev{ts: o.gpu.launch.ts, op: o})
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].ts != evs[j].ts {
			return evs[i].ts < evs[j].ts
		}
		return evs[i].alloc != nil && evs[j].alloc != nil && evs[i].alloc.id < evs[j].alloc.id
	})
	resolvedNodes := map[*etNode]*opInfo{}
	launchedTop := map[*span]bool{}
	spanOf := map[*etNode]*span{}
	for s, n := range match {
		spanOf[n] = s
	}
	for _, e := range evs {
		if e.alloc != nil {
			// An allocation inside an operator that already launched GPU
			// work belongs to that operator, whose outputs were renamed at
			// its first launch; renaming again could hide its later kernels'
			// writes from their readers.
			if s := spanOf[e.alloc]; s.top == nil || !launchedTop[s.top] {
				im.renameFresh(e.alloc)
			}
			continue
		}
		o := e.op
		if o.gpu.op != nil {
			launchedTop[o.gpu.op.top] = true
		}
		if o.node == nil || o.gpu.graph {
			continue
		}
		if first := resolvedNodes[o.node]; first != nil {
			o.reads, o.writes = append([]file.Access(nil), first.reads...), append([]file.Access(nil), first.writes...)
		} else {
			o.reads, o.writes = im.accesses(o.node)
			resolvedNodes[o.node] = &opInfo{reads: o.reads, writes: o.writes}
		}
		im.fitToKind(o)
	}
}

// cudaTensors are the tensors of args on a CUDA device that touch bytes.
func cudaTensors(args []etTensor) []etTensor {
	var out []etTensor
	for _, t := range args {
		if strings.HasPrefix(t.device, "cuda") && t.extent > 0 && t.itemsize > 0 && t.storage > 0 {
			out = append(out, t)
		}
	}
	return out
}

// renameFresh starts new versions of the storages n returns new.
func (im *importer) renameFresh(n *etNode) {
	_, aliased, _ := schemaEffects(n.schema)
	for _, t := range n.freshOutputs(aliased) {
		im.version[t.storage]++
	}
}

// storages is the set of CUDA storages among args.
func storages(args [][]etTensor) map[int64]bool {
	set := map[int64]bool{}
	for _, a := range args {
		for _, t := range cudaTensors(a) {
			set[t.storage] = true
		}
	}
	return set
}

// freshOutputs are the results that are new tensors: neither aliases of
// an argument (by the schema) nor in an argument's storage.
func (n *etNode) freshOutputs(aliased []bool) []etTensor {
	inputs := storages(n.inputs)
	var out []etTensor
	for i, o := range n.outputs {
		if i < len(aliased) && aliased[i] {
			continue
		}
		for _, t := range cudaTensors(o) {
			if !inputs[t.storage] {
				out = append(out, t)
			}
		}
	}
	return out
}

// accesses are what an operator reads and writes, in the versions current
// when it runs: its tensor arguments are read (except out= arguments);
// arguments its schema marks written ("Tensor(a!)"), and without a schema
// arguments it also returns, are written in place; results that are
// neither aliases nor arguments are new tensors, written in new versions.
func (im *importer) accesses(n *etNode) (reads, writes []file.Access) {
	mutated, aliased, haveSchema := schemaEffects(n.schema)
	argNames := schemaArgNames(n.schema)
	outputs := storages(n.outputs)
	for i, a := range n.inputs {
		written := (haveSchema && i < len(mutated) && mutated[i]) || (!haveSchema && anyStorage(a, outputs))
		outArg := written && i < len(argNames) && strings.HasPrefix(argNames[i], "out")
		for _, t := range cudaTensors(a) {
			acc := im.access(t)
			if !outArg {
				reads = append(reads, acc)
			}
			if written {
				writes = append(writes, acc)
			}
		}
	}
	for _, t := range n.freshOutputs(aliased) {
		im.version[t.storage]++
		writes = append(writes, im.access(t))
	}
	return reads, writes
}

func anyStorage(ts []etTensor, set map[int64]bool) bool {
	for _, t := range cudaTensors(ts) {
		if set[t.storage] {
			return true
		}
	}
	return false
}

// schemaArgNames are the argument names of a schema, in order ("" where
// unnamed).
func schemaArgNames(schema string) []string {
	args, _, _ := schemaParts(schema)
	var names []string
	for _, a := range args {
		a, _, _ = strings.Cut(strings.TrimSpace(a), "=")
		f := strings.Fields(a)
		name := ""
		if len(f) > 1 {
			name = f[len(f)-1]
		}
		names = append(names, name)
	}
	return names
}

// access is the byte range of tensor t in the current version of its storage.
func (im *importer) access(t etTensor) file.Access {
	name := fmt.Sprintf("s%d.%d", t.storage, im.version[t.storage])
	a := file.Access{Buffer: name, Offset: t.offset * t.itemsize, Bytes: t.extent * t.itemsize}
	if end := a.Offset + a.Bytes; end > im.bufSize[name] {
		if _, seen := im.bufSize[name]; !seen {
			im.bufOrder = append(im.bufOrder, name)
		}
		im.bufSize[name] = end
	}
	return a
}

// fitToKind keeps what a copy or memset can express (one device range
// each way) and marks the operation resolved if anything is left.
func (im *importer) fitToKind(o *opInfo) {
	switch o.gpu.kind {
	case "kernel":
		o.resolved = len(o.reads)+len(o.writes) > 0
		return
	case "memset":
		o.reads = nil
		if len(o.writes) > 0 {
			o.writes = o.writes[:1]
			o.resolved = true
		}
		return
	}
	switch copyDirection(o.gpu.name) {
	case "HtoD":
		o.reads = nil
		if len(o.writes) > 0 {
			o.writes, o.resolved = o.writes[:1], true
		}
	case "DtoH":
		o.writes = nil
		if len(o.reads) > 0 {
			o.reads, o.resolved = o.reads[:1], true
		}
	default:
		if len(o.writes) > 0 {
			for _, r := range o.reads {
				if r.Buffer != o.writes[0].Buffer {
					o.reads, o.writes, o.resolved = []file.Access{r}, o.writes[:1], true
					return
				}
			}
		}
	}
	if !o.resolved {
		o.reads, o.writes = nil, nil
	}
}
