package calibrate

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpusched/gpusched/device"
)

// "host function releases beside driver calls" (issue #18, session 36):
// SET-batch's simulated rows are fast by about 8% a worker from two
// workers on with two launches in flight a worker (ring 2: -15% on two,
// -28% on four, -36% on eight on the H200's rows) and by 3-7% with one
// (ring 1), and "graphs behind a host function" found nothing on one
// stream with the host idle. In SET-batch the host is not idle: its
// dispatcher thread updates and launches chunk graphs (30-50 us calls)
// while the callback thread releases the chunk queued behind another
// worker's completion callback. Whether that release waits for the
// dispatcher's driver call (a lock the callback thread shares with the
// host threads) is what this probe asks: on 1 or 4 streams, each behind
// a 100 us gate, a no-op host function, a record and a small kernel
// graph, all issued at once; the host thread then, for 400 us,
//
//	spins                     no driver call (Host.Spend)
//	queries an event          cuEventQuery back to back
//	launches kernels          empty kernels on a stream held by a long
//	                          spin kernel (nothing of it runs meanwhile)
//	launches chunk graphs     SET-batch's chunk (a 1 MiB copy in, 12
//	                          one-kernel branches, a 1 MiB copy out), its
//	                          copy nodes updated before each launch, on
//	                          that held stream
//	launches chunk graphs on a running stream
//	                          the same on an idle stream (its copies and
//	                          kernels run beside)
//	launches kernels onto the timed streams
//	launches chunk graphs onto the timed streams
//	                          round-robin onto the streams whose host
//	                          functions are pending, behind their graphs
//	                          (SET-batch's dispatcher with two launches in
//	                          flight a worker), a chunk's own two execs a
//	                          stream (an exec's launches are ordered)
//	launches chunk graphs on a running stream, 2, 10 or 40 us apart
//	                          the host spinning that long after each
//	                          launch: does a release starve only through
//	                          calls back to back?
//
// and per stream the time from the record after its gate to the one after
// its host function (the callback thread's wake, the function and the
// release of the work behind it) is read from the events. If the release
// waits for the host's driver calls, it grows in the cases that call the
// driver, and most with the long graph launches.
var (
	rlStreams = []int{1, 4}
	rlCases   = append([]rlCase{
		{name: "host spinning"},
		{name: "host querying an event", calls: rlQueries},
		{name: "host launching kernels on a held stream", calls: rlKernels, hold: true},
		{name: "host launching chunk graphs on a held stream", calls: rlChunks, hold: true},
		{name: "host launching chunk graphs on a running stream", calls: rlChunks},
		{name: "host launching kernels onto the timed streams", calls: rlKernels, onto: true},
		{name: "host launching chunk graphs onto the timed streams", calls: rlChunks, onto: true},
	}, rlSpaced(2, 10, 40)...)
)

// rlCase is what the host does in its busy time: which driver calls, on
// the other stream (held by a long spin kernel first, or running) or
// onto the timed streams, and the gap it spins after each.
type rlCase struct {
	name  string
	calls rlCalls
	hold  bool
	onto  bool
	gap   time.Duration
}

// rlCalls is the driver call the host repeats.
type rlCalls int

const (
	rlSpin    rlCalls = iota // none: Host.Spend
	rlQueries                // cuEventQuery on the first gate's event
	rlKernels                // empty kernel launches
	rlChunks                 // the chunk's copy nodes updated and launched
)

// rlSpaced are the cases of chunk graph launches on a running stream, us
// microseconds apart.
func rlSpaced(us ...int) []rlCase {
	var out []rlCase
	for _, u := range us {
		out = append(out, rlCase{name: fmt.Sprintf("host launching chunk graphs on a running stream, %d us apart", u),
			calls: rlChunks, gap: time.Duration(u) * time.Microsecond})
	}
	return out
}

const (
	rlGate = 100 * time.Microsecond
	rlBusy = 400 * time.Microsecond
	rlHold = 2 * time.Millisecond // the held stream's spin: past every round's busy time
)

// rlName is a measurement's name: the release span of n streams' host
// functions in case cs, "first" (the earliest release) or "last".
func rlName(n int, cs, which string) string {
	return fmt.Sprintf("host function release on %d streams, %s, %s", n, cs, which)
}

// rlCallsName is the number of driver calls the host made in case cs's
// busy time (the launches or queries; median of the rounds).
func rlCallsName(n int, cs string) string {
	return fmt.Sprintf("host function release on %d streams, %s, driver calls", n, cs)
}

// rlEnv is the probe's streams and graphs.
type rlEnv struct {
	gd    *gdEnv
	timed []*timedStream // the streams behind gates
	gate  []device.Event // after each gate
	other device.Stream  // where the host launches
	// holdDone is the spin kernel's flag when it holds other.
	holdDone device.Buffer
	g        device.GraphExec
	chunks   []device.GraphExec // two, alternating (their copy nodes updated)
	// onto[i] are timed stream i's own two chunk execs (the cases that
	// launch onto the timed streams).
	onto  [][]device.GraphExec
	chunk gdShape
	done  device.Queue
}

func (c *calibrator) newRLEnv(h device.Host) (*rlEnv, error) {
	gd, err := c.newGDEnv(h, gdChunk)
	if err != nil {
		return nil, err
	}
	env := &rlEnv{gd: gd, done: h.NewQueue("host function releases"),
		chunk: gdShape{name: "chunk", head: "c", tail: "c", branches: 12, perBranch: 1, copyBytes: gdChunk, update: true}}
	for i := 0; i < rlStreams[len(rlStreams)-1]; i++ {
		t, err := newTimedStream(h)
		if err != nil {
			return nil, err
		}
		e, err := h.NewEvent(device.EventOptions{})
		if err != nil {
			return nil, err
		}
		env.timed, env.gate = append(env.timed, t), append(env.gate, e)
	}
	if env.other, err = h.NewStream(device.StreamOptions{}); err != nil {
		return nil, err
	}
	if env.holdDone, err = h.Malloc(4); err != nil {
		return nil, err
	}
	gs, err := c.uploadedExecs(h, gd, 1, gd.issue(h, gbShapes()[0]))
	if err != nil {
		return nil, err
	}
	env.g = gs[0]
	if env.chunks, err = c.uploadedExecs(h, gd, 2, gd.issue(h, env.chunk)); err != nil {
		return nil, err
	}
	for range env.timed {
		xs, err := c.uploadedExecs(h, gd, 2, gd.issue(h, env.chunk))
		if err != nil {
			return nil, err
		}
		env.onto = append(env.onto, xs)
	}
	return env, nil
}

func (c *calibrator) releasesBesideCalls(h device.Host) error {
	env, err := c.newRLEnv(h)
	if err != nil {
		return err
	}
	for _, n := range rlStreams {
		for _, rc := range rlCases {
			cs := rc.name
			var first, last, calls []float64
			err := c.warmRounds(func(measured bool) error {
				f, l, k, err := c.rlRound(h, env, n, rc)
				if measured {
					first, last, calls = append(first, f), append(last, l), append(calls, float64(k))
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("host function release on %d streams, %s: %w", n, cs, err)
			}
			const method = "Elapsed from the record after a stream's 100 us gate to the one after its no-op host function (a kernel graph queued behind), while the host thread keeps busy 400 us; per round"
			c.record(rlName(n, cs, "first"), "", "ns", method+", the shortest of the streams", first)
			c.record(rlName(n, cs, "last"), "", "ns", method+", the longest of the streams", last)
			c.record(rlCallsName(n, cs), "", "calls", "Driver calls the host made in its 400 us", calls)
		}
	}
	for _, x := range append(slices.Concat(env.onto...), append(env.chunks, env.g)...) {
		if err := h.Destroy(x); err != nil {
			return err
		}
	}
	return nil
}

// rlRound issues one round of case rc on n streams and returns the
// shortest and longest release span and the host's driver calls.
func (c *calibrator) rlRound(h device.Host, env *rlEnv, n int, rc rlCase) (first, last float64, calls int, err error) {
	// An untimed host function first, so that the callback thread is
	// awake (its idle the gate's) when the timed ones become ready.
	put := func() { env.done.Put(nil) }
	if _, err := hostFuncHandoff(h, env.timed[0].s, env.done, put, nil, nil); err != nil {
		return 0, 0, 0, err
	}
	if rc.hold {
		if err := h.Launch(env.other, c.spinLaunch(rlHold, env.holdDone)); err != nil {
			return 0, 0, 0, err
		}
	}
	for i := 0; i < n; i++ {
		if err := c.rlIssue(h, env, i); err != nil {
			return 0, 0, 0, err
		}
	}
	if calls, err = c.rlBusy(h, env, n, rc); err != nil {
		return 0, 0, 0, err
	}
	if err := h.Synchronize(); err != nil {
		return 0, 0, 0, err
	}
	for i := 0; i < n; i++ {
		d, err := h.Elapsed(env.gate[i], env.timed[i].e0)
		if err != nil {
			return 0, 0, 0, err
		}
		if y := ns(d); i == 0 || y < first {
			first = y
		}
		last = max(last, ns(d))
	}
	return first, last, calls, nil
}

// rlIssue issues stream i's gate, record, host function, record and graph.
func (c *calibrator) rlIssue(h device.Host, env *rlEnv, i int) error {
	t := env.timed[i]
	if err := h.Launch(t.s, c.spinLaunch(rlGate, t.done)); err != nil {
		return err
	}
	if err := h.Record(env.gate[i], t.s); err != nil {
		return err
	}
	if err := h.HostFunc(t.s, func() {}); err != nil {
		return err
	}
	if err := h.Record(t.e0, t.s); err != nil {
		return err
	}
	if err := h.GraphLaunch(env.g, t.s); err != nil {
		return err
	}
	return h.Record(t.e1, t.s)
}

// rlBusy keeps the host busy rlBusy long as case rc says (n streams
// timed) and returns the driver calls it made.
func (c *calibrator) rlBusy(h device.Host, env *rlEnv, n int, rc rlCase) (int, error) {
	if rc.calls == rlSpin {
		h.Spend(rlBusy)
		return 0, nil
	}
	calls := 0
	for t0 := h.Now(); h.Now()-t0 < rlBusy; calls++ {
		// The target: the other stream and its two chunk execs, or the
		// timed streams round-robin, each with its own two.
		s, xs, i := env.other, env.chunks, calls
		if rc.onto {
			s, xs, i = env.timed[calls%n].s, env.onto[calls%n], calls/n
		}
		var err error
		switch rc.calls {
		case rlQueries:
			_, err = h.Query(env.gate[0])
		case rlKernels:
			err = h.Launch(s, env.gd.le)
		case rlChunks:
			err = env.gd.launchUpdated(h, xs[i%2], env.chunk, i, s)
		}
		if err != nil {
			return calls, err
		}
		if rc.gap > 0 {
			h.Spend(rc.gap)
		}
	}
	return calls, nil
}
