package kineto

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/workloads/file"
)

// emit writes the workload file: buffers in order of first use, one step of
// operations in program order.
func (im *importer) emit(d file.Device, opt Options, w window) *file.File {
	name := opt.Name
	if name == "" {
		name = baseName(opt.TracePath)
	}
	f := &file.File{Format: file.Format, Name: name, Device: d,
		Source: &file.Source{Tool: "kineto", Trace: baseIfSet(opt.TracePath), ET: baseIfSet(opt.ETPath), Iteration: opt.Iteration, Note: w.name}}
	f.Source.Iteration = 0
	if m := profilerStep.FindStringSubmatch(w.name); m != nil {
		f.Source.Iteration, _ = strconv.Atoi(m[1])
	}
	step := file.Step{Name: w.name}
	for _, o := range im.ops {
		step.Ops = append(step.Ops, im.fileOp(o))
	}
	for _, b := range im.bufOrder {
		f.Buffers = append(f.Buffers, file.Buffer{Name: b, Bytes: im.bufSize[b]})
	}
	f.Steps = []file.Step{step}
	im.rep.Buffers = len(f.Buffers)
	return f
}

func baseIfSet(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Base(p)
}

func (im *importer) fileOp(o *opInfo) file.Op {
	g := o.gpu
	stream := int(g.stream)
	op := file.Op{Stream: &stream, DurationNS: max(1, g.dur)}
	if g.op != nil {
		op.Label = g.op.name
	}
	switch g.kind {
	case "kernel":
		op.Kernel = o.name
		op.Grid = file.Dim{X: g.grid[0], Y: g.grid[1], Z: g.grid[2]}
		op.Block = file.Dim{X: g.block[0], Y: g.block[1], Z: g.block[2]}
		op.Registers = g.regs
		op.StaticShared = g.shared // Kineto reports static and dynamic shared memory together
	case "memcpy":
		op.Copy, op.Direction = o.name, copyDirection(g.name)
		if op.Direction == "copy" {
			op.Direction = "DtoD"
		}
		op.Pageable = strings.Contains(strings.ToLower(g.name), "pageable")
		op.Bytes = max(1, g.bytes)
		im.copyRanges(o, &op)
	default:
		op.Memset = o.name
		op.Bytes = max(1, g.bytes)
		im.copyRanges(o, &op)
	}
	if o.resolved {
		op.Reads, op.Writes = im.whole(o.reads), im.whole(o.writes)
	}
	var after []int
	for p := range o.after {
		after = append(after, p)
	}
	sort.Ints(after)
	for _, p := range after {
		op.After = append(op.After, im.ops[p].name)
	}
	im.rep.Edges += len(after)
	return op
}

// copyRanges gives a copy or memset its device ranges: its operator's
// tensors, trimmed to the bytes moved, or a buffer of its own.
func (im *importer) copyRanges(o *opInfo, op *file.Op) {
	if o.resolved {
		for _, list := range [][]file.Access{o.reads, o.writes} {
			for i := range list {
				op.Bytes = min(op.Bytes, spanOf(list[i], im.bufSize))
			}
		}
		return
	}
	own := o.name + ".dev"
	im.bufOrder = append(im.bufOrder, own)
	im.bufSize[own] = op.Bytes
	switch {
	case op.Memset != "" || op.Direction == "HtoD":
		op.Writes = []file.Access{{Buffer: own}}
	case op.Direction == "DtoH":
		op.Reads = []file.Access{{Buffer: own}}
	default: // a device-to-device copy within its own buffer's two halves
		im.bufSize[own] = 2 * op.Bytes
		op.Reads = []file.Access{{Buffer: own, Offset: 0, Bytes: op.Bytes}}
		op.Writes = []file.Access{{Buffer: own, Offset: op.Bytes, Bytes: op.Bytes}}
	}
}

// whole writes an access that covers its buffer as the buffer's name alone.
func (im *importer) whole(list []file.Access) []file.Access {
	out := make([]file.Access, len(list))
	for i, a := range list {
		if a.Offset == 0 && a.Bytes == im.bufSize[a.Buffer] {
			a.Bytes = 0
		}
		out[i] = a
	}
	return out
}

func spanOf(a file.Access, sizes map[string]int64) int64 {
	if a.Bytes == 0 {
		return sizes[a.Buffer] - a.Offset
	}
	return a.Bytes
}
