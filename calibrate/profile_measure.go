package calibrate

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
	"github.com/gpusched/gpusched/workloads"
)

// overheads measures what the profile subtracts from its points and
// models as the simulator does: the per-launch time of back-to-back
// one-block empty kernels (the launch gap plus the shortest block), the
// shortest block's lifetime (time per wave of empty blocks padded to one
// per SM) and the block distributor's time per block (full waves of empty
// blocks, when they take longer).
func (p *profiler) overheads(h device.Host, prof *sim.Profile) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	per, err := p.samples(h, t, p.c.emptyLaunch(1), 32)
	if err != nil {
		return err
	}
	lone, full, wave, err := p.c.emptyWaves(h, t)
	if err != nil {
		return err
	}
	prof.BlockDispatchNs = dispatchPerBlock(stats.Median(lone), stats.Median(full), wave)
	prof.MinBlockNs = shortestBlock(stats.Median(lone), prof.BlockDispatchNs, p.info.SMs)
	prof.BackToBackNs = max(0, stats.Median(per)-prof.MinBlockNs)
	return nil
}

// program binds prog, runs it once in order on one stream (so that every
// buffer holds what the kernels see in a run, and modules are loaded),
// and measures its tasks.
func (p *profiler) program(prog *workloads.Program, tasks []task, points map[string][]sim.ProfilePoint) error {
	measured := 0
	err := p.dev.Run(func(h device.Host) (err error) {
		defer func() { p.spent += h.Now() }()
		inst, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, inst.Release(h)) }()
		t, err := newTimedStream(h)
		if err != nil {
			return err
		}
		if p.opt.ColdL2 {
			release, err := p.scratch(h)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, release()) }()
		}
		for k := 0; k < inst.N(); k++ {
			if err := inst.Issue(h, t.s, k); err != nil {
				return err
			}
		}
		if err := h.StreamSynchronize(t.s); err != nil {
			return err
		}
		for _, tk := range tasks {
			over := p.spent + h.Now()
			if over > 2*p.opt.Budget || (tk.optional && over > p.opt.Budget) || p.late() {
				p.sum.Skipped++
				continue
			}
			pt, ok, err := p.task(h, t, inst, tk)
			if err != nil {
				return fmt.Errorf("%s (grid %v, block %v): %w", tk.s.key.kernel, tk.s.grid, tk.s.block, err)
			}
			if !ok {
				p.sum.Skipped++
				continue
			}
			points[tk.s.key.kernel] = append(points[tk.s.key.kernel], pt)
			measured++
		}
		return h.Synchronize()
	})
	if err != nil {
		return err
	}
	p.sum.Programs++
	p.sum.Points += measured
	if p.opt.Progress != nil {
		// Progress is best effort: a lost line must not fail a profile.
		_, _ = fmt.Fprintf(p.opt.Progress, "profile: %-50s %3d points, device time %v\n", prog.Name, measured, p.spent.Round(time.Millisecond))
	}
	return nil
}

// next waits for the next filled program, unless the deadline passes
// first (ok false).
func (p *profiler) next(filled <-chan *workloads.Program) (*workloads.Program, bool) {
	if p.opt.Deadline.IsZero() {
		prog, ok := <-filled
		return prog, ok
	}
	timer := time.NewTimer(time.Until(p.opt.Deadline))
	defer timer.Stop()
	select {
	case prog, ok := <-filled:
		return prog, ok
	case <-timer.C:
		return nil, false
	}
}

// late reports whether the wall-clock deadline has passed.
func (p *profiler) late() bool { return !p.opt.Deadline.IsZero() && time.Now().After(p.opt.Deadline) }

// task measures one point; ok is false when the forced occupancy cannot be
// reached by padding shared memory.
func (p *profiler) task(h device.Host, t *timedStream, inst *workloads.Instance, tk task) (sim.ProfilePoint, bool, error) {
	l := *inst.Launch(tk.op)
	if tk.perSM > 0 {
		dyn, ok := paddedShared(&p.info, &l, tk.perSM)
		if !ok {
			return sim.ProfilePoint{}, false, nil
		}
		l.SharedMem = dyn
	}
	perSM, _ := p.info.Occupancy(&l)
	probe, err := p.sample(h, t, &l, 1)
	if err != nil {
		return sim.ProfilePoint{}, false, err
	}
	m := int(math.Ceil(sampleNs / max(probe, 1e3)))
	m = min(max(m, 1), maxLaunchesPer)
	ns, err := p.samples(h, t, &l, m)
	if err != nil {
		return sim.ProfilePoint{}, false, err
	}
	w := l.Work
	pt := sim.ProfilePoint{
		Grid: l.Grid.Count(), Threads: l.Block.Count(), Shared: l.SharedMem, PerSM: perSM, Forced: tk.perSM > 0,
		Cycles: w.Cycles, Flops: w.Flops, Bytes: w.Bytes, Launches: m, Ns: ns, Scalars: sim.ScalarSignature(l.Args),
	}
	if p.evict != nil {
		if pt.ColdNs, pt.RewarmNs, err = p.coldSamples(h, t, &l); err != nil {
			return sim.ProfilePoint{}, false, err
		}
	}
	return pt, true, nil
}

// scratch allocates the two buffers of twice the L2 cache that the
// eviction copy moves between (ColdL2) and sets p.evict; release frees
// them.
func (p *profiler) scratch(h device.Host) (release func() error, err error) {
	n := 2 * p.info.L2Bytes
	src, err := h.Malloc(n)
	if err != nil {
		return nil, fmt.Errorf("cold-L2 scratch: %w", err)
	}
	dst, err := h.Malloc(n)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("cold-L2 scratch: %w", err), h.Free(src))
	}
	p.evict = &device.Copy{Kind: device.DeviceToDevice, Src: src, Dst: dst, Bytes: n, Label: "evict-l2"}
	return func() error {
		p.evict = nil
		return errors.Join(h.Free(src), h.Free(dst))
	}, nil
}

// coldSamples is opt.Samples pairs of single launches of l: one behind
// the L2 eviction copy (cold) and the same launch right after it (rewarm).
func (p *profiler) coldSamples(h device.Host, t *timedStream, l *device.Launch) (cold, rewarm []float64, err error) {
	for i := 0; i < p.opt.Samples; i++ {
		c, err := p.sampleAfter(h, t, p.evict, l, 1)
		if err != nil {
			return nil, nil, err
		}
		w, err := p.sample(h, t, l, 1)
		if err != nil {
			return nil, nil, err
		}
		cold, rewarm = append(cold, math.Round(c*10)/10), append(rewarm, math.Round(w*10)/10)
	}
	return cold, rewarm, nil
}

// samples is opt.Samples samples of m launches, per launch.
func (p *profiler) samples(h device.Host, t *timedStream, l *device.Launch, m int) ([]float64, error) {
	ns := make([]float64, 0, p.opt.Samples)
	for i := 0; i < p.opt.Samples; i++ {
		y, err := p.sample(h, t, l, m)
		if err != nil {
			return nil, err
		}
		ns = append(ns, math.Round(y/float64(m)*10)/10)
	}
	return ns, nil
}

// sample is the elapsed time of m back-to-back launches of l on an idle
// stream, enqueued behind a gate kernel so that the host's launch cost is
// hidden: per launch, the kernel's duration plus the launch gap. Where the
// host took longer to enqueue the gate, the launches and the closing
// record than the gate spins (a host busy filling the next program's
// inputs, a collection), the GPU ran dry and the sample times the host:
// it is taken again behind a gate twice as long as the host took, at most
// gateRetries times (ProfileSummary.Retaken counts them).
func (p *profiler) sample(h device.Host, t *timedStream, l *device.Launch, m int) (float64, error) {
	return p.sampleAfter(h, t, nil, l, m)
}

// sampleAfter is sample with the copy before (if not nil) issued ahead of
// each try's gate: the L2 eviction of a cold sample, redone when the
// sample is taken again.
func (p *profiler) sampleAfter(h device.Host, t *timedStream, before *device.Copy, l *device.Launch, m int) (float64, error) {
	gateNs := gateBaseNs + gatePerLaunch*float64(m)
	for try := 0; ; try++ {
		if before != nil {
			if err := h.Copy(t.s, before); err != nil {
				return 0, err
			}
		}
		y, queued, err := p.gatedSample(h, t, l, m, gateNs)
		if err != nil || p.opt.NoGateCheck || queued <= gateNs || try == gateRetries {
			return y, err
		}
		p.sum.Retaken++
		gateNs = 2 * queued
	}
}

// gatedSample is one sample behind a gate of gateNs and the host's time
// from the gate's launch to the closing record's (queued).
func (p *profiler) gatedSample(h device.Host, t *timedStream, l *device.Launch, m int, gateNs float64) (y, queued float64, err error) {
	gate := p.c.spinLaunch(time.Duration(gateNs), t.done)
	start := h.Now()
	if err := h.Launch(t.s, gate); err != nil {
		return 0, 0, err
	}
	if err := h.Record(t.e0, t.s); err != nil {
		return 0, 0, err
	}
	for i := 0; i < m; i++ {
		if err := h.Launch(t.s, l); err != nil {
			return 0, 0, err
		}
	}
	if err := h.Record(t.e1, t.s); err != nil {
		return 0, 0, err
	}
	queued = ns(h.Now() - start)
	if err := h.StreamSynchronize(t.s); err != nil {
		return 0, 0, err
	}
	d, err := h.Elapsed(t.e0, t.e1)
	return ns(d), queued, err
}

// paddedShared is the dynamic shared memory per block that lets exactly n
// blocks of l fit on one SM (never less than l asks for), as occupancy
// shaping does: ok is false when padding cannot reach n (another limit
// binds first, or the block would exceed the per-block maximum).
func paddedShared(info *device.Info, l *device.Launch, n int) (int, bool) {
	static := 0
	if l.Kernel != nil {
		static = l.Kernel.StaticShared
	}
	dyn := max(l.SharedMem, info.SharedPerSM/(n+1)+1-static-info.SharedReserved)
	if dyn+static > info.MaxSharedPerBlock {
		return 0, false
	}
	padded := *l
	padded.SharedMem = dyn
	got, _ := info.Occupancy(&padded)
	return dyn, got == n
}

// prefillAll sends, in order, each program with its buffers' initial
// contents computed beforehand, in parallel, one program ahead of the
// one being measured: on a GPU host, filling gigabytes of inputs is most
// of a profile's wall time. stop ends the filling early.
func prefillAll(progs []*workloads.Program, order []int) (<-chan *workloads.Program, func()) {
	out := make(chan *workloads.Program, 1)
	done := make(chan struct{})
	go func() {
		defer close(out)
		for _, pi := range order {
			select {
			case out <- prefill(progs[pi]):
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { close(done) }) }
}

// prefill is a copy of prog whose buffers' Init copy contents computed
// now, in parallel (Init functions are pure: each fills its buffer from
// its own seed).
func prefill(prog *workloads.Program) *workloads.Program {
	cp := &workloads.Program{
		Name: prog.Name, Steps: prog.Steps, Check: prog.Check,
		Buffers: append([]workloads.BufferSpec(nil), prog.Buffers...),
		Host:    append([]workloads.HostSpec(nil), prog.Host...),
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	fill := func(init *func([]byte), n int64) {
		if *init == nil {
			return
		}
		data := make([]byte, n)
		f := *init
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			f(data)
			<-sem
		}()
		*init = func(dst []byte) { copy(dst, data) }
	}
	for i := range cp.Buffers {
		fill(&cp.Buffers[i].Init, cp.Buffers[i].Bytes)
	}
	for i := range cp.Host {
		fill(&cp.Host[i].Init, cp.Host[i].Bytes)
	}
	wg.Wait()
	return cp
}
