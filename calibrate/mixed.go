package calibrate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/stats"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// MixedKinds are the kernels the mixed co-residency probe pairs, by their
// resource class: each is taken from the programs at its launch of the
// longest blocks whose grid covers every SM. The spinner (cal_spin_stamp)
// is added to them.
var MixedKinds = []struct{ Class, Kernel string }{
	{"gemm", "tiles.tiles_gemm_128x128"},
	{"elementwise", "nn.nn_binary"},
	{"reduction", "nn.nn_global_avgpool"},
	{"conv", "nn.nn_conv2d"},
	{"synth", "synthetic.synth_node"},
}

// Figures of the mixed co-residency probe.
const (
	mixedMaxPerSM = 4       // most blocks per SM of one kernel of a pair
	mixedSpinMin  = 20e3    // shortest spin of the spinner, ns
	mixedShadowNs = 20e3    // spin of the shadow pair's blocks, ns
	mixedClass    = "spin"  // the spinner's class
	mixedStamp    = "stamp" // residency read from the pair's own spinner
	mixedShadow   = "shadow"
)

// MixedKernel is one kernel of the probe as measured: its launch with the
// grid cut to a whole number of blocks per SM.
type MixedKernel struct {
	Class     string      `json:"class"`
	Kernel    string      `json:"kernel"`
	Program   string      `json:"program,omitempty"`
	Grid      int         `json:"grid"` // of the program's launch
	Threads   int         `json:"threads"`
	Shared    int         `json:"shared"`    // static + dynamic bytes per block
	Occupancy int         `json:"occupancy"` // blocks per SM alone
	Limiter   string      `json:"limiter"`
	Work      device.Work `json:"work"` // per block
}

// MixedResidency is what stamps show of a pair's placement: from the
// pair's own spinner (stamp: its blocks' SMs, so the other kernel's blocks
// ran beside it wherever its span covered theirs) or from a shadow pair
// (two spinners of the pair's grids, threads and shared memory, released
// the same way); none on a device whose kernels write nothing (the
// simulator).
type MixedResidency struct {
	Source string `json:"source"`
	// BothSMs is the SMs that held blocks of both at one instant (shadow)
	// or the spinner's blocks for the other kernel's whole span (stamp).
	BothSMs  int    `json:"both_sms"`
	SMs      int    `json:"sms"`
	MinPerSM [2]int `json:"min_per_sm"` // blocks per SM of each, least
	MaxPerSM [2]int `json:"max_per_sm"` // and most
}

// MixedPair is one pair measured: each kernel alone and both released at
// once on two streams, per round (Host.Elapsed from the release to each
// kernel's end).
type MixedPair struct {
	A        string    `json:"a"`
	B        string    `json:"b"`
	PerSM    [2]int    `json:"per_sm"` // blocks per SM of each (grid = SMs x PerSM)
	SpinNs   float64   `json:"spin_ns,omitempty"`
	AloneA   []float64 `json:"alone_a"`
	AloneB   []float64 `json:"alone_b"`
	WithA    []float64 `json:"with_a"` // A's span beside B
	WithB    []float64 `json:"with_b"`
	Together []float64 `json:"together"` // both done
	// Medians: Slowdown is each one's span beside the other over its
	// span alone; Overlap is (alone A + alone B - together) / the shorter
	// alone: 1 when the shorter hid entirely beside the longer, 0 when
	// they serialized.
	Slowdown  [2]float64     `json:"slowdown"`
	Overlap   float64        `json:"overlap"`
	Residency MixedResidency `json:"residency"`
}

// MixedReport is the probe's output.
type MixedReport struct {
	Device  string        `json:"device"`
	Info    device.Info   `json:"info"`
	Source  string        `json:"source"`
	Rounds  int           `json:"rounds"`
	Kernels []MixedKernel `json:"kernels"`
	Pairs   []MixedPair   `json:"pairs"`
	Notes   []string      `json:"notes"`
}

// mixedLaunch is a kernel of the probe bound and ready to cut.
type mixedLaunch struct {
	k    MixedKernel
	base device.Launch
}

// MixedCoResidency measures what two different kernels co-resident on
// every SM cost each other: each pair of MixedKinds' kernels found in
// progs (and each with a spinner) at grids of a whole number of blocks
// per SM (half its occupancy alone, at most mixedMaxPerSM, lowered until
// both fit one SM together), alone and released at once on two streams,
// with stamps of which SMs held whose blocks. Each of spinShared adds a
// spinner whose blocks take that many bytes of dynamic shared memory
// (class spinNk, N its KB): beside kernels with and without shared
// memory it shows which shared-memory carve-out an SM's first kernel set.
func MixedCoResidency(dev device.Device, progs []*workloads.Program, source string, progress io.Writer, spinShared ...int) (*MixedReport, error) {
	c, err := newCalibrator(dev, progress)
	if err != nil {
		return nil, err
	}
	stamp, err := stampKernel()
	if err != nil {
		return nil, err
	}
	rep := &MixedReport{Device: c.info.Name, Info: c.info, Source: source, Rounds: c.rounds}
	chosen := chooseMixed(c.info, progs, rep)
	err = dev.Run(func(h device.Host) (err error) {
		ls, release, err := bindMixed(h, &c.info, progs, chosen)
		defer func() { err = errors.Join(err, release()) }()
		if err != nil {
			return err
		}
		m := &mixedRun{c: c, h: h, stamp: stamp}
		if err := m.init(); err != nil {
			return err
		}
		for _, l := range ls {
			rep.Kernels = append(rep.Kernels, l.k)
		}
		spin := &mixedLaunch{k: MixedKernel{Class: mixedClass, Kernel: sim.KernelKey(stamp), Threads: 128}}
		spin.base = device.Launch{Kernel: stamp, Block: device.D1(128), Label: "cal_spin_stamp"}
		spin.k.Occupancy, spin.k.Limiter = c.info.Occupancy(&spin.base)
		rep.Kernels = append(rep.Kernels, spin.k)
		all := append(ls, spin)
		for _, sh := range spinShared {
			s := &mixedLaunch{k: MixedKernel{Class: fmt.Sprintf("%s%dk", mixedClass, sh/1000), Kernel: spin.k.Kernel, Threads: 128, Shared: sh}}
			s.base = spin.base
			s.base.SharedMem = sh
			s.k.Occupancy, s.k.Limiter = c.info.Occupancy(&s.base)
			rep.Kernels = append(rep.Kernels, s.k)
			all = append(all, s)
		}
		for i := range all {
			for j := range all {
				if i == j && isSpinner(all[i].k.Class) {
					continue // a spinner beside itself is the spin
				}
				p, ok, err := m.pair(all[i], all[j])
				if err != nil {
					return fmt.Errorf("%s beside %s: %w", all[i].k.Class, all[j].k.Class, err)
				}
				if !ok {
					rep.Notes = append(rep.Notes, fmt.Sprintf("%s and %s do not fit one SM together: not measured", all[i].k.Class, all[j].k.Class))
					continue
				}
				rep.Pairs = append(rep.Pairs, p)
				m.progressLine(p)
			}
		}
		return h.Synchronize()
	})
	if err != nil {
		return nil, fmt.Errorf("calibrate: mixed co-residency: %w", err)
	}
	return rep, nil
}

// chooseMixed picks, for each of MixedKinds found in progs, the launch of
// median per-block work among those whose grid can be cut to half its
// occupancy per SM (at most mixedMaxPerSM), else to one block per SM;
// a kind not found is noted.
func chooseMixed(info device.Info, progs []*workloads.Program, rep *MixedReport) []*site {
	_, kernels, _ := distinctLaunches(progs)
	var out []*site
	for _, kind := range MixedKinds {
		var full, one []*site
		for _, s := range kernels[kind.Kernel] {
			l := device.Launch{Kernel: s.kernel, Block: s.block, SharedMem: s.key.shared}
			occ, _ := info.Occupancy(&l)
			if _, ok := cutGrid(s.grid, info.SMs*min(max(1, occ/2), mixedMaxPerSM)); ok {
				full = append(full, s)
			} else if _, ok := cutGrid(s.grid, info.SMs); ok {
				one = append(one, s)
			}
		}
		if len(full) == 0 {
			full = one
		}
		if len(full) == 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s (%s): no launch in the programs covers every SM", kind.Class, kind.Kernel))
			continue
		}
		sort.SliceStable(full, func(i, j int) bool { return blockWork(full[i].key.work) < blockWork(full[j].key.work) })
		out = append(out, full[len(full)/2])
	}
	return out
}

func blockWork(w device.Work) float64 { return w.Cycles + w.Flops + w.Bytes }

// classOf is the class MixedKinds gives kernel.
func classOf(kernel string) string {
	for _, k := range MixedKinds {
		if k.Kernel == kernel {
			return k.Class
		}
	}
	return ""
}

// bindMixed binds the programs of the chosen launches (once each), runs
// each once in order so that its buffers hold what its kernels see, and
// returns the launches; release frees the programs.
func bindMixed(h device.Host, info *device.Info, progs []*workloads.Program, chosen []*site) ([]*mixedLaunch, func() error, error) {
	insts := map[int]*workloads.Instance{}
	release := func() error {
		var err error
		for _, in := range insts {
			err = errors.Join(err, in.Release(h))
		}
		return err
	}
	s, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return nil, release, err
	}
	var out []*mixedLaunch
	for _, st := range chosen {
		ref := st.at[0]
		in := insts[ref.prog]
		if in == nil {
			if in, err = workloads.Bind(h, progs[ref.prog]); err != nil {
				return nil, release, err
			}
			insts[ref.prog] = in
			for k := 0; k < in.N(); k++ {
				if err := in.Issue(h, s, k); err != nil {
					return nil, release, err
				}
			}
			if err := h.StreamSynchronize(s); err != nil {
				return nil, release, err
			}
		}
		l := *in.Launch(ref.op)
		k := MixedKernel{Class: classOf(st.key.kernel), Kernel: st.key.kernel, Program: progs[ref.prog].Name,
			Grid: l.Grid.Count(), Threads: l.Block.Count(), Shared: l.SharedMem + l.Kernel.StaticShared, Work: l.Work}
		k.Occupancy, k.Limiter = info.Occupancy(&l)
		out = append(out, &mixedLaunch{k: k, base: l})
	}
	return out, release, nil
}

// cutGrid is a grid of exactly n blocks no larger than g in any
// dimension (so a kernel that derives its indices from blockIdx and
// gridDim stays in its buffers); ok is false when none is.
func cutGrid(g device.Dim3, n int) (device.Dim3, bool) {
	if g.Z != 1 || g.Count() < n {
		return device.Dim3{}, false
	}
	for x := min(g.X, n); x >= 1; x-- {
		if n%x == 0 && n/x <= g.Y {
			return device.D2(x, n/x), true
		}
	}
	return device.Dim3{}, false
}

// sized is l's launch at perSM blocks per SM; the spinner spins spinNs
// and stamps into stamps. synth_node's element count (its grid-stride
// loop's bound) follows the grid, so that each thread keeps one element.
func (m *mixedRun) sized(l *mixedLaunch, perSM int, spinNs float64, stamps device.Buffer) (*device.Launch, bool) {
	n := m.c.info.SMs * perSM
	out := l.base
	if isSpinner(l.k.Class) {
		out.Grid = device.D1(n)
		out.Args = []device.Arg{device.U64(uint64(spinNs)), device.Out(stamps)}
		out.Work = device.Work{Cycles: spinNs * float64(m.c.info.ClockHz) / 1e9}
		return &out, true
	}
	g, ok := cutGrid(l.base.Grid, n)
	if !ok {
		return nil, false
	}
	out.Grid = g
	if l.k.Kernel == "synthetic.synth_node" {
		out.Args = append([]device.Arg(nil), l.base.Args...)
		out.Args[len(out.Args)-2] = device.I32(int32(n * out.Block.Count()))
	}
	return &out, true
}

// fitTogether lowers the larger of the two blocks-per-SM counts until a
// and b blocks fit one SM together; ok is false when one of each does not.
func fitTogether(info *device.Info, la, lb *device.Launch, a, b int) (int, int, bool) {
	ra, rb := info.Resources(la), info.Resources(lb)
	fits := func(a, b int) bool {
		return a*ra.Threads+b*rb.Threads <= info.MaxThreadsPerSM && a*ra.Warps+b*rb.Warps <= info.MaxWarpsPerSM &&
			a*ra.Registers+b*rb.Registers <= info.RegistersPerSM && a*ra.Shared+b*rb.Shared <= info.SharedPerSM &&
			a+b <= info.MaxBlocksPerSM
	}
	for a >= 1 && b >= 1 {
		if fits(a, b) {
			return a, b, true
		}
		if a >= b {
			a--
		} else {
			b--
		}
	}
	return 0, 0, false
}

// stampRecord is one block's stamp: its SM and its start and end on the
// global timer.
type stampRecord struct{ sm, start, end uint64 }

func parseStamps(b []byte, blocks int) ([]stampRecord, bool) {
	out := make([]stampRecord, blocks)
	stamped := false
	for i := range out {
		o := 24 * i
		out[i] = stampRecord{binary.LittleEndian.Uint64(b[o:]), binary.LittleEndian.Uint64(b[o+8:]), binary.LittleEndian.Uint64(b[o+16:])}
		stamped = stamped || out[i].end != 0
	}
	return out, stamped
}

// shadowResidency is the placement two stamped spinners' blocks show: per
// SM, how many of each, and whether blocks of both were resident at one
// instant (the latest start before the earliest end).
func shadowResidency(a, b []stampRecord, sms int) MixedResidency {
	type slot struct {
		n           [2]int
		start, stop [2]uint64
	}
	per := map[uint64]*slot{}
	for side, recs := range [2][]stampRecord{a, b} {
		for _, r := range recs {
			s := per[r.sm]
			if s == nil {
				s = &slot{}
				per[r.sm] = s
			}
			if s.n[side] == 0 || r.start > s.start[side] {
				s.start[side] = r.start // the latest start
			}
			if s.n[side] == 0 || r.end < s.stop[side] {
				s.stop[side] = r.end // the earliest end
			}
			s.n[side]++
		}
	}
	res := MixedResidency{Source: mixedShadow, SMs: sms, MinPerSM: [2]int{1 << 30, 1 << 30}}
	keys := make([]uint64, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		s := per[k]
		if s.n[0] > 0 && s.n[1] > 0 && max(s.start[0], s.start[1]) < min(s.stop[0], s.stop[1]) {
			res.BothSMs++
		}
	}
	for side := 0; side < 2; side++ {
		for _, k := range keys {
			res.MinPerSM[side] = min(res.MinPerSM[side], per[k].n[side])
			res.MaxPerSM[side] = max(res.MaxPerSM[side], per[k].n[side])
		}
		if len(keys) < sms {
			res.MinPerSM[side] = 0 // an SM held no block of either
		}
	}
	return res
}

// mixedRun is the probe's device state: two streams released at once
// behind a gate, their events, and two stamp buffers with a host copy.
type mixedRun struct {
	c          *calibrator
	h          device.Host
	stamp      *device.Kernel
	ss         *streamSet
	end1       device.Event // stream 1's end (stream 0's is ss.t.e1)
	stamps     [2]device.Buffer
	host       *device.HostMem
	stampBytes int64
}

func stampKernel() (*device.Kernel, error) { return kernels.Lookup("calibrate", "cal_spin_stamp") }

func (m *mixedRun) init() error {
	var err error
	if m.ss, err = newStreamSet(m.h, 2); err != nil {
		return err
	}
	if m.end1, err = m.h.NewEvent(device.EventOptions{}); err != nil {
		return err
	}
	m.stampBytes = int64(24 * m.c.info.SMs * m.c.info.MaxBlocksPerSM)
	for i := range m.stamps {
		if m.stamps[i], err = m.h.Malloc(m.stampBytes); err != nil {
			return err
		}
	}
	m.host, err = m.h.AllocHost(m.stampBytes, true)
	return err
}

// spans releases a (stream 0) and b (stream 1) at once behind a gate and
// returns each one's span from the release to its end; either may be nil
// (alone: b alone still goes through stream 1, as beside a).
func (m *mixedRun) spans(a, b *device.Launch) (sa, sb float64, err error) {
	h, ss := m.h, m.ss
	if err := h.Launch(ss.t.s, m.c.spinLaunch(gateSpin, ss.t.done)); err != nil {
		return 0, 0, err
	}
	if err := h.Record(ss.t.e0, ss.t.s); err != nil {
		return 0, 0, err
	}
	if err := h.Record(ss.fork, ss.t.s); err != nil {
		return 0, 0, err
	}
	if err := h.Wait(ss.stream(1), ss.fork); err != nil {
		return 0, 0, err
	}
	if a != nil {
		if err := h.Launch(ss.t.s, a); err != nil {
			return 0, 0, err
		}
	}
	if err := h.Record(ss.t.e1, ss.t.s); err != nil {
		return 0, 0, err
	}
	if b != nil {
		if err := h.Launch(ss.stream(1), b); err != nil {
			return 0, 0, err
		}
	}
	if err := h.Record(m.end1, ss.stream(1)); err != nil {
		return 0, 0, err
	}
	if err := h.Synchronize(); err != nil {
		return 0, 0, err
	}
	da, err := h.Elapsed(ss.t.e0, ss.t.e1)
	if err != nil {
		return 0, 0, err
	}
	db, err := h.Elapsed(ss.t.e0, m.end1)
	return ns(da), ns(db), err
}

// gateSpin holds both streams while the host enqueues a pair.
const gateSpin = 40e3 // ns

// readStamps copies stamp buffer i back and parses its first blocks.
func (m *mixedRun) readStamps(i, blocks int) ([]stampRecord, bool, error) {
	s := m.ss.t.s
	if err := m.h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: m.stamps[i], Host: m.host, Bytes: m.stampBytes}); err != nil {
		return nil, false, err
	}
	if err := m.h.StreamSynchronize(s); err != nil {
		return nil, false, err
	}
	recs, stamped := parseStamps(m.host.Data, blocks)
	return recs, stamped, nil
}

// pair measures a beside b, a released first (ok false when one block of
// each does not fit one SM together).
func (m *mixedRun) pair(a, b *mixedLaunch) (MixedPair, bool, error) {
	pa, pb, ok := m.pairPerSM(a, b)
	if !ok {
		return MixedPair{}, false, nil
	}
	p := MixedPair{A: a.k.Class, B: b.k.Class, PerSM: [2]int{pa, pb}}
	la, lb, err := m.pairLaunches(a, b, &p)
	if err != nil {
		return p, false, err
	}
	if err := m.c.warmRounds(func(measured bool) error {
		ta, _, err := m.spans(la, nil)
		if err != nil {
			return err
		}
		_, tb, err := m.spans(nil, lb)
		if err != nil {
			return err
		}
		wa, wb, err := m.spans(la, lb)
		if err != nil {
			return err
		}
		if measured {
			p.AloneA, p.AloneB = append(p.AloneA, ta), append(p.AloneB, tb)
			p.WithA, p.WithB, p.Together = append(p.WithA, wa), append(p.WithB, wb), append(p.Together, max(wa, wb))
		}
		return nil
	}); err != nil {
		return p, false, err
	}
	ma, mb := stats.Median(p.AloneA), stats.Median(p.AloneB)
	p.Slowdown = [2]float64{stats.Median(p.WithA) / ma, stats.Median(p.WithB) / mb}
	p.Overlap = (ma + mb - stats.Median(p.Together)) / min(ma, mb)
	res, err := m.residency(a, b, la, lb, p)
	p.Residency = res
	return p, true, err
}

// pairPerSM is each one's blocks per SM in the pair: its own (perSM),
// lowered until both fit one SM together and each grid can be cut so.
func (m *mixedRun) pairPerSM(a, b *mixedLaunch) (int, int, bool) {
	pa, pb := m.perSM(a), m.perSM(b)
	la, _ := m.sized(a, pa, mixedSpinMin, m.stamps[0])
	lb, _ := m.sized(b, pb, mixedSpinMin, m.stamps[1])
	pa, pb, ok := fitTogether(&m.c.info, la, lb, pa, pb)
	if !ok {
		return 0, 0, false
	}
	for ; pa > 1; pa-- {
		if _, ok := m.sized(a, pa, mixedSpinMin, m.stamps[0]); ok {
			break
		}
	}
	for ; pb > 1; pb-- {
		if _, ok := m.sized(b, pb, mixedSpinMin, m.stamps[1]); ok {
			break
		}
	}
	return pa, pb, true
}

// pairLaunches are the pair's launches; a spinner spins twice its
// partner's time alone (at least mixedSpinMin), so it outlasts it.
func (m *mixedRun) pairLaunches(a, b *mixedLaunch, p *MixedPair) (la, lb *device.Launch, err error) {
	la, _ = m.sized(a, p.PerSM[0], mixedSpinMin, m.stamps[0])
	lb, _ = m.sized(b, p.PerSM[1], mixedSpinMin, m.stamps[1])
	switch {
	case isSpinner(a.k.Class):
		_, alone, err := m.spans(nil, lb)
		if err != nil {
			return nil, nil, err
		}
		p.SpinNs = max(mixedSpinMin, 2*alone)
		la, _ = m.sized(a, p.PerSM[0], p.SpinNs, m.stamps[0])
	case isSpinner(b.k.Class):
		alone, _, err := m.spans(la, nil)
		if err != nil {
			return nil, nil, err
		}
		p.SpinNs = max(mixedSpinMin, 2*alone)
		lb, _ = m.sized(b, p.PerSM[1], p.SpinNs, m.stamps[1])
	}
	return la, lb, nil
}

// residency reads where the pair's blocks ran: the spinner's own stamps
// (its last run beside the other) when one is the spinner, else a shadow
// pair's.
func (m *mixedRun) residency(a, b *mixedLaunch, la, lb *device.Launch, p MixedPair) (MixedResidency, error) {
	sms := m.c.info.SMs
	for side, l := range [2]*mixedLaunch{a, b} {
		if !isSpinner(l.k.Class) {
			continue
		}
		grid, other := la.Grid.Count(), p.WithB
		if side == 1 {
			grid, other = lb.Grid.Count(), p.WithA
		}
		recs, stamped, err := m.readStamps(side, grid)
		if err != nil || !stamped {
			return MixedResidency{Source: "none", SMs: sms}, err
		}
		return spinnerResidency(recs, sms, other[len(other)-1], side), nil
	}
	shadow := func(l *device.Launch, i int) *device.Launch {
		s := &device.Launch{Kernel: m.stamp, Grid: device.D1(l.Grid.Count()), Block: l.Block, Label: "cal_spin_stamp",
			SharedMem: info0(m.c.info.Resources(l).Shared - m.c.info.SharedReserved)}
		s.Args = []device.Arg{device.U64(uint64(mixedShadowNs)), device.Out(m.stamps[i])}
		s.Work = device.Work{Cycles: mixedShadowNs * float64(m.c.info.ClockHz) / 1e9}
		return s
	}
	sa, sb := shadow(la, 0), shadow(lb, 1)
	if _, _, err := m.spans(sa, sb); err != nil {
		return MixedResidency{}, err
	}
	ra, anyA, err := m.readStamps(0, sa.Grid.Count())
	if err != nil {
		return MixedResidency{}, err
	}
	rb, anyB, err := m.readStamps(1, sb.Grid.Count())
	if err != nil || !anyA || !anyB {
		return MixedResidency{Source: "none", SMs: sms}, err
	}
	return shadowResidency(ra, rb, sms), nil
}

func info0(n int) int { return max(n, 0) }

// isSpinner reports whether class is the spinner's, with or without
// shared memory (spin, spinNk).
func isSpinner(class string) bool { return strings.HasPrefix(class, mixedClass) }

// perSM is l's blocks per SM before a pair lowers it: half its occupancy
// alone (at most mixedMaxPerSM), lowered until its grid can be cut so.
func (m *mixedRun) perSM(l *mixedLaunch) int {
	p := min(max(1, l.k.Occupancy/2), mixedMaxPerSM)
	for ; p > 1; p-- {
		if _, ok := m.sized(l, p, 0, m.stamps[0]); ok {
			break
		}
	}
	return p
}

// spinnerResidency: the SMs on which the spinner held a block from the
// release (its earliest start, give or take the dispatch of a wave, 2 us)
// to at least span later, the other kernel's span beside it; per SM, the
// spinner's blocks.
func spinnerResidency(recs []stampRecord, sms int, span float64, side int) MixedResidency {
	first := recs[0].start
	for _, r := range recs {
		first = min(first, r.start)
	}
	per := map[uint64]int{}
	held := map[uint64]bool{}
	for _, r := range recs {
		per[r.sm]++
		if r.start <= first+2000 && float64(r.end-first) >= span {
			held[r.sm] = true
		}
	}
	res := MixedResidency{Source: mixedStamp, SMs: sms, BothSMs: len(held)}
	res.MinPerSM[side] = 1 << 30
	for _, n := range per {
		res.MinPerSM[side] = min(res.MinPerSM[side], n)
		res.MaxPerSM[side] = max(res.MaxPerSM[side], n)
	}
	if len(per) < sms {
		res.MinPerSM[side] = 0
	}
	return res
}

func (m *mixedRun) progressLine(p MixedPair) {
	if m.c.progress == nil {
		return
	}
	// Progress is best effort: a lost line must not fail the probe.
	_, _ = fmt.Fprintf(m.c.progress, "calibrate: %-11s beside %-11s alone %8.0f %8.0f ns, beside %.3fx %.3fx, overlap %.2f, both on %d of %d SMs (%s)\n",
		p.A, p.B, stats.Median(p.AloneA), stats.Median(p.AloneB), p.Slowdown[0], p.Slowdown[1], p.Overlap,
		p.Residency.BothSMs, p.Residency.SMs, p.Residency.Source)
}
