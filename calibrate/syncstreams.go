package calibrate

import (
	"fmt"

	"github.com/gpusched/gpusched/device"
)

// Stream counts of the synchronize-over-streams measurements, and the
// kernels per stream of its longer variant.
var syncOverStreams = []int{2, 4, 8, 16, 32, 64}

const syncManyKernels = 8

// The names of the two derived figures (fitSyncSwitch derives the second
// from a report that lacks it).
const (
	syncUnobservedName = "synchronize of a stream whose work completed unobserved"
	syncSwitchName     = "synchronize after one of another stream"
	syncSwitchMethod   = "per round, the mean over 2 to 64 streams of synchronizing each idle stream in turn less one stream again and again"
)

// syncPass is one round of one stream count: per stream, what a
// synchronize costs once the stream's work has completed unobserved
// (after one kernel, after syncManyKernels kernels, after a record only),
// what it costs again on the same streams (idle, already synchronized,
// each after one of another stream), what synchronizing the first stream
// s times in a row costs (host.sync_call_ns's case), and what launching
// on each idle, synchronized stream costs.
type syncPass struct{ afterKernel, afterMany, afterRecord, again, same, firstLaunch float64 }

// syncAfter enqueues what issue puts on each of the first s streams,
// synchronizes the last stream (its work was enqueued last: once it is
// done, every stream's is, the kernels being equal and short) and times
// the synchronizes of the others one by one: the host cost per
// synchronize of a stream whose work completed since it was last
// synchronized.
func syncAfter(h device.Host, ss *streamSet, s int, issue func(st device.Stream, i int) error) (float64, error) {
	for i := 0; i < s; i++ {
		if err := issue(ss.stream(i), i); err != nil {
			return 0, err
		}
	}
	if err := h.StreamSynchronize(ss.stream(s - 1)); err != nil {
		return 0, err
	}
	t0 := h.Now()
	for i := 0; i < s-1; i++ {
		if err := h.StreamSynchronize(ss.stream(i)); err != nil {
			return 0, err
		}
	}
	return ns(h.Now()-t0) / float64(s-1), nil
}

// timedEach is the mean host time of call over the first s streams.
func timedEach(h device.Host, s int, call func(i int) error) (float64, error) {
	t0 := h.Now()
	for i := 0; i < s; i++ {
		if err := call(i); err != nil {
			return 0, err
		}
	}
	return ns(h.Now()-t0) / float64(s), nil
}

// syncOnce is one round over s streams (ls: one synth_node launch per
// stream, evs: one event per stream).
func syncOnce(h device.Host, ss *streamSet, ls []*device.Launch, evs []device.Event, s int) (syncPass, error) {
	var p syncPass
	var err error
	syncAll := func(i int) error { return h.StreamSynchronize(ss.stream(i)) }
	launch := func(st device.Stream, i int) error { return h.Launch(st, ls[i]) }
	if p.afterKernel, err = syncAfter(h, ss, s, launch); err != nil {
		return p, err
	}
	if err := h.StreamSynchronize(ss.stream(s - 1)); err != nil { // the first timed one follows another stream's
		return p, err
	}
	if p.again, err = timedEach(h, s, syncAll); err != nil {
		return p, err
	}
	if err := h.StreamSynchronize(ss.stream(0)); err != nil { // the timed ones all follow one of stream 0
		return p, err
	}
	if p.same, err = timedEach(h, s, func(int) error { return h.StreamSynchronize(ss.stream(0)) }); err != nil {
		return p, err
	}
	many := func(st device.Stream, i int) error {
		for j := 0; j < syncManyKernels; j++ {
			if err := h.Launch(st, ls[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if p.afterMany, err = syncAfter(h, ss, s, many); err != nil {
		return p, err
	}
	record := func(st device.Stream, i int) error { return h.Record(evs[i], st) }
	if p.afterRecord, err = syncAfter(h, ss, s, record); err != nil {
		return p, err
	}
	if _, err = timedEach(h, s, syncAll); err != nil {
		return p, err
	}
	if p.firstLaunch, err = timedEach(h, s, func(i int) error { return h.Launch(ss.stream(i), ls[i]) }); err != nil {
		return p, err
	}
	return p, h.Synchronize()
}

// syncOverManyStreams measures what a scheduler's end of run costs on the
// host when it synchronizes every stream it used (#18: the synthetic DAGs'
// multi-stream rows miss more the more streams they synchronize): on 2 to
// 64 streams, each with a short synth_node kernel (the tiny shape's), the
// host cost per synchronize of a stream whose work completed since it was
// last synchronized, after 8 kernels a stream, after an event record only,
// the same again on the synchronized idle streams in turn, one stream
// synchronized again and again (the host.sync_call_ns case), and the
// launch cost on each idle synchronized stream. Reported per stream count;
// host.sync_switch_ns is, per round, the mean over the stream counts of
// the synchronizes in turn less those of one stream.
func (c *calibrator) syncOverManyStreams(h device.Host) error {
	maxS := syncOverStreams[len(syncOverStreams)-1]
	ss, evs, err := newStreamsAndEvents(h, maxS, maxS)
	if err != nil {
		return err
	}
	ls, err := newSynthLaunches(h, synthTiny, maxS)
	if err != nil {
		return err
	}
	per := make([][]syncPass, len(syncOverStreams))
	if err := c.warmRounds(func(measured bool) error {
		for i, s := range syncOverStreams {
			p, err := syncOnce(h, ss, ls, evs, s)
			if err != nil {
				return err
			}
			if measured {
				per[i] = append(per[i], p)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	c.recordSyncOverStreams(per)
	return nil
}

func (c *calibrator) recordSyncOverStreams(per [][]syncPass) {
	extra, unobserved := make([]float64, len(per[0])), make([]float64, len(per[0]))
	for i, s := range syncOverStreams {
		get := func(f func(syncPass) float64) []float64 { return pick(per[i], f) }
		k := float64(len(syncOverStreams))
		for r, p := range per[i] {
			extra[r] += (p.again - p.same) / k
			unobserved[r] += (p.afterKernel - p.again) / k
		}
		how := fmt.Sprintf("over %d streams, Host.Now around synchronizing each but the last (synchronized first)", s)
		c.record(fmt.Sprintf("synchronize after a kernel, %d streams", s), "", "ns",
			"a tiny synth_node kernel on each stream, then, "+how, get(func(p syncPass) float64 { return p.afterKernel }))
		c.record(fmt.Sprintf("synchronize after %d kernels, %d streams", syncManyKernels, s), "", "ns",
			fmt.Sprintf("%d tiny synth_node kernels on each stream, then, %s", syncManyKernels, how), get(func(p syncPass) float64 { return p.afterMany }))
		c.record(fmt.Sprintf("synchronize after a record, %d streams", s), "", "ns",
			"an event record on each stream, then, "+how, get(func(p syncPass) float64 { return p.afterRecord }))
		c.record(fmt.Sprintf("synchronize again, %d streams", s), "", "ns",
			fmt.Sprintf("right after the first, Host.Now around synchronizing each of %d idle streams again", s), get(func(p syncPass) float64 { return p.again }))
		c.record(fmt.Sprintf("synchronize of one stream again and again, %d times", s), "", "ns",
			fmt.Sprintf("Host.Now around synchronizing the first stream %d times in a row, idle", s), get(func(p syncPass) float64 { return p.same }))
		c.record(fmt.Sprintf("launch on a synchronized idle stream, %d streams", s), "", "ns",
			fmt.Sprintf("Host.Now around one tiny synth_node launch on each of %d idle, synchronized streams", s), get(func(p syncPass) float64 { return p.firstLaunch }))
	}
	c.record(syncUnobservedName, "", "ns",
		"per round, the mean over 2 to 64 streams of a synchronize after a kernel less a synchronize again", unobserved)
	c.record(syncSwitchName, "host.sync_switch_ns", "ns", syncSwitchMethod, extra)
}

// deriveSyncSwitch gives a report of the first "synchronizes over
// streams" (2026-11-26, without one stream synchronized again and again)
// host.sync_switch_ns from its own figures, before it is merged with
// others: per round, the mean over the stream counts of the synchronizes
// in turn less the report's host.sync_call_ns (100 synchronizes of one
// idle stream, same session); that report's unobserved-work figure had a
// field the simulator does not have and becomes reported only.
func deriveSyncSwitch(r *Report) {
	if _, ok := r.byName(syncSwitchName); ok {
		return
	}
	call, ok := r.Get("host.sync_call_ns")
	if !ok {
		return
	}
	var turns []float64
	for _, s := range syncOverStreams {
		m, ok := r.byName(fmt.Sprintf("synchronize again, %d streams", s))
		if !ok {
			return
		}
		if turns == nil {
			turns = make([]float64, len(m.Rounds))
		}
		if len(m.Rounds) != len(turns) {
			return
		}
		for i, v := range m.Rounds {
			turns[i] += (v - call.Value) / float64(len(syncOverStreams))
		}
	}
	for i := range r.Measurements {
		if r.Measurements[i].Name == syncUnobservedName {
			r.Measurements[i].Field = ""
		}
	}
	r.Measurements = append(r.Measurements, measurement(syncSwitchName, "host.sync_switch_ns", "ns",
		syncSwitchMethod+" (this report: less its host.sync_call_ns, 100 synchronizes of one idle stream)", turns))
}
