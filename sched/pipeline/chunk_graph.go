package pipeline

import (
	"errors"
	"fmt"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// ChunkGraph (gpusched's, not a paper's) runs a pipeline of independent
// jobs as one CUDA graph launched once: SET-batch's coalesced chunks, laid
// out as a software pipeline inside the graph, so that no host dispatch
// sits between chunks and no worker limits how many run at once.
//
// Why: a whole-program graph (AutoGraph, Nimble's) launches every job's
// kernels without a host in the way, but keeps each job's own copies, two
// copy nodes per job, and on a GPU each copy node costs microseconds of
// its own. SET-batch copies a chunk of J jobs in and out with one copy
// each way, but runs chunks from the host, one graph launch per chunk,
// with as many chunks in flight as it has workers. ChunkGraph keeps both
// gains: the graph holds, for chunk c of J consecutive jobs (the last one
// may be shorter),
//
//	copy-in c    one coalesced host-to-device copy per input of the job,
//	             on the copy-in lane, after copy-in c-1
//	slots        each job of the chunk on kernel lane (i mod Lanes), i its
//	             place in the chunk, after copy-in c and after that lane's
//	             job of chunk c-1
//	copy-out c   one coalesced device-to-host copy per output, on the
//	             copy-out lane, after every job of chunk c and copy-out c-1
//
// so copy-in c+1 overlaps chunk c's kernels and copy-out c-1: the host
// copies stream in and out as the two directions allow, and the kernels
// run Lanes at a time. Every job has its own range of the batch buffers
// (one per job slot, jobs x stride bytes), so chunks share no memory and
// the only edges are the pipeline's.
//
// It needs what SET-batch needs (validateBatched: evenly strided host
// slots, one shape for every job); Prepare names what a program lacks.
// Prepare allocates and zeroes the batch buffers (the coalesced copy-out
// writes the padding between slots back) and captures and instantiates
// the graph; Run launches it once and waits.
type ChunkGraph struct {
	J, Lanes int

	js      *jobSet
	batch   *batchLayout
	kernels kernelRange
	bufs    []device.Buffer // one per job slot, jobs x stride bytes
	streams []device.Stream // the capture's origin (copy-in lane), copy-out lane, kernel lanes
	exec    device.GraphExec
	nodes   int
	// skipInWait leaves out the kernels' wait for their chunk's copy-in:
	// wrong, a negative control for the race checker (tests only).
	skipInWait bool
}

// NewChunkGraph makes a ChunkGraph of chunks of j jobs over lanes kernel
// lanes.
func NewChunkGraph(j, lanes int) (*ChunkGraph, error) {
	if j < 2 || j > maxJobsPerLaunch {
		return nil, fmt.Errorf("chunk-graph: j is %d; a chunk holds from 2 to %d jobs (one job per chunk is a graph of the whole program with its own copies)", j, maxJobsPerLaunch)
	}
	if lanes < 1 || lanes > maxJobsPerLaunch {
		return nil, fmt.Errorf("chunk-graph: lanes is %d; it must be between 1 and %d", lanes, maxJobsPerLaunch)
	}
	return &ChunkGraph{J: j, Lanes: lanes}, nil
}

// Name is chunk-graph(J=j,lanes=k).
func (c *ChunkGraph) Name() string { return fmt.Sprintf("chunk-graph(J=%d,lanes=%d)", c.J, c.Lanes) }

// Needs implements sched.Needer: independent jobs.
func (*ChunkGraph) Needs() []sched.Trait { return jobsNeed }

// Metrics reports the graph's shape: its nodes and chunks.
func (c *ChunkGraph) Metrics() map[string]float64 {
	if c.js == nil {
		return map[string]float64{}
	}
	return map[string]float64{"graph_nodes": float64(c.nodes), "chunks": float64(c.chunks())}
}

func (c *ChunkGraph) chunks() int { return (c.js.jobs() + c.J - 1) / c.J }

// Prepare analyzes the jobs, allocates and zeroes the batch buffers and
// captures and instantiates the graph.
func (c *ChunkGraph) Prepare(h device.Host, in *workloads.Instance) (err error) {
	js, err := analyze(in)
	if err != nil {
		return err
	}
	const what = "chunk-graph's coalesced copies"
	if c.kernels, err = jobKernelRange(js, what); err != nil {
		return err
	}
	if c.batch, err = newBatchLayout(js, c.kernels); err != nil {
		return err
	}
	if err := sameKernelScalars(js, c.kernels); err != nil {
		return err
	}
	c.js = js
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("chunk-graph: %w", err), c.Cleanup(h))
		}
	}()
	if c.streams, err = sched.NewStreams(h, 2+c.Lanes); err != nil {
		return err
	}
	if err := c.allocate(h); err != nil {
		return err
	}
	g, err := c.capture(h)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.Destroy(g)) }()
	if want := c.chunks()*len(c.batch.copies) + js.jobs()*(c.kernels.hi-c.kernels.lo); g.Nodes() != want {
		return fmt.Errorf("captured graph has %d nodes, want %d", g.Nodes(), want)
	}
	c.nodes = g.Nodes()
	c.exec, err = h.Instantiate(g)
	return err
}

// allocate makes one batch buffer per job slot, a stride per job, and
// zeroes it from a zeroed pinned host buffer (on the first stream).
func (c *ChunkGraph) allocate(h device.Host) (err error) {
	var most int64
	for sl, st := range c.batch.stride {
		n := int64(c.js.jobs()) * st
		b, err := h.Malloc(n)
		if err != nil {
			return fmt.Errorf("batch buffer %d (%d bytes): %w", sl, n, err)
		}
		c.bufs = append(c.bufs, b)
		most = max(most, n)
	}
	zero, err := h.AllocHost(most, true)
	if err != nil {
		return fmt.Errorf("zeroing the batch buffers: %w", err)
	}
	defer func() { err = errors.Join(err, h.FreeHost(zero)) }()
	clear(zero.Data)
	st := c.streams[0]
	for _, b := range c.bufs {
		z := device.Copy{Kind: device.HostToDevice, Dst: b, Host: zero, Bytes: b.Size, Label: "zero batch buffer"}
		if err := h.Copy(st, &z); err != nil {
			return err
		}
	}
	return h.StreamSynchronize(st)
}

// capture records the whole pipeline into one graph (see ChunkGraph).
func (c *ChunkGraph) capture(h device.Host) (device.Graph, error) {
	in, out, lanes := c.streams[0], c.streams[1], c.streams[2:]
	var pool sched.EventPool
	defer func() { _ = pool.Destroy(h) }() // events are destroyed after the capture ends; an error here changes no result
	if err := h.BeginCapture(in); err != nil {
		return nil, err
	}
	fail := func(err error) (device.Graph, error) { return nil, sched.AbortCapture(h, in, err) }
	if err := sched.Fork(h, c.streams, &pool); err != nil {
		return fail(err)
	}
	for f := 0; f < c.js.jobs(); f += c.J {
		if err := c.issueChunk(h, in, out, lanes, &pool, f, min(c.J, c.js.jobs()-f)); err != nil {
			return fail(err)
		}
	}
	if err := sched.Join(h, c.streams, &pool); err != nil {
		return fail(err)
	}
	return h.EndCapture(in)
}

// issueChunk issues the chunk of n jobs from job f: its copies in on in,
// each job on its kernel lane after them, its copies out on out after
// every job.
func (c *ChunkGraph) issueChunk(h device.Host, in, out device.Stream, lanes []device.Stream, pool *sched.EventPool, f, n int) error {
	l := c.batch
	for k := 0; k < l.nIn; k++ {
		cp := c.chunkCopy(k, f, n)
		if err := h.Copy(in, &cp); err != nil {
			return err
		}
	}
	copied, err := recordOn(h, pool, in)
	if err != nil {
		return err
	}
	defer pool.Put(copied)
	for i := 0; i < n; i++ {
		lane := lanes[i%len(lanes)]
		if !c.skipInWait {
			if err := h.Wait(lane, copied); err != nil {
				return err
			}
		}
		if err := issueBatchSlot(h, lane, c.js, l, c.kernels, c.bufs, f+i); err != nil {
			return err
		}
		done, err := recordOn(h, pool, lane)
		if err != nil {
			return err
		}
		err = h.Wait(out, done)
		pool.Put(done)
		if err != nil {
			return err
		}
	}
	for k := l.nIn; k < len(l.copies); k++ {
		cp := c.chunkCopy(k, f, n)
		if err := h.Copy(out, &cp); err != nil {
			return err
		}
	}
	return nil
}

// recordOn records an event of pool on st.
func recordOn(h device.Host, pool *sched.EventPool, st device.Stream) (device.Event, error) {
	e, err := pool.Get(h)
	if err != nil {
		return nil, err
	}
	return e, h.Record(e, st)
}

// chunkCopy is host copy k of the layout for the chunk of n jobs from job
// f: from (or to) job f's host offset, n-1 strides and one job's bytes
// long, its device side job f's slot of the batch buffer.
func (c *ChunkGraph) chunkCopy(k, f, n int) device.Copy {
	bc := &c.batch.copies[k]
	lo0, _ := c.js.in.StepRange(0)
	cp := *c.js.in.CopyCmd(lo0 + bc.op)
	cp.HostOff = bc.base + int64(f)*bc.stride
	cp.Bytes = int64(n-1)*bc.stride + bc.bytes
	cp.Label = fmt.Sprintf("%s, jobs %d-%d", bc.label, f, f+n-1)
	at := int64(f) * c.batch.stride[bc.slot]
	if cp.Kind == device.HostToDevice {
		cp.Dst, cp.DstOff = c.bufs[bc.slot], cp.DstOff+at
	} else {
		cp.Src, cp.SrcOff = c.bufs[bc.slot], cp.SrcOff+at
	}
	return cp
}

// Run launches the graph once and waits for it.
func (c *ChunkGraph) Run(h device.Host, in *workloads.Instance) (err error) {
	if c.exec == nil {
		if err := c.Prepare(h, in); err != nil {
			return err
		}
		defer sched.JoinCleanup(h, c, &err)
	}
	if err := h.GraphLaunch(c.exec, c.streams[0]); err != nil {
		return err
	}
	return h.StreamSynchronize(c.streams[0])
}

// Cleanup releases the exec, the streams and the batch buffers.
func (c *ChunkGraph) Cleanup(h device.Host) error {
	var errs []error
	if c.exec != nil {
		errs = append(errs, h.Destroy(c.exec))
	}
	errs = append(errs, sched.DestroyStreams(h, c.streams))
	for _, b := range c.bufs {
		errs = append(errs, h.Free(b))
	}
	c.exec, c.streams, c.bufs = nil, nil, nil
	return errors.Join(errs...)
}
