package calibrate

import (
	"errors"
	"fmt"
	"sort"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// "host functions over streams" (issue #18, session 18): SET's schedulers
// end every job with a host function (cuLaunchHostFunc) on its worker's
// stream, and GPU traces of set-4 show each one spanning 27-29 us of its
// stream with hardly two at once, where the simulator has one callback
// thread whose wake (front_end.callback_wake_ns) is shared by the host
// functions queued while it wakes. This probe asks the driver directly:
// with host functions becoming ready on 1 to 8 streams at once or a gap
// apart, does each pay its own wake, one after another (one thread,
// serialised), share one wake, or run side by side?
var (
	hfStreams    = []int{1, 2, 4, 8}
	hfGaps       = []int{0, 5, 10, 15, 20, 25, 30, 35, 40, 50, 60} // us between two streams' host functions becoming ready
	hfLoopKernel = []int{2, 20}                                    // us, the job kernel of the closed loop
)

const (
	hfLeadUs   = 40 // the kernel the streams wait behind, so that all is issued before any host function is ready
	hfKernelUs = 5  // each stream's kernel before its host function (plus its stream's share of the gap)
	hfNextUs   = 5  // the kernel behind each host function (its start after the release)
	hfReps     = 4  // repetitions per stream count, gap and round
	hfLoopJobs = 64 // jobs per closed loop
)

// hfStreamsEnv is the probe's streams and events: stream i's kernel ends
// at kernel[i], its host function's stream span ends at release[i].
type hfStreamsEnv struct {
	lead            *timedStream
	streams         []device.Stream
	kernel, release []device.Event
	next            []device.Event // after the short kernel behind the host function
	done            device.Buffer
	q               device.Queue
	puts            []func()
}

func (c *calibrator) newHFStreamsEnv(h device.Host, n int) (*hfStreamsEnv, error) {
	lead, err := newTimedStream(h)
	if err != nil {
		return nil, err
	}
	env := &hfStreamsEnv{lead: lead, done: lead.done, q: h.NewQueue("host functions over streams")}
	for i := 0; i < n; i++ {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return nil, err
		}
		env.streams = append(env.streams, s)
		env.puts = append(env.puts, func() { env.q.Put(i) })
	}
	// Timed events: the probe reads their timestamps.
	for _, evs := range []*[]device.Event{&env.kernel, &env.release, &env.next} {
		if *evs, err = newEventsWith(h, n, device.EventOptions{}); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// hfBurst is one burst's figures: per host function in the order their
// kernels ended, its span on its stream (kernel end to the stream's next
// record) and its release after the first kernel's end, both from event
// timestamps; and the host's Gets of the functions' Puts, each after the
// first (Host.Now).
type hfBurst struct {
	span, release []float64 // ns, by arrival
	next          []float64 // ns, by arrival: the kernel behind it, release to its end, less its length
	gets          []float64 // ns after the first Get, in Get order
}

// burst issues, on n streams behind a 40 us kernel on the lead stream,
// kernel i of 5 + i gap us, a record, a host function that Puts i, a
// record, a 5 us kernel and a record, then Gets the n Puts and reads the
// events.
func (c *calibrator) hfBurst(h device.Host, env *hfStreamsEnv, n, gap int) (hfBurst, error) {
	var b hfBurst
	if err := h.Launch(env.lead.s, c.spinLaunch(us(hfLeadUs), env.done)); err != nil {
		return b, err
	}
	if err := h.Record(env.lead.e0, env.lead.s); err != nil {
		return b, err
	}
	for i := 0; i < n; i++ {
		s := env.streams[i]
		for _, issue := range []func() error{
			func() error { return h.Wait(s, env.lead.e0) },
			func() error { return h.Launch(s, c.spinLaunch(us(hfKernelUs+i*gap), env.done)) },
			func() error { return h.Record(env.kernel[i], s) },
			func() error { return h.HostFunc(s, env.puts[i]) },
			func() error { return h.Record(env.release[i], s) },
			func() error { return h.Launch(s, c.spinLaunch(us(hfNextUs), env.done)) },
			func() error { return h.Record(env.next[i], s) },
		} {
			if err := issue(); err != nil {
				return b, err
			}
		}
	}
	var first float64
	for i := 0; i < n; i++ {
		if _, ok := h.Get(env.q); !ok {
			return b, errors.New("host functions over streams: queue closed")
		}
		t := ns(h.Now())
		if i == 0 {
			first = t
		}
		b.gets = append(b.gets, t-first)
	}
	if err := h.Synchronize(); err != nil {
		return b, err
	}
	type cb struct{ end, release, next float64 }
	cbs := make([]cb, n)
	for i := 0; i < n; i++ {
		k, err := h.Elapsed(env.lead.e0, env.kernel[i])
		if err != nil {
			return b, err
		}
		r, err := h.Elapsed(env.lead.e0, env.release[i])
		if err != nil {
			return b, err
		}
		nx, err := h.Elapsed(env.lead.e0, env.next[i])
		if err != nil {
			return b, err
		}
		cbs[i] = cb{ns(k), ns(r), ns(nx)}
	}
	sort.SliceStable(cbs, func(x, y int) bool { return cbs[x].end < cbs[y].end })
	for _, x := range cbs {
		b.span = append(b.span, x.release-x.end)
		b.release = append(b.release, x.release-cbs[0].end)
		b.next = append(b.next, x.next-x.release-float64(hfNextUs)*1e3)
	}
	return b, nil
}

// hostFuncsOverStreams measures host functions becoming ready on 1, 2, 4
// and 8 streams at once (gap 0) or a gap apart (each stream's kernel ends
// the gap after the previous stream's), and SET's closed loop over the
// same stream counts. Per stream count and gap: the first host function's
// span on its stream (kernel end to the stream's next record: the
// callback thread's wake and the function), the mean span, the span's
// rise per host function in arrival order (least-squares slope: about
// front_end.callback_ns if queued functions share one wake, a whole span
// if each pays its own, 0 if they run side by side) and the mean interval
// between the host's Gets of their Puts. The closed loop: one host thread
// launches a kernel and a host function that Puts the stream on each of n
// streams, and per Put the next job on that stream, 64 jobs; per job, the
// wall time and the share of it spent in Get. It sets no field: the model
// is fitted from these figures (docs/results/calibration-h100.md).
func (c *calibrator) hostFuncsOverStreams(h device.Host) error {
	maxN := hfStreams[len(hfStreams)-1]
	env, err := c.newHFStreamsEnv(h, maxN)
	if err != nil {
		return err
	}
	figs := map[hfKey]*hfFigures{}
	for _, k := range hfKeys() {
		figs[k] = &hfFigures{}
	}
	if err := c.warmRounds(func(measured bool) error {
		for _, k := range hfKeys() {
			f, err := c.hfBursts(h, env, k)
			if err != nil {
				return err
			}
			if measured {
				figs[k].add(f)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, k := range hfKeys() {
		f := figs[k]
		what := fmt.Sprintf("host functions on %d streams, %d us apart", k.n, k.gap)
		c.record(what+": first span", "", "ns", hfSpanMethod+"the first ready's, median of 4 bursts per round", f.first)
		c.record(what+": mean span", "", "ns", hfSpanMethod+"mean over the burst, median of 4", f.mean)
		c.record(what+": next kernel delay", "", "ns", "event timestamps: the record after the host function to the one after a 5 us spin kernel behind it, less 5 us, mean over the burst, median of 4", f.next)
		if k.n > 1 {
			c.record(what+": last span", "", "ns", hfSpanMethod+"the last ready's, median of 4", f.last)
			c.record(what+": span rise per function", "", "ns", hfSpanMethod+"least-squares slope over arrival order, median of 4", f.slope)
			c.record(what+": host Get interval", "", "ns", "Host.Now between the Gets of the first and last Put, per interval, less the gap; median of 4", f.gets)
		}
	}
	return c.hostFuncLoop(h, env)
}

// hfSpanMethod opens the method of every host function span the probes
// record.
const hfSpanMethod = "event timestamps: a host function's span on its stream, the record after its kernel to the record after it; "

// hfKey is one burst shape: n streams, their host functions gap us apart.
type hfKey struct{ n, gap int }

// hfKeys is every burst shape the probe runs (one stream has no gap).
func hfKeys() []hfKey {
	var out []hfKey
	for _, n := range hfStreams {
		for _, gap := range hfGaps {
			if n > 1 || gap == 0 {
				out = append(out, hfKey{n, gap})
			}
		}
	}
	return out
}

// hfFigures is one burst shape's figures, one per round (or, from
// hfBursts, one: the median of its bursts).
type hfFigures struct{ first, last, mean, next, slope, gets []float64 }

func (f *hfFigures) add(o hfFigures) {
	f.first, f.last = append(f.first, o.first...), append(f.last, o.last...)
	f.mean, f.next = append(f.mean, o.mean...), append(f.next, o.next...)
	f.slope, f.gets = append(f.slope, o.slope...), append(f.gets, o.gets...)
}

// hfBursts runs hfReps bursts of shape k and returns their medians.
func (c *calibrator) hfBursts(h device.Host, env *hfStreamsEnv, k hfKey) (hfFigures, error) {
	var all hfFigures
	for r := 0; r < hfReps; r++ {
		b, err := c.hfBurst(h, env, k.n, k.gap)
		if err != nil {
			return hfFigures{}, err
		}
		all.first = append(all.first, b.span[0])
		all.last = append(all.last, b.span[k.n-1])
		all.mean = append(all.mean, meanOf(b.span))
		all.next = append(all.next, meanOf(b.next))
		if k.n > 1 {
			all.slope = append(all.slope, lsSlope(b.span))
			all.gets = append(all.gets, b.gets[k.n-1]/float64(k.n-1)-float64(k.gap)*1e3)
		}
	}
	return all.medians(), nil
}

// medians is f with each figure's values replaced by their median (none
// stays none).
func (f hfFigures) medians() hfFigures {
	med := func(xs []float64) []float64 {
		if len(xs) == 0 {
			return nil
		}
		return []float64{stats.Median(xs)}
	}
	return hfFigures{first: med(f.first), last: med(f.last), mean: med(f.mean), next: med(f.next),
		slope: med(f.slope), gets: med(f.gets)}
}

// hostFuncLoop is SET's dispatcher with a plain kernel for the job graph
// (hostFuncsOverStreams).
func (c *calibrator) hostFuncLoop(h device.Host, env *hfStreamsEnv) error {
	for _, kus := range hfLoopKernel {
		job := c.spinLaunch(us(kus), env.done)
		for _, n := range hfStreams {
			var perJob, waitShare []float64
			if err := c.warmRounds(func(measured bool) error {
				wall, wait, err := c.hfLoopRound(h, env, job, n)
				if measured {
					perJob = append(perJob, wall/hfLoopJobs)
					waitShare = append(waitShare, wait/wall)
				}
				return err
			}); err != nil {
				return err
			}
			what := fmt.Sprintf("host function loop, %d streams, %d us kernel", n, kus)
			c.record(what+": per job", "", "ns", "SET's dispatcher with a kernel for the graph: Host.Now over 64 jobs (launch + host function that Puts the stream; per Put the next job there), per job", perJob)
			c.record(what+": Get share", "", "", "the same loop: the share of its wall time the host spent in Get", waitShare)
		}
	}
	return h.Synchronize()
}

// hfLoopRound runs hfLoopJobs jobs of job over n streams as SET's
// dispatcher does and returns the wall time and the time in Get (ns).
func (c *calibrator) hfLoopRound(h device.Host, env *hfStreamsEnv, job *device.Launch, n int) (wall, wait float64, err error) {
	launch := func(i int) error {
		if err := h.Launch(env.streams[i], job); err != nil {
			return err
		}
		return h.HostFunc(env.streams[i], env.puts[i])
	}
	start := h.Now()
	next := 0
	for ; next < n; next++ {
		if err := launch(next); err != nil {
			return 0, 0, err
		}
	}
	for done := 0; done < hfLoopJobs; done++ {
		t := h.Now()
		v, ok := h.Get(env.q)
		if !ok {
			return 0, 0, errors.New("host function loop: queue closed")
		}
		wait += ns(h.Now() - t)
		if next < hfLoopJobs {
			if err := launch(v.(int)); err != nil {
				return 0, 0, err
			}
			next++
		}
	}
	return ns(h.Now() - start), wait, nil
}

// lsSlope is the least-squares slope of y over 0, 1, ..., len(y)-1.
func lsSlope(y []float64) float64 {
	n := float64(len(y))
	if n < 2 {
		return 0
	}
	mx := (n - 1) / 2
	my := meanOf(y)
	var num, den float64
	for i, v := range y {
		dx := float64(i) - mx
		num += dx * (v - my)
		den += dx * dx
	}
	return num / den
}
