package hardening

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// Soak. Each scheduler runs its program round after round on one bound
// instance, with Prepare, Run and Cleanup every round as the experiments
// runner does per repetition, until it has issued its kernel count or spent
// its time budget. Between rounds the soak samples what must not grow:
// streams, events, graphs and graph execs the scheduler holds (created minus
// destroyed, counted by a forwarding Host), device allocations, the device's
// free memory (cuMemGetInfo, where the backend gives it), and the process's
// Go heap and resident set. A leak of one handle per round is a count that
// climbs with the rounds; the verdict compares the sample after the first
// tenth of the rounds (warm-up: module loading, the driver's pools) with the
// last.

// SoakCase is one scheduler and the program it soaks with.
type SoakCase struct {
	Scheduler Spec
	Workload  Spec
}

// SoakCases cover every scheduler family on small grids: the DAG baselines
// and strategies on a synthetic DAG of 1 to 4-block kernels, the pipeline
// schedulers on small Sobel jobs, cuSync on a small MLP.
var SoakCases = []SoakCase{
	{Spec{"serial", ""}, soakDAG},
	{Spec{"round-robin", "{k: 4}"}, soakDAG},
	{Spec{"graph-per-step", "{streams: 4}"}, soakDAG},
	{Spec{"acs-sw", "{completion: callback, inflight: 4}"}, soakDAG},
	{Spec{"kesco", ""}, soakDAG},
	{Spec{"kesco", "{graph: true}"}, soakDAG},
	{Spec{"grsched", ""}, soakDAG},
	{Spec{"set", "{b: 4, depth: 2}"}, soakJobs},
	{Spec{"queue", "{b: 4}"}, soakJobs},
	{Spec{"tilesync", "{policy: row}"}, soakTiles},
}

var (
	soakDAG   = Spec{"synthetic", "{layers: 8, width: 8, fan_in: 2, min_blocks: 1, max_blocks: 4, threads: 64, iters: 16, steps: 4}"}
	soakJobs  = Spec{"jobs-sobel", "{jobs: 64, size: 32}"}
	soakTiles = Spec{"tiles-mlp", "{model: gpt3, tokens: 8, hidden: 512, ff: 512, steps: 8}"}
)

// SoakOptions bound a soak.
type SoakOptions struct {
	Kernels int           // kernels per scheduler
	Budget  time.Duration // wall time per scheduler; 0: none
	Samples int           // samples per scheduler (at least 2)
	// MemInfo returns the device's free and total memory; it is called on
	// the device's main host thread (where a CUDA context is current). Nil
	// or an error: not sampled.
	MemInfo func() (free, total int64, err error)
	Seed    int64
	Log     func(format string, a ...any)
}

// SoakSample is one sample of what must not grow.
type SoakSample struct {
	Round, Kernels                 int
	Streams, Events, Graphs, Execs int
	Buffers, HostBufs              int
	DeviceFree                     int64 // -1: not known
	HeapInuse, RSS                 uint64
	Wall                           time.Duration
}

// SoakResult is one scheduler's soak.
type SoakResult struct {
	Scheduler, Workload string
	Kernels, Rounds     int
	KernelsPerRound     int
	Wall                time.Duration
	Samples             []SoakSample
	Err                 string
	Growth              []string // what grew between warm-up and the end; empty: nothing
}

// Thresholds for what counts as growth of the memory figures, which move
// without a leak (the allocator, the driver's pools): device free memory
// falling by more than 64 MiB, the Go heap or the RSS rising by more than
// 64 MiB between the warm-up sample and the last. Handle counts must not
// move at all.
const soakMemSlack = 64 << 20

// Soak runs every case on dev.
func Soak(dev device.Device, cases []SoakCase, opt SoakOptions) []SoakResult {
	if opt.Samples < 2 {
		opt.Samples = 2
	}
	if opt.Log == nil {
		opt.Log = func(string, ...any) {}
	}
	var out []SoakResult
	for _, c := range cases {
		r := soakOne(dev, c, opt)
		opt.Log("%s on %s: %d kernels in %d rounds, %v, growth: %s %s", r.Scheduler, r.Workload, r.Kernels, r.Rounds, r.Wall.Round(time.Millisecond), orNone(r.Growth), r.Err)
		out = append(out, r)
	}
	return out
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, "; ")
}

func soakOne(dev device.Device, c SoakCase, opt SoakOptions) SoakResult {
	res := SoakResult{Scheduler: c.Scheduler.String(), Workload: c.Workload.String()}
	prog, err := NewProgram(c.Workload, opt.Seed)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	kernelsPerRound := 0
	for _, s := range prog.Steps {
		for _, op := range s.Ops {
			if op.Kind == workloads.OpKernel {
				kernelsPerRound++
			}
		}
	}
	res.KernelsPerRound = kernelsPerRound
	if kernelsPerRound == 0 {
		res.Err = "the program has no kernels"
		return res
	}
	rounds := (opt.Kernels + kernelsPerRound - 1) / kernelsPerRound
	every := max(1, rounds/(opt.Samples-1))
	start := time.Now()
	err = dev.Run(func(h device.Host) (err error) {
		wrapped := counting(h, nil)
		ch := unwrapCounting(wrapped)
		in, err := workloads.Bind(wrapped, prog)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, in.Release(wrapped)) }()
		sample := func(round int) {
			s := ch.snapshot()
			s.Round, s.Kernels, s.DeviceFree, s.Wall = round, round*kernelsPerRound, -1, time.Since(start)
			if opt.MemInfo != nil {
				if free, _, err := opt.MemInfo(); err == nil {
					s.DeviceFree = free
				}
			}
			// Live heap: collect first, so garbage not yet swept is not
			// mistaken for growth.
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			s.HeapInuse, s.RSS = ms.HeapInuse, rss()
			res.Samples = append(res.Samples, s)
		}
		sample(0)
		for round := 1; round <= rounds; round++ {
			s, err := NewScheduler(c.Scheduler)
			if err != nil {
				return err
			}
			if err := sched.RunOnce(wrapped, in, s); err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
			res.Rounds = round
			res.Kernels = round * kernelsPerRound
			last := round == rounds || opt.Budget > 0 && time.Since(start) > opt.Budget
			if round%every == 0 || last {
				if err := h.Synchronize(); err != nil {
					return err
				}
				sample(round)
			}
			if last {
				break
			}
		}
		return nil
	})
	res.Wall = time.Since(start)
	if err != nil {
		res.Err = err.Error()
	}
	res.Growth = growth(res.Samples)
	return res
}

// growth compares the sample after the first tenth of the rounds with the
// last one.
func growth(ss []SoakSample) []string {
	if len(ss) < 3 {
		return nil
	}
	last := ss[len(ss)-1]
	base := ss[1]
	for _, s := range ss[1:] {
		if s.Round*10 >= last.Round {
			break
		}
		base = s
	}
	var g []string
	counts := []struct {
		name string
		b, l int
	}{
		{"streams", base.Streams, last.Streams}, {"events", base.Events, last.Events},
		{"graphs", base.Graphs, last.Graphs}, {"graph execs", base.Execs, last.Execs},
		{"device buffers", base.Buffers, last.Buffers}, {"host buffers", base.HostBufs, last.HostBufs},
	}
	for _, c := range counts {
		if c.l != c.b {
			g = append(g, fmt.Sprintf("%s %d -> %d", c.name, c.b, c.l))
		}
	}
	if base.DeviceFree >= 0 && last.DeviceFree >= 0 && base.DeviceFree-last.DeviceFree > soakMemSlack {
		g = append(g, fmt.Sprintf("device free memory %d -> %d MiB", base.DeviceFree>>20, last.DeviceFree>>20))
	}
	if last.HeapInuse > base.HeapInuse+soakMemSlack {
		g = append(g, fmt.Sprintf("Go heap %d -> %d MiB", base.HeapInuse>>20, last.HeapInuse>>20))
	}
	if last.RSS > base.RSS+soakMemSlack {
		g = append(g, fmt.Sprintf("RSS %d -> %d MiB", base.RSS>>20, last.RSS>>20))
	}
	return g
}

// rss is the process's resident set in bytes (Linux), 0 where unknown.
func rss() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// countingHost forwards to Host and counts the live handles the scheduler
// (and Bind) hold: created minus destroyed. Host threads started with Go
// count into the same totals.
type countingHost struct {
	device.Host
	c *counts
}

type counts struct {
	mu                                                   sync.Mutex
	streams, events, graphs, execs, buffers, hostBuffers int
	// Graph and GraphExec have the same method set, so a type switch
	// cannot tell them apart: the live ones are kept by identity.
	liveGraphs map[device.Resource]bool
	liveExecs  map[device.Resource]bool
}

func (h *countingHost) counts() *counts {
	if h.c == nil {
		h.c = &counts{liveGraphs: map[device.Resource]bool{}, liveExecs: map[device.Resource]bool{}}
	}
	return h.c
}

func (h *countingHost) add(p *int, d int) {
	c := h.counts()
	c.mu.Lock()
	*p += d
	c.mu.Unlock()
}

func (h *countingHost) snapshot() SoakSample {
	c := h.counts()
	c.mu.Lock()
	defer c.mu.Unlock()
	return SoakSample{Streams: c.streams, Events: c.events, Graphs: c.graphs, Execs: c.execs, Buffers: c.buffers, HostBufs: c.hostBuffers}
}

func (h *countingHost) Go(name string, fn func(device.Host) error) {
	c := h.counts()
	h.Host.Go(name, func(child device.Host) error { return fn(counting(child, c)) })
}

// infoCountingHost keeps the device description visible (tilesync's rule
// reads it).
type infoCountingHost struct {
	*countingHost
	info device.InfoHost
}

func (h *infoCountingHost) DeviceInfo() device.Info { return h.info.DeviceInfo() }

// counting wraps h, sharing c (nil: fresh counts).
func counting(h device.Host, c *counts) device.Host {
	ch := &countingHost{Host: h, c: c}
	ch.counts()
	if ih, ok := h.(device.InfoHost); ok {
		return &infoCountingHost{countingHost: ch, info: ih}
	}
	return ch
}

func unwrapCounting(h device.Host) *countingHost {
	if ih, ok := h.(*infoCountingHost); ok {
		return ih.countingHost
	}
	return h.(*countingHost)
}

func (h *countingHost) NewStream(o device.StreamOptions) (device.Stream, error) {
	s, err := h.Host.NewStream(o)
	if err == nil {
		h.add(&h.counts().streams, 1)
	}
	return s, err
}

func (h *countingHost) NewEvent(o device.EventOptions) (device.Event, error) {
	e, err := h.Host.NewEvent(o)
	if err == nil {
		h.add(&h.counts().events, 1)
	}
	return e, err
}

func (h *countingHost) EndCapture(s device.Stream) (device.Graph, error) {
	g, err := h.Host.EndCapture(s)
	if err == nil && g != nil {
		c := h.counts()
		c.mu.Lock()
		c.graphs++
		c.liveGraphs[g] = true
		c.mu.Unlock()
	}
	return g, err
}

func (h *countingHost) Instantiate(g device.Graph) (device.GraphExec, error) {
	x, err := h.Host.Instantiate(g)
	if err == nil && x != nil {
		c := h.counts()
		c.mu.Lock()
		c.execs++
		c.liveExecs[x] = true
		c.mu.Unlock()
	}
	return x, err
}

func (h *countingHost) Destroy(r device.Resource) error {
	err := h.Host.Destroy(r)
	if err != nil {
		return err
	}
	c := h.counts()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.liveGraphs[r]:
		delete(c.liveGraphs, r)
		c.graphs--
	case c.liveExecs[r]:
		delete(c.liveExecs, r)
		c.execs--
	default:
		// Stream's method set includes Event's: test Stream first.
		switch r.(type) {
		case device.Stream:
			c.streams--
		case device.Event:
			c.events--
		}
	}
	return nil
}

func (h *countingHost) Malloc(n int64) (device.Buffer, error) {
	b, err := h.Host.Malloc(n)
	if err == nil {
		h.add(&h.counts().buffers, 1)
	}
	return b, err
}

func (h *countingHost) Free(b device.Buffer) error {
	err := h.Host.Free(b)
	if err == nil {
		h.add(&h.counts().buffers, -1)
	}
	return err
}

func (h *countingHost) AllocHost(n int64, pinned bool) (*device.HostMem, error) {
	m, err := h.Host.AllocHost(n, pinned)
	if err == nil {
		h.add(&h.counts().hostBuffers, 1)
	}
	return m, err
}

func (h *countingHost) FreeHost(m *device.HostMem) error {
	err := h.Host.FreeHost(m)
	if err == nil {
		h.add(&h.counts().hostBuffers, -1)
	}
	return err
}

// SoakReport renders results as Markdown, with the raw samples as JSON.
func SoakReport(device string, opt SoakOptions, rs []SoakResult) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# gpusched soak on %s\n\n", device)
	fmt.Fprintf(&b, "Target %d kernels per scheduler (time budget %v each), %d samples per scheduler. Growth is compared between the sample after the first tenth of the rounds and the last: handle counts must not move; device free memory, Go heap and RSS may move by %d MiB.\n\n", opt.Kernels, opt.Budget, opt.Samples, soakMemSlack>>20)
	b.WriteString("| scheduler | workload | kernels | rounds | wall (s) | kernels/s | streams | events | graphs/execs | buffers | device free (MiB) | heap (MiB) | RSS (MiB) | growth | error |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		first, last := SoakSample{DeviceFree: -1}, SoakSample{DeviceFree: -1}
		if len(r.Samples) > 0 {
			first, last = r.Samples[min(1, len(r.Samples)-1)], r.Samples[len(r.Samples)-1]
		}
		free := "n/a"
		if first.DeviceFree >= 0 {
			free = fmt.Sprintf("%d -> %d", first.DeviceFree>>20, last.DeviceFree>>20)
		}
		rate := 0.0
		if r.Wall > 0 {
			rate = float64(r.Kernels) / r.Wall.Seconds()
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.1f | %.0f | %d -> %d | %d -> %d | %d/%d -> %d/%d | %d -> %d | %s | %d -> %d | %d -> %d | %s | %s |\n",
			r.Scheduler, r.Workload, r.Kernels, r.Rounds, r.Wall.Seconds(), rate,
			first.Streams, last.Streams, first.Events, last.Events, first.Graphs, first.Execs, last.Graphs, last.Execs,
			first.Buffers, last.Buffers, free, first.HeapInuse>>20, last.HeapInuse>>20, first.RSS>>20, last.RSS>>20,
			orNone(r.Growth), r.Err)
	}
	raw, _ := json.MarshalIndent(rs, "", "  ")
	b.WriteString("\n## Samples\n\n```json\n")
	b.Write(raw)
	b.WriteString("\n```\n")
	return b.Bytes()
}
