package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/gpusched/gpusched/device"
)

// Option configures a simulated device.
type Option func(*options) error

type options struct {
	policy  BlockPolicy
	trace   bool
	queues  int // hardware queues override; 0 keeps the config's
	dq      *bool
	noRaces bool // no race check at all
	noOrder bool // the overlap sweep only, no ordering check
	profile *Profile
	noProf  bool // WithProfile(nil): no profile, whatever the config names
	// The livelock watchdog's budgets (watchdog.go); 0: the defaults.
	livePolls int
	liveSpan  Time
}

// WithPolicy sets the block scheduler's policy (default PriorityLeftover).
func WithPolicy(p BlockPolicy) Option {
	return func(o *options) error {
		if p == nil {
			return errors.New("sim: WithPolicy(nil)")
		}
		o.policy = p
		return nil
	}
}

// WithTrace turns timeline recording on or off (default off).
func WithTrace(on bool) Option { return func(o *options) error { o.trace = on; return nil } }

// WithHardwareQueues overrides the number of hardware queues (connections,
// CUDA_DEVICE_MAX_CONNECTIONS), 1 to 32.
func WithHardwareQueues(n int) Option {
	return func(o *options) error {
		if n < 1 || n > 32 {
			return fmt.Errorf("sim: %d hardware queues; CUDA allows 1 to 32", n)
		}
		o.queues = n
		return nil
	}
}

// WithProfile times the kernels p covers from p instead of the profile the
// config names; nil times every kernel from its Work estimate. p is used,
// not copied, and must not change once a device uses it: its measured
// points are indexed once per profile.
func WithProfile(p *Profile) Option {
	return func(o *options) error { o.profile, o.noProf = p, p == nil; return nil }
}

// WithDependencyQueue enables or disables the ACS-HW dependency queue,
// overriding the config's dependency_queue.enabled.
func WithDependencyQueue(on bool) Option {
	return func(o *options) error { o.dq = &on; return nil }
}

// WithRaceCheck turns the race checker on (default: RaceOrder) or off.
func WithRaceCheck(on bool) Option {
	return func(o *options) error { o.noRaces, o.noOrder = !on, !on; return nil }
}

// RaceMode selects what the race checker reports.
type RaceMode uint8

const (
	// RaceOrder (the default) reports conflicting commands that overlapped
	// in time and those that nothing orders (hb.go).
	RaceOrder RaceMode = iota
	// RaceOverlap reports only conflicting commands that overlapped in time
	// in this run.
	RaceOverlap
	// RaceOff checks nothing.
	RaceOff
)

// WithRaceMode sets what the race checker reports (default RaceOrder).
func WithRaceMode(m RaceMode) Option {
	return func(o *options) error {
		if m > RaceOff {
			return fmt.Errorf("sim: race mode %d; want RaceOrder, RaceOverlap or RaceOff", m)
		}
		o.noRaces, o.noOrder = m == RaceOff, m != RaceOrder
		return nil
	}
}

// Device is a simulated GPU. It implements device.Device, device.Observer
// and device.Tracer. A Device runs one Run at a time.
type Device struct {
	cfg  Config
	info device.Info
	opts options

	// Costs converted to Time once.
	cost costs
	sc   syncCostState // tile_sync costs (tilesync.go)
	// prof is the kernel profile's models by kernel (nil: none).
	prof *profileIndex
	// l2 is the L2 residency across kernels and copies, tracked while
	// the profile has cold terms (prof.cold).
	l2 l2Cache
	// ages is the kernels with running warps, with
	// sm.younger_kernel_weight (mixed.go).
	ages []*command

	run    int // generation: handles from another Run are invalid
	inRun  atomic.Bool
	closed bool

	// Engine.
	now     Time
	seq     uint64
	heap    eventHeap
	killing bool
	stop    error // ends the Run at the engine's next turn (stopRun)
	// activity counts what may change what a poll sees (watchdog.go).
	activity uint64

	// Host threads.
	threads  []*thread
	live     int // threads not finished
	current  *thread
	back     chan struct{}
	lockFree Time // the driver lock is free from this time on
	// lockHolder is the thread that last held the driver lock: a
	// graph-building call of another that waits for it pays the hand-off
	// (host.graph_lock_handoff_ns).
	lockHolder *thread
	// lockGaps are the driver lock's idle times between a release and the
	// start of a waiting thread's hold (host.driver_lock_handoff_ns): the
	// releasing thread may take it back then (lockGap). Those that end
	// before the acting thread's clock are dropped: no later call can use
	// them.
	lockGaps []lockGap
	// qlockFree and qlockHolder are the same for the lock every queue of
	// the Run shares (host.queue_lock_ns).
	qlockFree   Time
	qlockHolder *thread
	// driverSeq counts the Run's driver calls (host.driver_switch_ns).
	driverSeq uint64
	minDirty  bool
	minTh     *thread

	// Handles.
	streams []*stream
	// events counts the events created in this Run; it is the next event's
	// id. The device keeps no table of events: a handle lives as long as its
	// holder (and, while records or waits are pending, the commands that
	// name it), so a destroyed event is garbage as soon as its holder drops
	// it, while the id stays unique within the Run.
	events   int
	nextAddr uint64
	allocs   map[uint64]int64
	memUsed  int64

	// Front end.
	conns       []conn
	outstanding int // commands issued (or submitted to the DQ) and not complete
	busyStreams int // streams with commands pending
	syncWaiters []*thread
	resident    int // resident grids
	slotWait    []slotWaiter
	cbFree      Time // the callback thread is free from this time on
	// cbParkedPaid is the parked wake the running callback paid
	// (front_end.callback_parked_wake_ns), while its function runs: a
	// host thread its Put wakes pays only the rest of its own.
	cbParkedPaid Time
	// graphLanes is the branches the running graph launches run beside
	// their streams (the sum of their widths less one;
	// front_end.graph_branch_queue_ns).
	graphLanes int
	// graphBusy is the busy lanes of the running launches
	// (front_end.graph_branch_queue_busy; graphRun.busyLanes).
	graphBusy int

	copyFree [3]Time
	// copiesIssued is the transfer time of the pinned host copies issued
	// (stream copies as called, a graph's copy nodes as it starts) and
	// not yet started on their engine (callbackcopies.go).
	copiesIssued Time
	copyPrev     [2]copyPrev // each host engine's last copy (hostcopies.go)
	// coldHost: ColdCaches was called and no call has submitted work
	// since (host.cold_call_ns).
	coldHost bool
	bw       bandwidthState // memory bandwidth shared by device-to-device copies and kernels
	pcie     pcieState      // the host copy engines while both directions share the link (pcie.go)
	cmdPool  []*command
	cmdSeq   uint64

	// Block scheduler.
	sms         []smState
	waiting     []*command // kernels with unplaced blocks, in policy order
	dirty       []int32    // SMs whose free resources grew since the last pass
	newKernels  int        // waiting kernels not yet offered every SM
	passPend    bool
	distFree    Time // the block distributor is free from this time on
	rr          int  // rotating SM pointer for small grids
	gpuWarps    int  // resident warps on the whole GPU
	memWarps    int  // warps of resident blocks moving device memory (memActive)
	busySMs     int
	batches     []pendingBatch
	batchStarts []Time // the pass's batches' starts, breadth-first (retime.go)
	rt          rateState
	load        loadState // the memory-load model (memload.go)
	fitBuf      []int
	counters    map[uint64]*counter
	spinning    int
	waitBuf     []device.CounterWait
	postBuf     []device.Counter
	startBuf    []device.Counter
	postQ       []device.Counter // counters to post (postCounters)
	posting     bool
	accBuf      []device.Arg // a block's accesses (BlockAccess)
	activeSeq   uint64

	// Dependency queue (ACS-HW).
	dq dqState

	// Observations of the last run.
	stats     device.Stats
	firstT    Time
	lastT     Time
	anyOp     bool
	util      utilTracker
	ops       []opRecord
	opArgs    []device.Arg
	races     []device.Race
	hb        hbState
	tr        traceRec
	lastTrace traceRec
}

type slotWaiter struct {
	c *conn
	k *command
}

// costs are the config's figures in Time.
type costs struct {
	launch, copyEnqueue, record, wait, query, syncCall, wakeup, hostFunc    Time
	hostFuncAfterGraph                                                      Time
	streamCreate, eventCreate, destroy, malloc, free, allocHost, capture    Time
	instBase, instNode, graphLaunch, setNode, threadStart, dqSubmit, dqPoll Time
	launchLatency, backToBack, graphLatency, graphNode, callback, minBlock  Time
	blockDispatch, handoff, cbHandoff, busyStream, eventWait, captureEvent  Time
	copyLatency, dqDispatch, dqInsert, dqComplete                           Time
	copyQueuedLatency, copyBackToBackLatency, copyGraphLatency              Time
	parkAfter, parkedWake, parkedCbWake, syncParkAfter, syncParkedWake      Time
	parkedDecade, cbParkedDecade                                            float64 // ps a parked wake grows by per tenfold wait beyond deepParkFrom
	coldCall                                                                Time
	copyPoll, kernelPoll, copyIdleLatency, engineWait                       Time
	graphStreamAfter                                                        Time
	cycle                                                                   float64 // ns per SM cycle

	// The optional graph costs: per kernel (and host-function) node, per
	// copy node, per parallel branch and per fork or join of a launched graph, per node whose kernel changed
	// since the exec's previous launch, per node whose launch
	// configuration changed since then, and a node update that changes
	// the kernel.
	graphNodeLaunch, graphCopyLaunch, graphBranchLaunch, graphJoinLaunch, graphKernelChange, graphChangedNode, setNodeKernelChange Time
	graphCopyEdgeLaunch, graphCopyFanEdgeLaunch, graphOpenEndLaunch                                                                Time

	// The optional costs of many streams and of graphs built per step:
	// moving a host thread's calls to another stream, a wait on another
	// stream's pending record, a record of an event whose last is pending,
	// the cross-stream wait's growth per doubling of the busy streams, a fresh exec's first
	// launch and its destruction per node, instantiation per kernel
	// argument.
	streamSwitch, waitPending, recordPending, eventWaitDoubling, firstGraphLaunchNode, destroyExecNode, instArg, instCopyNode Time
	graphLockHandoff                                                                                                          Time
	// The optional front-end cost of other hardware queues holding
	// pending commands: per queue beyond the first, and its bound.
	pendingQueue, pendingQueueMax Time

	// The optional queue lock: held per Queue call, and the contended
	// hand-off.
	queueLock, queueLockHandoff Time
	// The optional own time of a Queue Put or Len, and its growth per
	// other live host thread.
	queueCall, queueCallPerThread Time

	// The optional record of a timing-disabled event and the driver
	// lock's contended hand-off.
	untimedRecord, driverLockHandoff, driverSwitch Time

	// The optional per-segment costs of instantiating and destroying a
	// graph exec.
	instSegment, destroyExecSegment Time

	// The optional stream synchronize after one of another stream.
	syncSwitch Time

	// The optional graph device costs: what a copy node adds to its
	// release delay, and the least spacing of a launch's releases.
	graphCopyNode, graphDispatch, graphBranchQueue Time

	// The optional wake-up of the idle callback thread, and the stream's
	// release after a callback.
	callbackWake, callbackRelease Time
	// releaseHostWait: front_end.callback_release_host_wait_ns.
	releaseHostWait           Time
	cbParkAfter, cbParkedWake Time
}

// New builds a simulated device from cfg.
func New(cfg *Config, opts ...Option) (*Device, error) {
	if cfg == nil {
		return nil, errors.New("sim: nil config")
	}
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	d := &Device{cfg: *cfg, info: cfg.Info, back: make(chan struct{})}
	d.opts.policy = PriorityLeftover{}
	for _, o := range opts {
		if err := o(&d.opts); err != nil {
			return nil, err
		}
	}
	if d.opts.queues > 0 {
		d.info.HardwareQueues = d.opts.queues
	}
	if d.opts.dq != nil {
		d.cfg.DQ.Enabled = *d.opts.dq
	}
	if err := d.useProfile(); err != nil {
		return nil, err
	}
	if d.cfg.DQ.Enabled && d.cfg.DQ.Slots <= 0 {
		return nil, fmt.Errorf("sim: device %q: the dependency queue needs a positive slot count", cfg.Name)
	}
	h, f := cfg.Host, cfg.FrontEnd
	cyc := 1e9 / float64(cfg.Info.ClockHz)
	d.cost = costs{
		launch: nsTime(h.LaunchNs), copyEnqueue: nsTime(h.CopyEnqueueNs), record: nsTime(h.RecordNs), wait: nsTime(h.WaitNs),
		query: nsTime(h.QueryNs), syncCall: nsTime(h.SyncCallNs), wakeup: nsTime(h.WakeupNs), handoff: nsTime(h.HandoffNs), cbHandoff: nsTime(h.CallbackHandoffNs), busyStream: nsTime(h.BusyStreamNs), hostFunc: nsTime(h.HostFuncNs), hostFuncAfterGraph: nsTime(h.HostFuncAfterGraphNs),
		streamCreate: nsTime(h.StreamCreateNs), eventCreate: nsTime(h.EventCreateNs), destroy: nsTime(h.DestroyNs),
		malloc: nsTime(h.MallocNs), free: nsTime(h.FreeNs), allocHost: nsTime(h.AllocHostNs), capture: nsTime(h.CaptureNs),
		instBase: nsTime(h.InstantiateBaseNs), instNode: nsTime(h.InstantiatePerNodeNs), graphLaunch: nsTime(h.GraphLaunchNs),
		setNode: nsTime(h.SetNodeNs), threadStart: nsTime(h.ThreadStartNs), dqSubmit: nsTime(h.DQSubmitNs), dqPoll: nsTime(h.DQPollNs),
		launchLatency: nsTime(f.LaunchLatencyNs), backToBack: nsTime(f.BackToBackNs), graphLatency: nsTime(f.GraphLaunchLatencyNs),
		graphNode: nsTime(f.GraphNodeNs), callback: nsTime(f.CallbackNs), minBlock: nsTime(f.MinBlockNs),
		blockDispatch: nsTime(f.BlockDispatchNs), eventWait: nsTime(f.EventWaitNs), captureEvent: nsTime(cmp.Or(h.CaptureEventNs, h.CaptureNs)), copyLatency: nsTime(cfg.Copy.LatencyNs), copyQueuedLatency: nsTime(cfg.Copy.QueuedLatencyNs), copyBackToBackLatency: nsTime(cfg.Copy.BackToBackLatencyNs), copyGraphLatency: nsTime(cmp.Or(cfg.Copy.GraphLatencyNs, cfg.Copy.LatencyNs)), dqDispatch: nsTime(cfg.DQ.DispatchNs),
		dqInsert: nsTime(float64(cfg.DQ.InsertCycles) * cyc), dqComplete: nsTime(float64(cfg.DQ.CompleteCycles) * cyc),
		graphNodeLaunch: nsTime(h.GraphLaunchNodeNs), graphCopyLaunch: nsTime(h.GraphLaunchCopyNodeNs), graphCopyEdgeLaunch: nsTime(h.GraphLaunchCopyEdgeNs), graphBranchLaunch: nsTime(h.GraphLaunchBranchNs), graphOpenEndLaunch: nsTime(h.GraphLaunchOpenEndNs), graphCopyFanEdgeLaunch: nsTime(cmp.Or(h.GraphLaunchCopyFanEdgeNs, h.GraphLaunchCopyEdgeNs)), graphJoinLaunch: nsTime(h.GraphLaunchJoinNs),
		graphKernelChange: nsTime(h.GraphLaunchKernelChangeNs), graphChangedNode: nsTime(h.GraphLaunchChangedNodeNs), setNodeKernelChange: nsTime(h.SetNodeKernelChangeNs),
		graphCopyNode: nsTime(f.GraphCopyNodeNs), copyPoll: nsTime(f.CopyPollNs), kernelPoll: nsTime(f.KernelPollNs), engineWait: nsTime(f.EngineWaitNs), copyIdleLatency: nsTime(cfg.Copy.IdleLatencyNs), graphDispatch: nsTime(f.GraphDispatchNs), graphBranchQueue: nsTime(f.GraphBranchQueueNs), callbackWake: nsTime(f.CallbackWakeNs), callbackRelease: nsTime(f.CallbackReleaseNs), releaseHostWait: nsTime(f.CallbackReleaseHostWaitNs),
		cbParkAfter: nsTime(f.CallbackParkAfterNs), cbParkedWake: nsTime(f.CallbackParkedWakeNs),
		parkedDecade: 1000 * h.ParkedWakePerDecadeNs, cbParkedDecade: 1000 * f.CallbackParkedWakePerDecadeNs,
		parkAfter: nsTime(h.ParkAfterNs), parkedWake: nsTime(h.ParkedWakeNs), parkedCbWake: nsTime(cmp.Or(h.ParkedCallbackWakeNs, h.ParkedWakeNs)),
		syncParkAfter: nsTime(h.SyncParkAfterNs), syncParkedWake: nsTime(h.SyncParkedWakeNs),
		coldCall:         nsTime(h.ColdCallNs),
		graphStreamAfter: nsTime(h.GraphLaunchStreamAfterNs),
		streamSwitch:     nsTime(h.StreamSwitchNs), waitPending: nsTime(h.WaitPendingNs), recordPending: nsTime(h.RecordPendingNs), eventWaitDoubling: nsTime(f.EventWaitDoublingNs),
		pendingQueue: nsTime(f.PendingQueueNs), pendingQueueMax: nsTime(f.PendingQueueMaxNs),
		firstGraphLaunchNode: nsTime(h.FirstGraphLaunchPerNodeNs), destroyExecNode: nsTime(h.DestroyExecPerNodeNs), instArg: nsTime(h.InstantiatePerArgNs), instCopyNode: nsTime(cmp.Or(h.InstantiatePerCopyNodeNs, h.InstantiatePerNodeNs)),
		graphLockHandoff: nsTime(h.GraphLockHandoffNs), queueLock: nsTime(h.QueueLockNs), queueLockHandoff: nsTime(h.QueueLockHandoffNs),
		queueCall: nsTime(h.QueueCallNs), queueCallPerThread: nsTime(h.QueueCallPerThreadNs),
		untimedRecord: nsTime(cmp.Or(h.UntimedRecordNs, h.RecordNs)), driverLockHandoff: nsTime(h.DriverLockHandoffNs),
		driverSwitch: nsTime(h.DriverSwitchNs),
		instSegment:  nsTime(h.InstantiatePerSegmentNs), destroyExecSegment: nsTime(h.DestroyExecPerSegmentNs),
		syncSwitch: nsTime(h.SyncSwitchNs), cycle: cyc,
	}
	d.sc = newSyncCosts(cfg.TileSync)
	return d, nil
}

// NewNamed loads a config by name or path (LoadConfig) and builds a device.
func NewNamed(nameOrPath string, opts ...Option) (*Device, error) {
	cfg, err := LoadConfig(nameOrPath)
	if err != nil {
		return nil, err
	}
	return New(cfg, opts...)
}

// Config returns the device's configuration (with option overrides applied).
func (d *Device) Config() Config {
	c := d.cfg
	c.Info = d.info
	return c
}

// Info implements device.Device.
func (d *Device) Info() device.Info { return d.info }

// Close implements device.Device.
func (d *Device) Close() error { d.closed = true; return nil }

// EnableTrace implements device.Tracer.
func (d *Device) EnableTrace(on bool) { d.opts.trace = on }

// Stats implements device.Observer: the last Run's statistics.
func (d *Device) Stats() device.Stats { return d.stats }

// Races implements device.Observer: the last Run's races, ordered by the
// start of their first operation.
func (d *Device) Races() []device.Race { return append([]device.Race(nil), d.races...) }

// reset prepares the device state for a new Run, keeping allocations.
func (d *Device) reset() {
	d.run++
	d.now, d.seq = 0, 0
	d.heap = d.heap[:0]
	d.killing = false
	d.stop = nil
	d.activity = 0
	d.threads = d.threads[:0]
	d.live, d.current, d.lockFree, d.lockHolder, d.lockGaps = 0, nil, 0, nil, d.lockGaps[:0]
	d.qlockFree, d.qlockHolder = 0, nil
	d.driverSeq = 0
	d.minDirty, d.minTh = true, nil
	d.streams = d.streams[:0]
	d.events = 0
	d.nextAddr = 0x7f0000000000
	d.allocs = map[uint64]int64{}
	d.memUsed = 0
	nq := d.info.HardwareQueues
	d.conns = make([]conn, nq)
	for i := range d.conns {
		d.conns[i] = conn{id: i, wakeAt: -1}
	}
	d.outstanding, d.busyStreams = 0, 0
	d.syncWaiters = d.syncWaiters[:0]
	d.resident = 0
	d.slotWait = d.slotWait[:0]
	d.cbFree, d.graphLanes, d.graphBusy = 0, 0, 0
	d.copyFree = [3]Time{}
	d.copiesIssued = 0
	d.copyPrev = [2]copyPrev{}
	d.coldHost = false
	d.resetBandwidth()
	d.resetPCIe()
	d.l2.reset()
	d.cmdSeq = 0
	if len(d.sms) != d.info.SMs {
		d.sms = make([]smState, d.info.SMs)
	}
	for i := range d.sms {
		d.sms[i] = smState{
			id:      int32(i),
			threads: d.info.MaxThreadsPerSM, warps: d.info.MaxWarpsPerSM, blocks: d.info.MaxBlocksPerSM,
			regs: d.info.RegistersPerSM, shared: d.info.SharedPerSM,
		}
	}
	d.waiting = d.waiting[:0]
	d.dirty = d.dirty[:0]
	d.newKernels = 0
	d.passPend = false
	d.distFree = 0
	d.rr = 0
	d.gpuWarps, d.busySMs, d.memWarps = 0, 0, 0
	d.batches = d.batches[:0]
	d.resetRates()
	d.resetLoad()
	clear(d.ages)
	d.ages = d.ages[:0]
	d.counters = map[uint64]*counter{}
	d.spinning = 0
	d.postQ, d.posting = d.postQ[:0], false
	d.activeSeq = 0
	d.dq = dqState{}
	d.stats = device.Stats{}
	d.firstT, d.lastT, d.anyOp = 0, 0, false
	d.util.reset(d.info.SMs, d.info.MaxWarpsPerSM)
	d.ops = d.ops[:0]
	d.opArgs = d.opArgs[:0]
	d.races = nil
	d.hb.reset(!d.opts.noRaces && !d.opts.noOrder)
	d.tr = traceRec{on: d.opts.trace}
}

// Run implements device.Device: it runs main as the main host thread, with
// every host thread it starts, in simulated time, and drains the device.
func (d *Device) Run(main func(h device.Host) error) (err error) {
	if d.closed {
		return errors.New("sim: Run on a closed device")
	}
	if main == nil {
		return errors.New("sim: Run(nil)")
	}
	if !d.inRun.CompareAndSwap(false, true) {
		return errors.New("sim: Run called while a Run is in progress (a Device runs one Run at a time)")
	}
	defer d.inRun.Store(false)
	d.reset()
	d.spawn("main", main, 0)
	err = d.loop()
	d.finish()
	return err
}

// loop is the engine: it runs events and host threads in time order until
// nothing remains.
func (d *Device) loop() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sim: panic in engine context at %v: %v\n%s", d.now.Duration(), r, debug.Stack())
			d.killAll()
		}
	}()
	for {
		if d.stop != nil {
			d.killAll()
			return d.stop
		}
		if d.passPend && (len(d.heap) == 0 || d.heap[0].t > d.now) {
			d.schedulePass()
			continue
		}
		th := d.nextThread()
		if len(d.heap) > 0 && (th == nil || d.heap[0].t <= th.clock) {
			ev := d.heap.pop()
			if d.stale(&ev) {
				continue
			}
			d.now = ev.t
			d.progress()
			d.handle(ev)
			continue
		}
		if th != nil {
			d.resumeThread(th)
			continue
		}
		// Nothing runnable and no events: done, or stuck.
		var terr error
		for _, t := range d.threads {
			if t.err != nil {
				terr = t.err
				break
			}
		}
		parked := d.live > 0
		if terr != nil {
			d.killAll()
			return terr
		}
		if parked || d.outstanding > 0 || d.spinning > 0 {
			derr := d.deadlock()
			d.killAll()
			return derr
		}
		return nil
	}
}

// killAll ends the goroutines of parked host threads.
func (d *Device) killAll() {
	d.killing = true
	for _, t := range d.threads {
		if t.state != thFinished {
			d.current = t
			t.resume <- struct{}{}
			<-d.back
			d.current = nil
		}
	}
}

// nextThread is the runnable host thread with the earliest clock (ties: the
// earliest started), or nil.
func (d *Device) nextThread() *thread {
	if !d.minDirty {
		return d.minTh
	}
	var best *thread
	for _, t := range d.threads {
		if t.state != thRunnable {
			continue
		}
		if best == nil || t.clock < best.clock {
			best = t
		}
	}
	d.minTh, d.minDirty = best, false
	return best
}

func (d *Device) resumeThread(th *thread) {
	d.current = th
	th.resume <- struct{}{}
	<-d.back
	d.current = nil
	d.minDirty = true
}

// spawn creates a host thread at time at.
func (d *Device) spawn(name string, fn func(device.Host) error, at Time) *thread {
	th := &thread{d: d, name: name, id: len(d.threads), clock: at, state: thRunnable, resume: make(chan struct{}), fn: fn}
	if d.cfg.DQ.Enabled {
		th.host = &dqHost{th}
	} else {
		th.host = th
	}
	d.threads = append(d.threads, th)
	d.live++
	d.progress()
	d.minDirty = true
	go th.main()
	return th
}

// wake makes a parked host thread runnable at time at plus the wake-up
// cost, and the parked wake-up's when it has waited past the driver's spin.
func (d *Device) wake(th *thread, at Time) {
	d.wakeAfter(th, at, d.cost.wakeup+parkedExtra(th, at+d.cost.wakeup, d.cost.syncParkAfter, d.cost.syncParkedWake, 0))
}

// parkedExtra is what a thread blocked since its clock pays more to
// resume at arrive: wake, and decade ps for every tenfold of the wait
// beyond deepParkFrom, when it has waited longer than after (it has
// parked), else nothing. The growth is the thread's own: it pays it even
// where a callback thread woken from the same idle took all of wake.
func parkedExtra(th *thread, arrive, after, wake Time, decade float64) Time {
	if (wake > 0 || decade > 0) && th.state == thParked && arrive-th.clock > after {
		return wake + deepPark(arrive-th.clock, decade)
	}
	return 0
}

// deepParkFrom is the idle time a parked wake's growth counts from:
// calibrate "long waits" measures the wake at 300 us to 10 ms idle,
// against its first point; the parked sweep that measures the wake itself
// has its points at 205-1000 us.
const deepParkFrom = 300 * Time(1e6) // ps

// deepPark is what a wait of idle adds to a parked wake at decade ps per
// tenfold beyond deepParkFrom.
func deepPark(idle Time, decade float64) Time {
	if decade <= 0 || idle <= deepParkFrom {
		return 0
	}
	return psTime(decade * math.Log10(float64(idle)/float64(deepParkFrom)))
}

// handOff wakes a host thread parked in a Queue Get at time at plus the
// hand-off cost: from a host callback (fromCallback) the callback
// hand-off, else the thread hand-off; each falls back to the one before
// it (callback to thread to wake-up) when the config sets none.
func (d *Device) handOff(th *thread, at Time, fromCallback bool) {
	c, parked := d.cost.handoff, d.cost.parkedWake
	if c == 0 {
		c = d.cost.wakeup
	}
	if fromCallback {
		c, parked = cmp.Or(d.cost.cbHandoff, c), max(0, d.cost.parkedCbWake-d.cbParkedPaid)
	}
	d.wakeAfter(th, at, c+parkedExtra(th, at+c, d.cost.parkAfter, parked, d.cost.parkedDecade))
}

// wakeAfter makes a parked host thread runnable at time at plus cost.
func (d *Device) wakeAfter(th *thread, at, cost Time) {
	if th.state != thParked {
		return
	}
	if d.tr.on {
		d.tr.blocked(th.id, th.blockedIn, th.clock, max(th.clock, at))
	}
	th.clock = max(th.clock, at) + cost
	th.state = thRunnable
	th.blockedIn = ""
	d.minDirty = true
	if th.clock > horizon {
		d.hostPastHorizon(th, "waking up", d.cost.wakeup)
	}
}

// runAhead is how many calls a lone host thread makes before it lets the
// engine catch up with its clock.
const runAhead = 1024

type thState uint8

const (
	thRunnable thState = iota
	thParked
	thFinished
)

// thread is a host thread: a goroutine that runs only while the engine has
// handed it control, so that host threads are coroutines in simulated time.
type thread struct {
	d *Device
	// calls are the thread's driver calls not yet ended, in order
	// (front_end.callback_release_host_wait_ns; callbackhostcalls.go).
	calls     []hostCall
	callsHead int // calls before it have ended
	name      string
	id        int
	clock     Time
	state     thState
	resume    chan struct{}
	fn        func(device.Host) error
	host      device.Host
	err       error
	blockedIn string
	vc        vclock // what this thread knows has completed (hb.go)
	dqKnown   uint64 // dependency-queue ids up to this one are in vc
	misuse    error  // misuse of a call that has no error result (Get)
	ahead     int    // calls since the engine last caught up (single-thread run-ahead)
	// lastStream is the stream of the thread's last launch, record or
	// wait (with host.stream_switch_ns only).
	lastStream *stream
	// lastSync is the stream of the thread's last stream synchronize
	// (host.sync_switch_ns).
	lastSync *stream
	// driverSeq is the Run's driver-call count at the thread's last
	// driver call (host.driver_switch_ns).
	driverSeq uint64
	// Results handed over by whoever woke the thread.
	qv  any
	qok bool
	// The livelock watchdog's view of its polls (watchdog.go).
	poll pollState
}

func (th *thread) main() {
	d := th.d
	defer func() {
		if r := recover(); r != nil {
			th.err = fmt.Errorf("host thread %s panicked: %v\n%s", th.name, r, debug.Stack())
		}
		th.state = thFinished
		d.live--
		d.progress()
		d.minDirty = true
		d.back <- struct{}{}
	}()
	<-th.resume
	if d.killing {
		runtime.Goexit()
	}
	err := th.fn(th.host)
	if err == nil {
		err = th.misuse
	}
	if err != nil {
		if th.name == "main" {
			th.err = err
		} else {
			th.err = fmt.Errorf("host thread %s: %w", th.name, err)
		}
	}
}

// yield hands control back to the engine until it resumes this thread.
func (th *thread) yield() {
	d := th.d
	d.back <- struct{}{}
	<-th.resume
	if d.killing {
		runtime.Goexit()
	}
}

// park blocks the thread until an engine event or another thread wakes it.
func (th *thread) park(what string) {
	th.state = thParked
	th.blockedIn = what
	th.d.minDirty = true
	th.yield()
}

// mayGo reports whether the thread may act now without breaking global time
// order: no event and no other runnable thread comes before its clock.
func (th *thread) mayGo() bool {
	d := th.d
	if len(d.heap) > 0 && d.heap[0].t <= th.clock {
		return false
	}
	for _, o := range d.threads {
		if o != th && o.state == thRunnable && (o.clock < th.clock || (o.clock == th.clock && o.id < th.id)) {
			return false
		}
	}
	return true
}

// order makes the thread's next action happen in global time order. A
// thread that is the only one alive runs ahead of the engine freely: its
// commands take effect at their host timestamps through the event heap, and
// nothing else can observe the difference.
func (th *thread) order() {
	if th.d.live == 1 {
		// Let the engine catch up now and then, so that the commands
		// issued ahead of it (and their pooled structs) stay few.
		if th.ahead++; th.ahead >= runAhead {
			th.ahead = 0
			th.catchUp()
		}
		return
	}
	for !th.mayGo() {
		th.yield()
	}
}

// catchUp makes the engine process everything up to the thread's clock, so
// the thread can observe device state.
func (th *thread) catchUp() {
	for !th.mayGo() {
		th.yield()
	}
}

// ColdCaches tells the simulator that the host has just done work of its
// own that evicts the driver's data from the CPU's caches (the runner's
// reset and poisoning before a timed run): the next call that submits
// work pays host.cold_call_ns. The simulator does not time Go code, so it
// cannot see such work by itself.
func (th *thread) ColdCaches() { th.d.coldHost = true }

// coldCost is what the call submitting work now pays after ColdCaches
// (host.cold_call_ns, once).
func (th *thread) coldCost() Time {
	d := th.d
	if !d.coldHost {
		return 0
	}
	d.coldHost = false
	return d.cost.coldCall
}

// charge makes the thread pay cost, the driver_lock_fraction of it under
// the driver lock shared by all host threads, and host.driver_lock_handoff_ns
// more when it waits for the lock another thread holds.
func (th *thread) charge(cost Time, call string) {
	th.chargeLocked(cost+th.driverSwitch(true), call, th.d.cfg.Host.DriverLockFraction, th.d.cost.driverLockHandoff, true)
}

// chargeThreadStart is charge for Host.Go. Starting a host thread is no
// CUDA call: with host.driver_switch_threads it neither pays the driver
// switch nor makes the thread one that counts for the others' (a Run's
// main thread that only starts its workers does not slow their
// launches); without it, as before the field existed, it is a driver
// call like the others.
func (th *thread) chargeThreadStart() {
	if !th.d.cfg.Host.DriverSwitchThreads {
		th.charge(th.d.cost.threadStart, "thread start")
		return
	}
	th.chargeLocked(th.d.cost.threadStart, "thread start", th.d.cfg.Host.DriverLockFraction, th.d.cost.driverLockHandoff, true)
}

// chargeRecord is charge for an event record: without
// host.record_skips_switch the same; with it the record counts as a
// driver call but pays no host.driver_switch_ns.
func (th *thread) chargeRecord(cost Time) {
	pays := !th.d.cfg.Host.RecordSkipsSwitch
	th.chargeLocked(cost+th.driverSwitch(pays), "cuEventRecord", th.d.cfg.Host.DriverLockFraction, th.d.cost.driverLockHandoff, true)
}

// driverSwitch is what a driver call pays for the other host threads'
// driver calls since the thread's last one (host.driver_switch_ns each,
// counting each such thread once; with host.driver_switch_threads every
// other live thread that has made a driver call), and counts the call. A
// call that does not pay (an event record under host.record_skips_switch)
// is still counted. With the field left out it is 0 and orders nothing.
func (th *thread) driverSwitch(pays bool) Time {
	d := th.d
	c := d.cost.driverSwitch
	if c == 0 {
		return 0
	}
	th.order() // count the other threads' calls in time order
	n := 0
	if pays {
		// With host.driver_switch_threads every other thread that has
		// made a driver call in the Run counts (driverSeq > 0), called
		// since this thread's last call or not.
		since := th.driverSeq
		if d.cfg.Host.DriverSwitchThreads {
			since = 0
		}
		for _, o := range d.threads {
			if o != th && o.state != thFinished && o.driverSeq > since {
				n++
			}
		}
	}
	d.driverSeq++
	th.driverSeq = d.driverSeq
	return Time(n) * c
}

// chargeGraphBuild is charge for a graph-building call (capture begin and
// end, a captured command, instantiate, graph or exec destroy):
// host.graph_lock_fraction of it under the driver lock
// (driver_lock_fraction where that is 0), and host.graph_lock_handoff_ns
// more when it waits for the lock another thread holds.
func (th *thread) chargeGraphBuild(cost Time, call string) {
	f := th.d.cfg.Host.GraphLockFraction
	if f == 0 {
		f = th.d.cfg.Host.DriverLockFraction
	}
	th.chargeLocked(cost, call, f, th.d.cost.graphLockHandoff, false)
}

// chargeQueueLock makes the thread hold the lock of the Run's queues for
// host.queue_lock_ns (a Put, Len or Get), after waiting for another
// thread that holds it and paying host.queue_lock_handoff_ns more then.
// Without the field it does nothing (not even ordering the thread), so
// configs that leave it out simulate as before.
func (th *thread) chargeQueueLock() {
	d := th.d
	c := d.cost.queueLock
	if c == 0 {
		return
	}
	th.order()
	start := th.clock
	if d.qlockFree > start && d.qlockHolder != th {
		start = d.qlockFree + d.cost.queueLockHandoff
	}
	th.clock = max(start, d.qlockFree) + c
	d.qlockFree, d.qlockHolder = th.clock, th
	if th.clock > horizon {
		d.hostPastHorizon(th, "queue call", c)
	}
}

// chargeQueueCall makes the thread pay a Queue Put's or Len's own time:
// host.queue_call_ns and host.queue_call_per_thread_ns for every other
// live host thread of the Run, and reports whether it charged any.
// Without the fields it does nothing.
func (th *thread) chargeQueueCall() bool {
	d := th.d
	if d.cost.queueCall == 0 && d.cost.queueCallPerThread == 0 {
		return false
	}
	th.order() // the threads alive at the call's start
	c := d.cost.queueCall + d.cost.queueCallPerThread*Time(max(d.live-1, 0))
	th.clock += c
	if th.clock > horizon {
		d.hostPastHorizon(th, "queue call", c)
	}
	return true
}

// lockGap is a time the driver lock is idle while a thread that waited
// for it wakes: from the release by owner to the waiter's hold.
type lockGap struct {
	from, to Time
	owner    *thread
}

// lockGapFor is the gap of th's own release where a call that wants the
// driver lock at free for locked fits (nil: none, or barge is off); it
// drops the gaps that end before th's clock.
func (d *Device) lockGapFor(th *thread, free, locked Time, barge bool) *lockGap {
	if len(d.lockGaps) == 0 {
		return nil
	}
	kept := d.lockGaps[:0]
	for _, g := range d.lockGaps {
		if g.to > th.clock {
			kept = append(kept, g)
		}
	}
	d.lockGaps = kept
	if !barge || locked == 0 {
		return nil
	}
	for i := range d.lockGaps {
		if g := &d.lockGaps[i]; g.owner == th && free >= g.from && free+locked <= g.to {
			return g
		}
	}
	return nil
}

// chargeLocked makes the thread pay cost, fraction of it under the driver
// lock; a call that finds the lock held by another thread waits for it
// and then pays handoff more (the contended lock's hand-off). With barge,
// the lock's idle time while that thread wakes is the releasing thread's:
// a call of its own whose locked part fits there takes the lock back
// without waiting (a mutex's releasing thread re-acquires it before the
// woken waiter runs), so a thread's record right after its launch does
// not queue behind the other threads' launches.
func (th *thread) chargeLocked(cost Time, call string, fraction float64, handoff Time, barge bool) {
	d := th.d
	if d.current != th {
		panic(fmt.Sprintf("host thread %s's Host used outside that thread (from a host callback or another goroutine): %s", th.name, call))
	}
	th.order()
	if !th.poll.polling {
		d.progress()
	}
	th.poll.lenZeros = 0
	// The call's unlocked part runs at once; its locked part waits for the
	// driver lock.
	start := th.clock
	locked := Time(float64(cost)*fraction + 0.5)
	free := start + cost - locked
	if g := d.lockGapFor(th, free, locked, barge); g != nil {
		th.clock = free + locked
		g.from = th.clock
	} else {
		if locked > 0 && d.lockFree > free && d.lockHolder != th {
			if barge && handoff > 0 {
				d.lockGaps = append(d.lockGaps, lockGap{from: d.lockFree, to: d.lockFree + handoff, owner: d.lockHolder})
			}
			free = d.lockFree + handoff
		}
		th.clock = max(free, d.lockFree) + locked
		if locked > 0 {
			d.lockFree, d.lockHolder = th.clock, th
		}
	}
	th.noteHostCall(start, th.clock)
	if d.tr.on {
		d.tr.hostCall(th.id, call, start, th.clock, d.cmdSeq+1)
	}
	if th.clock > horizon {
		d.hostPastHorizon(th, call, cost)
	}
}
