package calibrate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
)

// ProfileOptions bound a profiling run; zero fields take the defaults.
type ProfileOptions struct {
	// Budget is the device time (summed Host.Now over the runs) after
	// which optional points, the extra sizes of a kernel, are skipped.
	// Twice the budget skips everything left. Default 90 s.
	Budget time.Duration
	// MaxSizes is the most launches of one kernel measured at their own
	// occupancy, spread over its sizes (default 24).
	MaxSizes int
	// MaxSweeps is the most launches of one kernel also measured at forced
	// occupancies (default 2: the largest grid and a middle one).
	MaxSweeps int
	// MaxOccupancies is the most forced occupancies per swept launch
	// (default 6).
	MaxOccupancies int
	// Samples is the timed samples per point (default 5).
	Samples int
	// BindBytes is the most device bytes of programs bound for optional
	// points (default 4 GiB); mandatory points bind what they need.
	BindBytes int64
	// Deadline, if not zero, is the wall-clock time after which every
	// point left is skipped (the profile of what was measured is still
	// returned): a guard for a GPU lent for minutes.
	Deadline time.Time
	// Source is recorded in the profile (the command line).
	Source string
	// Progress, if not nil, gets a line per program.
	Progress io.Writer
	// NoGateCheck keeps every sample as taken. Without it a sample is
	// taken again, behind a longer gate, when the host took longer to
	// enqueue it than its gate kernel spun (the GPU ran dry and the sample
	// timed the host); set it only to measure what the check changes.
	NoGateCheck bool
	// ColdL2 also measures every point cold: before each of Samples
	// single launches, a device-to-device copy between two scratch
	// buffers of twice the device's L2 cache evicts the launch's inputs
	// (ProfilePoint.ColdNs), and the same launch again right after times
	// it warm at the same launch count (ProfilePoint.RewarmNs).
	ColdL2 bool
}

func (o ProfileOptions) withDefaults() ProfileOptions {
	if o.Budget <= 0 {
		o.Budget = 90 * time.Second
	}
	if o.MaxSizes <= 0 {
		o.MaxSizes = 24
	}
	if o.MaxSweeps <= 0 {
		o.MaxSweeps = 2
	}
	if o.MaxOccupancies <= 0 {
		o.MaxOccupancies = 6
	}
	if o.Samples <= 0 {
		o.Samples = 5
	}
	if o.BindBytes <= 0 {
		o.BindBytes = 4 << 30
	}
	return o
}

// ProfileSummary is what a profiling run did.
type ProfileSummary struct {
	Programs, Distinct, Kernels int   // programs bound, distinct launches seen, kernels
	Points, Skipped             int   // points measured, points skipped (for the time budget, a padding limit or the bind budget)
	BindSkipped                 int   // of Skipped, the optional points left out since their programs exceeded BindBytes
	BoundBytes                  int64 // device bytes of the programs bound
	DeviceTime                  time.Duration
	Retaken                     int // samples taken again behind a longer gate: the host enqueued slower than the gate hid (NoGateCheck)
}

// Times of the profiling samples: each sample runs behind a gate kernel
// long enough for the host to enqueue it, and lasts about sampleNs.
const (
	gateBaseNs     = 20e3
	gatePerLaunch  = 8e3 // host time to enqueue one launch, with margin
	sampleNs       = 40e3
	maxLaunchesPer = 64
	gateRetries    = 3 // most times a sample is taken again behind a longer gate
)

// launchKey identifies a distinct launch as a profile point records it
// (blocks and threads per block, not their shapes): its scalar arguments
// too (sim.ScalarSignature), which can change its time at the same Work
// (a 1x7 and a 7x1 convolution).
type launchKey struct {
	kernel        string
	grid, threads int
	shared        int
	work          device.Work
	scalars       string
}

// site is a distinct launch and the program ops that make it.
type site struct {
	key         launchKey
	grid, block device.Dim3 // of its first op
	kernel      *device.Kernel
	at          []opRef // every op making it, smallest program first
}

// opRef is an op of a program: its index in the program list and its
// flat op index.
type opRef struct{ prog, op int }

// size orders a kernel's launches: blocks times per-block work.
func (s *site) size() float64 {
	w := s.key.work
	return float64(s.key.grid) * (w.Cycles + w.Flops + w.Bytes + 1)
}

// task is one point to measure: a site at its own occupancy (perSM 0) or
// at a forced one.
type task struct {
	s        *site
	op       int // the flat op index that makes it in the program measuring it
	perSM    int
	optional bool
}

// ProfileKernels measures, alone on dev, the distinct kernel launches the
// programs make (a bounded, spread subset of each kernel's sizes, and a
// sweep over forced occupancies of up to MaxSweeps launches per kernel),
// and returns the profile with its models fitted (FitProfile).
func ProfileKernels(dev device.Device, progs []*workloads.Program, opt ProfileOptions) (*sim.Profile, *ProfileSummary, error) {
	opt = opt.withDefaults()
	info := dev.Info()
	if opt.ColdL2 && info.L2Bytes <= 0 {
		return nil, nil, fmt.Errorf("profile: cold-L2 points need the device's L2 size, and %s reports none", info.Name)
	}
	p := &profiler{dev: dev, info: info, opt: opt, sum: &ProfileSummary{}}
	if err := p.kernels(); err != nil {
		return nil, nil, err
	}
	sites, kernels, bytes := distinctLaunches(progs)
	p.sum.Distinct, p.sum.Kernels = len(sites), len(kernels)
	byProg := p.plan(kernels, bytes)
	prof := &sim.Profile{Device: info.Name, SMs: info.SMs, L2Bytes: info.L2Bytes, ClockHz: info.ClockHz, Source: opt.Source}
	if err := dev.Run(func(h device.Host) error {
		err := p.overheads(h, prof)
		p.spent += h.Now()
		return err
	}); err != nil {
		return nil, nil, fmt.Errorf("profile: launch overheads: %w", err)
	}
	points := map[string][]sim.ProfilePoint{}
	order := make([]int, 0, len(byProg))
	for pi := range byProg {
		order = append(order, pi)
	}
	sort.Ints(order)
	filled, stop := prefillAll(progs, order)
	defer stop()
	for i, pi := range order {
		if p.late() || p.spent > 2*p.opt.Budget {
			for _, rest := range order[i:] { // the filler sends in order: stop here
				p.sum.Skipped += len(byProg[rest])
			}
			break
		}
		prog, ok := p.next(filled)
		if !ok {
			for _, rest := range order[i:] {
				p.sum.Skipped += len(byProg[rest])
			}
			break
		}
		if err := p.program(prog, byProg[pi], points); err != nil {
			return nil, nil, fmt.Errorf("profile: %s: %w", progs[pi].Name, err)
		}
	}
	for _, name := range sortedKeys(kernels) {
		if len(points[name]) == 0 {
			continue
		}
		k := kernels[name][0].kernel
		prof.Kernels = append(prof.Kernels, sim.KernelProfile{Kernel: name, Regs: k.Regs, StaticShared: k.StaticShared, Points: points[name]})
	}
	p.sum.DeviceTime = p.spent
	if err := FitProfile(prof); err != nil {
		return nil, nil, err
	}
	return prof, p.sum, nil
}

type profiler struct {
	dev   device.Device
	info  device.Info
	opt   ProfileOptions
	sum   *ProfileSummary
	spent time.Duration
	c     *calibrator  // for its kernels and helpers
	evict *device.Copy // the L2 eviction copy of a program being measured (ColdL2)
}

func (p *profiler) kernels() error {
	c, err := newCalibrator(p.dev, nil)
	if err != nil {
		return err
	}
	p.c = c
	return nil
}

// distinctLaunches lists every distinct kernel launch of the programs, by
// kernel name, each with every op that makes it, the smallest program (in
// device bytes) first; bytes is each program's device bytes.
func distinctLaunches(progs []*workloads.Program) (sites map[launchKey]*site, kernels map[string][]*site, bytes []int64) {
	bytes = make([]int64, len(progs))
	for i, p := range progs {
		for _, b := range p.Buffers {
			bytes[i] += b.Bytes
		}
	}
	sites = map[launchKey]*site{}
	for pi, p := range progs {
		flat := 0
		for _, st := range p.Steps {
			for _, op := range st.Ops {
				if op.Kind == workloads.OpKernel && op.Kernel != nil {
					key := launchKey{sim.KernelKey(op.Kernel), op.Grid.Count(), op.Block.Count(), op.SharedMem, op.Work, scalarSignature(op.Args)}
					s := sites[key]
					if s == nil {
						s = &site{key: key, grid: op.Grid, block: op.Block, kernel: op.Kernel}
						sites[key] = s
					}
					if len(s.at) == 0 || s.at[len(s.at)-1].prog != pi {
						s.at = append(s.at, opRef{pi, flat})
					}
				}
				flat++
			}
		}
	}
	kernels = map[string][]*site{}
	for _, s := range sites {
		sort.SliceStable(s.at, func(i, j int) bool { return bytes[s.at[i].prog] < bytes[s.at[j].prog] })
		kernels[s.key.kernel] = append(kernels[s.key.kernel], s)
	}
	for _, ss := range kernels {
		sort.Slice(ss, func(i, j int) bool { return siteLess(ss[i], ss[j]) })
	}
	return sites, kernels, bytes
}

// siteLess orders a kernel's launches by size, then by every field, so
// that the order never depends on map iteration.
func siteLess(a, b *site) bool {
	if a.size() != b.size() {
		return a.size() < b.size()
	}
	ka, kb := a.key, b.key
	for _, d := range [][2]float64{
		{float64(ka.grid), float64(kb.grid)}, {float64(ka.threads), float64(kb.threads)},
		{float64(ka.shared), float64(kb.shared)}, {ka.work.Cycles, kb.work.Cycles}, {ka.work.Flops, kb.work.Flops}, {ka.work.Bytes, kb.work.Bytes},
	} {
		if d[0] != d[1] {
			return d[0] < d[1]
		}
	}
	if ka.scalars != kb.scalars {
		return ka.scalars < kb.scalars
	}
	if a.at[0].prog != b.at[0].prog {
		return a.at[0].prog < b.at[0].prog
	}
	return a.at[0].op < b.at[0].op
}

// scalarSignature is the signature of a program op's scalar arguments.
func scalarSignature(specs []workloads.ArgSpec) string {
	var args []device.Arg
	for _, a := range specs {
		if a.Buf < 0 {
			args = append(args, device.Arg{Kind: device.ArgScalar, Bits: a.Bits, Size: a.Size})
		}
	}
	return sim.ScalarSignature(args)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// planner chooses the program that measures each site: one already
// chosen when the site's launch is in one, else the smallest, within
// bindBytes for optional points.
type planner struct {
	bytes     []int64
	chosen    map[int]bool
	bound     int64
	bindBytes int64
	byProg    map[int][]task
	dropped   int // optional points left out for bindBytes
}

// add plans t; an optional point whose programs are all unchosen and
// would exceed the bind budget is left out, and counted.
func (pl *planner) add(t task) {
	s := t.s
	ref := s.at[0]
	found := false
	for _, r := range s.at {
		if pl.chosen[r.prog] {
			ref, found = r, true
			break
		}
	}
	if !found {
		if t.optional && pl.bound+pl.bytes[ref.prog] > pl.bindBytes {
			pl.dropped++
			return
		}
		pl.chosen[ref.prog] = true
		pl.bound += pl.bytes[ref.prog]
	}
	t.op = ref.op
	pl.byProg[ref.prog] = append(pl.byProg[ref.prog], t)
}

// plan picks each kernel's points and groups them by program, the
// mandatory ones (the swept launches, or one middle size) first.
func (p *profiler) plan(kernels map[string][]*site, bytes []int64) map[int][]task {
	pl := &planner{bytes: bytes, chosen: map[int]bool{}, bindBytes: p.opt.BindBytes, byProg: map[int][]task{}}
	var optional []task
	for _, name := range sortedKeys(kernels) {
		ss := kernels[name]
		sweeps := p.sweepSites(ss)
		mandatory := map[*site]bool{}
		for _, s := range sweeps {
			mandatory[s] = true
			pl.add(task{s: s})
			own, _ := p.info.Occupancy(p.launchOf(s))
			for _, k := range forcedOccupancies(own, p.opt.MaxOccupancies) {
				pl.add(task{s: s, perSM: k})
			}
		}
		if len(sweeps) == 0 {
			mid := ss[len(ss)/2]
			mandatory[mid] = true
			pl.add(task{s: mid})
		}
		for _, s := range spread(ss, p.opt.MaxSizes) {
			if !mandatory[s] {
				optional = append(optional, task{s: s, optional: true})
			}
		}
	}
	for _, t := range optional {
		pl.add(t)
	}
	p.sum.BoundBytes = pl.bound
	p.sum.BindSkipped = pl.dropped
	p.sum.Skipped += pl.dropped
	return pl.byProg
}

// sweepSites are the launches of a kernel measured at forced
// occupancies: those with more blocks than SMs and room for two or more
// per SM; the largest grid, then the one nearest the middle grid.
func (p *profiler) sweepSites(ss []*site) []*site {
	var cands []*site
	for _, s := range ss {
		own, _ := p.info.Occupancy(p.launchOf(s))
		if s.key.grid > p.info.SMs && own >= 2 {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].key.grid < cands[j].key.grid })
	out := []*site{cands[len(cands)-1]}
	if mid := cands[len(cands)/2]; p.opt.MaxSweeps >= 2 && mid != out[0] {
		out = append(out, mid)
	}
	return out
}

// launchOf is a site's launch without buffers, for occupancy.
func (p *profiler) launchOf(s *site) *device.Launch {
	return &device.Launch{Kernel: s.kernel, Grid: s.grid, Block: s.block, SharedMem: s.key.shared}
}

// spread picks at most n of ss, evenly over their order (both ends
// included).
func spread(ss []*site, n int) []*site {
	if len(ss) <= n {
		return ss
	}
	var out []*site
	last := -1
	for i := 0; i < n; i++ {
		j := int(math.Round(float64(i) * float64(len(ss)-1) / float64(n-1)))
		if j != last {
			out = append(out, ss[j])
			last = j
		}
	}
	return out
}

// forcedOccupancies are the blocks per SM a sweep forces below a launch's
// own occupancy own: every one from 1 when at most max, else max of them
// spread geometrically, 1 and 2 included.
func forcedOccupancies(own, maxN int) []int {
	if own-1 <= maxN {
		var ks []int
		for k := 1; k < own; k++ {
			ks = append(ks, k)
		}
		return ks
	}
	ks := []int{1, 2}
	for i := 1; len(ks) < maxN; i++ {
		k := int(math.Round(math.Pow(float64(own-1), float64(i+1)/float64(maxN))))
		if k > ks[len(ks)-1] && k < own {
			ks = append(ks, k)
		}
		if i > 4*maxN {
			break
		}
	}
	return ks
}
