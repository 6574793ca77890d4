package tilesync

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// Options configure the scheduler. "auto" follows the rule.
type Options struct {
	Policy           string `yaml:"policy"`            // auto, fine, stream, row, tile, strided, conv2d
	WaitKernel       string `yaml:"wait_kernel"`       // auto, on, off
	TileOrder        string `yaml:"tile_order"`        // auto, on, off
	IndependentFirst string `yaml:"independent_first"` // auto (on), on, off
	// MinGain is the rule's threshold: the smallest estimated gain, as a
	// fraction of the stream-ordered time, worth synchronizing for.
	MinGain float64 `yaml:"min_gain"`
	// PollSleepNS is the longest sleep, in nanoseconds, between two polls
	// of a waiting consumer block (exponential backoff from 32 ns; 0:
	// poll without sleeping).
	PollSleepNS int `yaml:"poll_sleep_ns"`
	// Phases records timing events at every operation's end (phases.go);
	// Stats then reports their median times after each run's start.
	Phases bool `yaml:"phases"`
	// BlocksPerSM caps every tile kernel the scheduler launches (both
	// kernels of a pair, every kernel in stream order) at this many
	// resident blocks per SM by padding its dynamic shared memory
	// (occupancy.go); 0 leaves occupancy to the kernels' own resources.
	BlocksPerSM int `yaml:"blocks_per_sm"`
	// ProducerAlone pads a synchronized producer's shared memory so that
	// no other block shares an SM with one of its blocks (occupancy.go).
	ProducerAlone bool `yaml:"producer_alone"`
	// TailRowsAt starts the consumer tiles that read the producer's last,
	// partial wave in this consumer round (1: ahead of every other tile)
	// instead of last, as the row order does (tailorder.go); 0 keeps the
	// row order. It needs the custom tile order.
	TailRowsAt int `yaml:"tail_rows_at"`
	// Probe ("" off; post, wait or all) issues a synchronized pair in
	// stream order with only some of its synchronization (probe.go): what
	// posting and polling cost a kernel that never waits.
	Probe string `yaml:"probe"`
}

// DefaultPollSleepNS caps the backoff of a waiting block's polls at 1 us:
// about two L2 round trips, so a released consumer starts at most that
// late (against tile times of tens to hundreds of microseconds), while a
// block waiting for a whole producer wave reads the counters a few hundred
// times instead of every round trip.
const DefaultPollSleepNS = 1000

// MaxPollSleepNS is the largest sleep the kernels' flags word carries.
const MaxPollSleepNS = 1<<16 - 1

// Defaults is the rule for everything.
func Defaults() Options {
	return Options{Policy: "auto", WaitKernel: "auto", TileOrder: "auto", IndependentFirst: "auto",
		MinGain: DefaultMinGain, PollSleepNS: DefaultPollSleepNS}
}

func tri(name, v string) (auto, on bool, err error) {
	switch v {
	case "auto":
		return true, false, nil
	case "on":
		return false, true, nil
	case "off":
		return false, false, nil
	}
	return false, false, fmt.Errorf("%s %q: want auto, on or off", name, v)
}

// Scheduler runs a program's producer/consumer pairs with tile
// synchronization (or, with policy stream, on one stream).
type Scheduler struct {
	opt    Options
	policy Policy
	auto   bool
	fine   bool // the finest policy the pair allows

	items      []item
	prodS      device.Stream
	consS      device.Stream
	evPre, evC device.Event
	bufs       []device.Buffer
	iter       uint32
	choices    []string
	ph         *phaseTimer // Options.Phases
}

type item struct {
	op     int            // flat index: a solo operation, or the producer of pr
	pr     *pairRun       // nil for a solo operation
	padded *device.Launch // a solo kernel's launch under Options.BlocksPerSM; nil: as the program has it
}

type pairRun struct {
	pair         *Pair
	choice       Choice
	prodL, consL device.Launch
	waitL        device.Launch
	consSync     *ConsumerSync
	waitSync     *WaitKernelSync
	// presetWaits: the consumer's counters start complete (probe wait),
	// so the simulator sees targets of 0.
	presetWaits bool
}

// New checks opt and builds a scheduler.
func New(opt Options) (*Scheduler, error) {
	s := &Scheduler{opt: opt}
	if opt.Phases {
		s.ph = &phaseTimer{}
	}
	switch opt.Policy {
	case "auto":
		s.auto = true
	case "fine":
		s.fine = true
	default:
		p, err := ParsePolicy(opt.Policy)
		if err != nil {
			return nil, err
		}
		s.policy = p
	}
	for _, o := range []struct{ n, v string }{{"wait_kernel", opt.WaitKernel}, {"tile_order", opt.TileOrder}, {"independent_first", opt.IndependentFirst}} {
		if _, _, err := tri(o.n, o.v); err != nil {
			return nil, err
		}
	}
	if err := checkMinGain(opt.MinGain); err != nil {
		return nil, err
	}
	if opt.PollSleepNS < 0 || opt.PollSleepNS > MaxPollSleepNS {
		return nil, fmt.Errorf("poll_sleep_ns %d: want 0 (spin) to %d", opt.PollSleepNS, MaxPollSleepNS)
	}
	if opt.BlocksPerSM < 0 {
		return nil, fmt.Errorf("blocks_per_sm %d: want 0 (as the kernels' resources allow) or a positive cap", opt.BlocksPerSM)
	}
	if opt.TailRowsAt < 0 {
		return nil, fmt.Errorf("tail_rows_at %d: want 0 (row order) or a consumer round from 1", opt.TailRowsAt)
	}
	if opt.TailRowsAt > 0 && opt.TileOrder == "off" {
		return nil, fmt.Errorf("tail_rows_at %d: the consumer's order table needs the custom tile order (tile_order off)", opt.TailRowsAt)
	}
	if opt.TailRowsAt > 0 && s.isStream() {
		return nil, fmt.Errorf("tail_rows_at: policy stream has no consumer beside the producer's tail; give a synchronizing policy")
	}
	if opt.ProducerAlone && s.isStream() {
		return nil, fmt.Errorf("producer_alone: policy stream runs no producer beside its consumer; give a synchronizing policy")
	}
	if err := checkProbe(opt, s.isStream()); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Scheduler) isStream() bool { return !s.auto && !s.fine && s.policy == StreamSync }

// Name implements sched.Scheduler.
func (s *Scheduler) Name() string {
	if s.isStream() && s.ph == nil && !s.opt.shaping() {
		return "stream-sync"
	}
	name := fmt.Sprintf("tilesync(policy=%s,wait=%s,order=%s,indep=%s,min_gain=%g,poll_sleep_ns=%d", s.opt.Policy, s.opt.WaitKernel, s.opt.TileOrder,
		s.opt.IndependentFirst, s.opt.MinGain, s.opt.PollSleepNS)
	if s.opt.BlocksPerSM > 0 {
		name += fmt.Sprintf(",blocks_per_sm=%d", s.opt.BlocksPerSM)
	}
	if s.opt.ProducerAlone {
		name += ",producer_alone"
	}
	if s.opt.TailRowsAt > 0 {
		name += fmt.Sprintf(",tail_rows_at=%d", s.opt.TailRowsAt)
	}
	if s.opt.Probe != "" {
		name += ",probe=" + s.opt.Probe
	}
	if s.ph != nil {
		name += ",phases"
	}
	return name + ")"
}

// Stats reports, with Options.Phases, the median time after a run's start
// at which each operation ended (phases.go), over every run so far.
func (s *Scheduler) Stats() map[string]float64 {
	if s.ph == nil {
		return nil
	}
	return s.ph.stats()
}

// Choices describes, per pair, what the scheduler chose and why (after
// Prepare).
func (s *Scheduler) Choices() []string { return append([]string(nil), s.choices...) }

// isPair reports whether b, issued right after a in one step, is a tile
// consumer reading (as A) the buffer the tile producer a writes (as C).
func isPair(a, b *workloads.Op) bool {
	_, e1 := tiles.FromOp(a)
	_, e2 := tiles.FromOp(b)
	return e1 == nil && e2 == nil && b.Args[tiles.ArgA].Buf == a.Args[tiles.ArgC].Buf
}

// Needs implements sched.Needer: producer/consumer tile pairs.
func (s *Scheduler) Needs() []sched.Trait { return []sched.Trait{sched.TraitTilePairs} }

// HasPairs reports whether p holds a producer/consumer pair (the trait
// sched.TraitTilePairs).
func HasPairs(p *workloads.Program) bool {
	for _, st := range p.Steps {
		for k := 0; k+1 < len(st.Ops); k++ {
			if isPair(&st.Ops[k], &st.Ops[k+1]) {
				return true
			}
		}
	}
	return false
}

// findPairs finds producer/consumer pairs: consecutive tile operations of
// one step where the second reads (as A) the buffer the first writes (as C).
func findPairs(in *workloads.Instance) []item {
	var items []item
	for k := 0; k < in.N(); k++ {
		if k+1 < in.N() && in.Ref(k).Step == in.Ref(k+1).Step {
			if isPair(in.Op(k), in.Op(k+1)) {
				items = append(items, item{op: k, pr: &pairRun{}})
				k++
				continue
			}
		}
		items = append(items, item{op: k})
	}
	return items
}

// Prepare implements sched.Preparer: streams, events, counters, order
// tables and the synchronized launches, all outside the timed run.
func (s *Scheduler) Prepare(h device.Host, in *workloads.Instance) error {
	info, err := s.deviceInfo(h)
	if err != nil {
		return err
	}
	if err := s.newStreams(h, info); err != nil {
		return err
	}
	if s.isStream() {
		s.items = nil // every operation in program order on one stream
		for k := 0; k < in.N(); k++ {
			s.items = append(s.items, item{op: k})
		}
		return s.padSolo(info, in)
	}
	s.items = findPairs(in)
	waitK, err := tiles.WaitKernel()
	if err != nil {
		return err
	}
	for _, it := range s.items {
		if it.pr == nil {
			continue
		}
		if err := s.preparePair(h, info, in, it, waitK); err != nil {
			return err
		}
	}
	var items []item
	for _, it := range s.items {
		if it.pr != nil && it.pr.pair == nil {
			items = append(items, item{op: it.op}, item{op: it.op + 1})
			continue
		}
		items = append(items, it)
	}
	s.items = items
	return s.padSolo(info, in)
}

// deviceInfo returns the device's description (nil if the host has none)
// and checks the options that need it.
func (s *Scheduler) deviceInfo(h device.Host) (*device.Info, error) {
	var info *device.Info
	if ih, ok := h.(device.InfoHost); ok {
		i := ih.DeviceInfo()
		info = &i
	}
	if info == nil && (s.opt.shaping() || s.opt.TailRowsAt > 0) {
		return nil, fmt.Errorf("tilesync: blocks_per_sm, producer_alone and tail_rows_at need the device's description (the host does not implement device.InfoHost)")
	}
	if info != nil && s.opt.BlocksPerSM > info.MaxBlocksPerSM {
		return nil, fmt.Errorf("tilesync: blocks_per_sm %d: %s holds at most %d blocks per SM", s.opt.BlocksPerSM, info.Name, info.MaxBlocksPerSM)
	}
	return info, nil
}

// newStreams makes the producer's stream (high priority), the consumer's
// (low) and the two events between them.
func (s *Scheduler) newStreams(h device.Host, info *device.Info) error {
	lo, hi := 0, 0
	if info != nil {
		lo, hi = info.StreamPriorityLowest, info.StreamPriorityHigh
	} else {
		hi = -1 // every CUDA GPU since Kepler has at least priorities 0 and -1
	}
	var err error
	if s.prodS, err = h.NewStream(device.StreamOptions{Priority: hi}); err != nil {
		return err
	}
	if s.consS, err = h.NewStream(device.StreamOptions{Priority: lo}); err != nil {
		return err
	}
	if s.evPre, err = h.NewEvent(device.EventOptions{DisableTiming: true}); err != nil {
		return err
	}
	s.evC, err = h.NewEvent(device.EventOptions{DisableTiming: true})
	return err
}

// preparePair decides how pair it runs and, unless stream-ordered, builds
// its synchronized launches; it records the choice.
func (s *Scheduler) preparePair(h device.Host, info *device.Info, in *workloads.Instance, it item, waitK *device.Kernel) error {
	names := in.Op(it.op).Name + " -> " + in.Op(it.op+1).Name
	prod, _ := tiles.FromOp(in.Op(it.op))
	cons, _ := tiles.FromOp(in.Op(it.op + 1))
	c, err := s.choose(info, prod, cons)
	if err != nil {
		return err
	}
	if c.Policy == StreamSync {
		// The rule found nothing to gain: this pair runs stream-ordered.
		s.choices = append(s.choices, fmt.Sprintf("%s: stream (%s)", names, c.Why))
		return nil
	}
	pair, err := NewPair(c.Policy, prod, cons)
	if err != nil {
		return fmt.Errorf("%s: %w", names, err)
	}
	pr := it.pr
	pr.pair, pr.choice = pair, c
	choice := fmt.Sprintf("%s: %s wait=%v order=%v indep=%v (%s)", names,
		c.Policy, c.WaitKernel, c.TileOrder, c.IndependentFirst, c.Why)
	if err := s.build(h, in, it.op, pr, waitK); err != nil {
		return err
	}
	if err := s.opt.shapePair(info, &pr.prodL, &pr.consL); err != nil {
		return fmt.Errorf("tilesync: %s: %w", names, err)
	}
	if s.opt.TailRowsAt > 0 {
		note, err := s.orderTailRows(h, info, pr)
		if err != nil {
			return err
		}
		choice += "; " + note
	}
	s.choices = append(s.choices, choice)
	return nil
}

// choose is the pair's policy, wait kernel, tile order and independent-
// first setting: the rule's (Choose) where the options ask for it, the
// options' where they give them.
func (s *Scheduler) choose(info *device.Info, prod, cons tiles.Stage) (Choice, error) {
	var c Choice
	if s.auto || s.opt.WaitKernel == "auto" || s.opt.TileOrder == "auto" {
		if info == nil {
			return c, fmt.Errorf("tilesync: the rule needs the device's description (the host does not implement device.InfoHost); give policy, wait_kernel and tile_order explicitly")
		}
		var err error
		if c, err = Choose(info, prod, cons, s.opt.MinGain); err != nil {
			return c, err
		}
	}
	if !s.auto {
		rule := c
		c.Policy = s.policy
		if s.fine {
			c.Policy = Finest(prod, cons)
		}
		c.Why = "policy given"
		if rule.Why != "" {
			c.Why += fmt.Sprintf("; the rule would pick %s: %s", rule.Policy, rule.Why)
		}
	}
	if s.opt.shaping() {
		// The rule counted waves at the kernels' own occupancy; padded,
		// the pair may no longer fit one wave, and without the wait
		// kernel spinning consumers could then hold every SM.
		c.WaitKernel = true
	}
	if a, on, _ := tri("", s.opt.WaitKernel); !a {
		c.WaitKernel = on
	}
	if a, on, _ := tri("", s.opt.TileOrder); !a {
		c.TileOrder = on
	}
	if s.opt.TailRowsAt > 0 {
		c.TileOrder = true // New refused tile_order off
	}
	c.IndependentFirst = true
	if a, on, _ := tri("", s.opt.IndependentFirst); !a {
		c.IndependentFirst = on
	}
	return c, nil
}

// padSolo gives every solo kernel its own launch capped at
// Options.BlocksPerSM.
func (s *Scheduler) padSolo(info *device.Info, in *workloads.Instance) error {
	if s.opt.BlocksPerSM == 0 {
		return nil
	}
	for i, it := range s.items {
		if it.pr != nil || in.Op(it.op).Kind != workloads.OpKernel {
			continue
		}
		l := *in.Launch(it.op)
		if err := capBlocks(info, &l, s.opt.BlocksPerSM); err != nil {
			return fmt.Errorf("tilesync: %s: %w", in.Op(it.op).Name, err)
		}
		s.items[i].padded = &l
	}
	return nil
}

// upload allocates a buffer holding data (zeros when data is nil).
func (s *Scheduler) upload(h device.Host, words int, data []int32) (_ device.Buffer, err error) {
	b, err := h.Malloc(int64(4 * words))
	if err != nil {
		return b, err
	}
	s.bufs = append(s.bufs, b)
	m, err := h.AllocHost(int64(4*words), true)
	if err != nil {
		return b, err
	}
	defer func() { err = errors.Join(err, h.FreeHost(m)) }()
	clear(m.Data)
	for i, v := range data {
		m.Data[4*i], m.Data[4*i+1], m.Data[4*i+2], m.Data[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	if err := h.Copy(s.prodS, &device.Copy{Kind: device.HostToDevice, Dst: b, Host: m, Bytes: int64(4 * words), Label: "tilesync init"}); err != nil {
		return b, err
	}
	return b, h.StreamSynchronize(s.prodS)
}

func word(b device.Buffer, i int, mode device.Access) device.Arg {
	return device.Arg{Kind: device.ArgBuffer, Buf: b, Mode: mode, Off: int64(4 * i), Len: 4}
}

func (s *Scheduler) build(h device.Host, in *workloads.Instance, k int, pr *pairRun, waitK *device.Kernel) error {
	p, c := pr.pair, pr.choice
	counters, err := s.upload(h, p.CounterWords(), s.counterInit(p))
	if err != nil {
		return err
	}
	pr.prodL = *in.Launch(k)
	pr.prodL.Args = append([]device.Arg(nil), pr.prodL.Args...)
	pr.consL = *in.Launch(k + 1)
	pr.consL.Args = append([]device.Arg(nil), pr.consL.Args...)
	pa, ca := pr.prodL.Args, pr.consL.Args
	all := device.Arg{Kind: device.ArgBuffer, Buf: counters, Len: int64(4 * p.Counters)}
	pa[tiles.ArgPost] = all
	pa[tiles.ArgPost].Mode = device.ReadWrite
	pa[tiles.ArgPostRowStride] = device.I32(int32(p.PostRowStride))
	pa[tiles.ArgPostColMod] = device.I32(int32(p.PostColMod))
	pa[tiles.ArgPostColDiv] = device.I32(int32(p.PostColDiv))
	ca[tiles.ArgWait] = all
	ca[tiles.ArgWait].Mode = device.Read
	ca[tiles.ArgWaitRowStride] = device.I32(int32(p.WaitRowStride))
	ca[tiles.ArgWaitColMod] = device.I32(int32(p.WaitColMod))
	ca[tiles.ArgWaitColDiv] = device.I32(int32(p.WaitColDiv))
	ca[tiles.ArgWaitTileK] = device.I32(int32(p.WaitTileK))
	ca[tiles.ArgWaitPer] = device.I32(int32(p.PerCounter))
	flags := int32(s.opt.PollSleepNS) << tiles.FlagSleepShift
	if c.IndependentFirst {
		flags |= tiles.FlagIndependentFirst
	}
	ca[tiles.ArgFlags] = device.I32(flags)
	psync := &ProducerSync{Pair: p, Counters: counters, Flag: c.WaitKernel,
		Operands: [3]device.Arg{pa[tiles.ArgA], pa[tiles.ArgB], pa[tiles.ArgC]}}
	pr.consSync = &ConsumerSync{Pair: p, Counters: counters,
		Operands: [3]device.Arg{ca[tiles.ArgA], ca[tiles.ArgB], ca[tiles.ArgC]}}
	if c.TileOrder {
		// Row-major: producer rows complete first to last, and consumer
		// rows are taken in the order their inputs complete.
		for _, side := range []struct {
			st    tiles.Stage
			args  []device.Arg
			ctr   int
			order *[]int32
		}{{p.Prod, pa, p.prodOrderIndex(), &psync.Order}, {p.Cons, ca, p.consOrderIndex(), &pr.consSync.Order}} {
			order := make([]int32, side.st.NumTiles())
			for i := range order {
				order[i] = int32(i)
			}
			// The kernel takes the n-th tile itself when it has an
			// order counter and no table: the row-major order without a
			// dependent load of the table at every block's start.
			side.args[tiles.ArgOrderCounter] = word(counters, side.ctr, device.ReadWrite)
			*side.order = order
		}
	}
	if c.WaitKernel {
		pa[tiles.ArgStartFlag] = word(counters, p.flagIndex(), device.ReadWrite)
		pr.waitSync = &WaitKernelSync{Pair: p, Counters: counters}
		pr.waitL = device.Launch{Kernel: waitK, Grid: device.D1(1), Block: device.D1(1),
			Args: []device.Arg{word(counters, p.flagIndex(), device.Read), device.I32(0)},
			Work: device.Work{Cycles: 1}, Label: "wait(" + in.Op(k).Name + ")", Sync: pr.waitSync}
	}
	pr.prodL.Sync = psync
	pr.consL.Sync = pr.consSync
	s.applyProbe(pr)
	return nil
}

// Run implements sched.Scheduler.
func (s *Scheduler) Run(h device.Host, in *workloads.Instance) error {
	if s.prodS == nil {
		return fmt.Errorf("tilesync: Run before Prepare")
	}
	s.iter++
	pending := false // a consumer is in flight on consS
	issued := false  // something was issued on prodS in this run
	if s.ph != nil {
		if err := s.ph.begin(h, s.prodS); err != nil {
			return err
		}
	}
	for _, it := range s.items {
		if pending {
			// The next producer (or solo operation) may overwrite what the
			// last consumer reads.
			if err := h.Wait(s.prodS, s.evC); err != nil {
				return err
			}
			pending = false
		}
		if it.pr == nil {
			if err := s.issueSolo(h, in, it); err != nil {
				return err
			}
			if err := s.markEnd(h, s.prodS, in, it.op); err != nil {
				return err
			}
			issued = true
			continue
		}
		if err := s.issuePair(h, in, it, issued); err != nil {
			return err
		}
		issued, pending = true, true
	}
	if pending {
		if err := h.StreamSynchronize(s.consS); err != nil {
			return err
		}
	}
	if err := h.StreamSynchronize(s.prodS); err != nil {
		return err
	}
	if s.ph != nil {
		return s.ph.end(h)
	}
	return nil
}

// issuePair issues pair it of this run: its producer on prodS, its wait
// kernel (if any) and consumer on consS behind whatever was issued before
// (issued), and the event the next operation waits on.
func (s *Scheduler) issuePair(h device.Host, in *workloads.Instance, it item, issued bool) error {
	pr := it.pr
	it32 := device.I32(int32(s.iter))
	pr.prodL.Args[tiles.ArgIter] = it32
	pr.consL.Args[tiles.ArgIter] = it32
	pr.consSync.Iter = s.iter
	if pr.presetWaits {
		pr.consSync.Iter = 0
	}
	// The consumer must also see everything issued before its producer in
	// this run (earlier runs ended synchronized).
	if issued {
		if err := h.Record(s.evPre, s.prodS); err != nil {
			return err
		}
		if err := h.Wait(s.consumerStream(), s.evPre); err != nil {
			return err
		}
	}
	if err := h.Launch(s.prodS, &pr.prodL); err != nil {
		return err
	}
	if err := s.markEnd(h, s.prodS, in, it.op); err != nil {
		return err
	}
	if pr.choice.WaitKernel {
		pr.waitL.Args[1] = it32
		pr.waitSync.Iter = s.iter
		if err := h.Launch(s.consumerStream(), &pr.waitL); err != nil {
			return err
		}
	}
	if err := h.Launch(s.consumerStream(), &pr.consL); err != nil {
		return err
	}
	if err := s.markEnd(h, s.consumerStream(), in, it.op+1); err != nil {
		return err
	}
	return h.Record(s.evC, s.consumerStream())
}

// issueSolo issues a solo operation on the producer's stream.
func (s *Scheduler) issueSolo(h device.Host, in *workloads.Instance, it item) error {
	if it.padded != nil {
		return h.Launch(s.prodS, it.padded)
	}
	return in.Issue(h, s.prodS, it.op)
}

// markEnd records, with Options.Phases, the end of operation k on st.
func (s *Scheduler) markEnd(h device.Host, st device.Stream, in *workloads.Instance, k int) error {
	if s.ph == nil {
		return nil
	}
	return s.ph.mark(h, st, in.Op(k).Name)
}

// Cleanup implements sched.Preparer.
func (s *Scheduler) Cleanup(h device.Host) error {
	var errs []string
	for _, b := range s.bufs {
		if err := h.Free(b); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, r := range []device.Resource{s.prodS, s.consS, s.evPre, s.evC} {
		if r != nil {
			if err := h.Destroy(r); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	s.bufs, s.prodS, s.consS, s.evPre, s.evC = nil, nil, nil, nil, nil
	if s.ph != nil {
		for _, err := range s.ph.destroy(h) {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("tilesync cleanup: %s", strings.Join(errs, "; "))
	}
	return nil
}
