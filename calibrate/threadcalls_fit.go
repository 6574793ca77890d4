package calibrate

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// Candidate values of the thread-call fits: the driver lock's contended
// hand-off 0 to 3 us in 50 ns steps (and its fraction in twentieths, when
// fitted); the queue lock held 0 to 1 us in 25
// ns steps and its contended hand-off 0 to 3 us in 100 ns steps.
var (
	driverLockHandoffs  = steps(0, 3000, 50)
	driverLockFractions = steps(0.05, 1, 0.05)
	callQueueLocks      = steps(0, 1000, 25)
	callQueueHandoffs   = steps(0, 3000, 100)
)

func steps(from, to, by float64) (vs []float64) {
	for i := 0; from+float64(i)*by <= to+1e-9; i++ {
		vs = append(vs, math.Round((from+float64(i)*by)*1e6)/1e6)
	}
	return vs
}

// FitThreadCalls fits, to a report's probes of scheduler threads' calls
// (calibrate --only "event records without timing", "launches over
// threads", "queue calls over threads", with "host thread hand-off"),
// simulated with cfg's every other field (the config the fields go into):
//   - host.untimed_record_ns: the timing-disabled record as measured;
//   - host.driver_lock_handoff_ns: the value whose simulated launch calls
//     on 1, 2, 4 and 8 threads (both loops of "launches over threads") are
//     closest to the measured ones, with the record above;
//   - host.queue_lock_ns and host.queue_lock_handoff_ns: the pair whose
//     simulated Put, Len, Get and shared Put on 1 to 8 threads (both loops
//     of "queue calls over threads") are closest, with the two above, and
//     host.handoff_ns the ping-pong's hand-off less two queue calls (so
//     that the simulated ping-pong stays what was measured).
//
// Closest is the mean absolute log ratio; the first of equals, smallest
// first. A probe the report lacks leaves its fields as cfg has them (a
// note says so); a report with none of them is an error. The queue lock
// stands for the queue calls' whole cost: the result leaves out cfg's
// host.queue_call_ns and queue_call_per_thread_ns.
func FitThreadCalls(rep *Report, cfg *sim.Config) (*Fitted, error) {
	c := *cfg
	c.Host.QueueCallNs, c.Host.QueueCallPerThreadNs = 0, 0
	f := &Fitted{Config: &c, Comments: map[string]string{}}
	fitted := 0
	if m, ok := rep.byName(untimedRecordName); ok && m.Value > 0 {
		c.Host.UntimedRecordNs = m.Value
		timed := ""
		if t, ok := rep.byName(timedRecordName); ok {
			timed = fmt.Sprintf("; a timing event's on the same host %s ns (host.record_ns %s)", num(t.Value), num(cfg.Host.RecordNs))
		}
		f.Comments["host.untimed_record_ns"] = fmt.Sprintf("measured: median of %d rounds, %s-%s ns (spread %.0f%%); %s%s",
			len(m.Rounds), num(m.Min), num(m.Max), 100*m.Spread(), m.Method, timed)
		fitted++
	} else {
		f.Notes = append(f.Notes, fmt.Sprintf("no %q: host.untimed_record_ns kept (calibrate --only \"event records without timing\")", untimedRecordName))
	}
	ok, err := f.fitDriverLockHandoff(rep)
	if err != nil {
		return nil, err
	}
	if ok {
		fitted++
	}
	if ok, err = f.fitCallQueueLock(rep); err != nil {
		return nil, err
	}
	if ok {
		fitted++
	}
	if fitted == 0 {
		return nil, errors.New("the report has none of \"event records without timing\", \"launches over threads\", \"queue calls over threads\" (gpusched calibrate --only ...)")
	}
	return f, nil
}

// callFigures is the measured value of each call of loops on every thread
// count, by measurement name; calls limits them to those calls (nil: all).
func callFigures(rep *Report, loops []callLoop, calls map[string]bool) map[string]float64 {
	want := map[string]float64{}
	for _, loop := range loops {
		for _, call := range loop.calls {
			if calls != nil && !calls[call] {
				continue
			}
			for _, n := range threadedCounts {
				if m, ok := rep.byName(callName(loop.name, call, n)); ok && m.Value > 0 {
					want[m.Name] = m.Value
				}
			}
		}
	}
	return want
}

// simulateCalls runs loops on a simulator of cfg, one round, and returns
// every call's figure by measurement name.
func simulateCalls(cfg *sim.Config, loops []callLoop) (map[string]float64, error) {
	return simulatedValues(cfg, "scheduler threads' calls", func(c *calibrator, h device.Host) error {
		c.rounds = 1 // deterministic: every round is the same
		return c.callLoops(h, loops)
	})
}

// throughputName is "launch throughput"'s measurement on n threads.
func throughputName(n int) string { return fmt.Sprintf("launch throughput, %d host thread(s)", n) }

// fitDriverLockHandoff fits host.driver_lock_handoff_ns to the launch and
// record calls of "launches over threads" (the calls the driver lock
// governs: a record right after the thread's launch takes the lock back
// while a waiter wakes), and, when the report also has "launch
// throughput" (a full calibration's, merged), host.driver_lock_fraction
// with it, to both: the fraction was fitted on the throughput alone,
// without a hand-off. False when the report has no launches over threads.
func (f *Fitted) fitDriverLockHandoff(rep *Report) (bool, error) {
	want := callFigures(rep, launchLoops, map[string]bool{"launch": true, "record": true})
	if len(want) < 2 {
		f.Notes = append(f.Notes, "no launches over threads measured: host.driver_lock_handoff_ns kept (calibrate --only \"launches over threads\")")
		return false, nil
	}
	rates := map[string]float64{}
	for _, n := range threadedCounts {
		if m, ok := rep.byName(throughputName(n)); ok && m.Value > 0 {
			rates[m.Name] = m.Value
		}
	}
	fractions, handoffs := []float64{f.Config.Host.DriverLockFraction}, driverLockHandoffs
	if len(rates) > 1 {
		// Twice the step over the two dimensions keeps the grid's
		// simulations a few hundred.
		fractions, handoffs = driverLockFractions, nil
		for i := 0; i < len(driverLockHandoffs); i += 2 {
			handoffs = append(handoffs, driverLockHandoffs[i])
		}
	}
	type fit struct {
		fraction, handoff, err float64
		got                    map[string]float64
	}
	best, zero := fit{err: math.Inf(1)}, fit{err: math.Inf(1)}
	for _, fr := range fractions {
		for _, h := range handoffs {
			try := *f.Config
			try.Host.DriverLockFraction, try.Host.DriverLockHandoffNs = fr, h
			got, err := simulateCalls(&try, launchLoops)
			if err != nil {
				return false, err
			}
			e := meanLogError(want, func(n string) float64 { return got[n] })
			if len(rates) > 1 {
				sim, err := simulateOn(&try, "launch throughput", (*calibrator).throughput)
				if err != nil {
					return false, err
				}
				for _, m := range sim.Measurements {
					got[m.Name] = m.Value
				}
				// The two probes weigh the same.
				e = (e + meanLogError(rates, func(n string) float64 { return got[n] })) / 2
			}
			if h == 0 && fr == f.Config.Host.DriverLockFraction {
				zero = fit{fr, h, e, got}
			}
			if e < best.err-1e-9 {
				best = fit{fr, h, e, got}
			}
		}
	}
	f.Config.Host.DriverLockFraction, f.Config.Host.DriverLockHandoffNs = best.fraction, best.handoff
	rows := figureRows(launchLoops, "launch", want, best.got) + "; record: " + figureRows(launchLoops[1:], "record", want, best.got)
	grid := fmt.Sprintf("hand-offs 0 to %.0f ns, the fraction %.2f", driverLockHandoffs[len(driverLockHandoffs)-1], f.Config.Host.DriverLockFraction)
	if len(rates) > 1 {
		var rs []string
		for _, n := range threadedCounts {
			if w, ok := rates[throughputName(n)]; ok {
				rs = append(rs, fmt.Sprintf("%d threads %.0f/s (simulated %.0f)", n, w, best.got[throughputName(n)]))
			}
		}
		rows += "; launch throughput " + strings.Join(rs, ", ")
		grid = fmt.Sprintf("fractions 0.05 to 1 and hand-offs 0 to %.0f ns, with \"launch throughput\" (1, 2, 4, 8 threads) weighing as much", driverLockHandoffs[len(driverLockHandoffs)-1])
	}
	what := fmt.Sprintf("\"launches over threads\", the launch and record calls' host time on 1, 2, 4, 8 threads (launch + synchronize; "+
		"launch + untimed record + event synchronize), simulated with %s; fraction %.2f and hand-off %.0f ns fit best, mean error %.1f%% (the base config's fraction and no hand-off: %.1f%%): %s",
		grid, best.fraction, best.handoff, pct(best.err), pct(zero.err), rows)
	f.Comments["host.driver_lock_handoff_ns"] = "fitted: " + what
	if len(rates) > 1 {
		f.Comments["host.driver_lock_fraction"] = "fitted with host.driver_lock_handoff_ns: " + what
	} else {
		f.Comments["host.driver_lock_fraction"] = "kept: no \"launch throughput\" in the reports (merge a full calibration's to fit it with the hand-off)"
	}
	return true, nil
}

// fitCallQueueLock fits host.queue_lock_ns, host.queue_lock_handoff_ns and
// host.handoff_ns to "queue calls over threads"; false when the report
// has none.
func (f *Fitted) fitCallQueueLock(rep *Report) (bool, error) {
	want := callFigures(rep, queueLoops, nil)
	if len(want) < 2 {
		f.Notes = append(f.Notes, "no queue calls over threads measured: host.queue_lock_ns and host.queue_lock_handoff_ns kept (calibrate --only \"queue calls over threads\")")
		return false, nil
	}
	pp, ok := rep.byName(pingPongName)
	if !ok || pp.Value <= 0 {
		return false, fmt.Errorf("the report has queue calls but no %q, which host.handoff_ns keeps (gpusched calibrate --only \"host thread hand-off\")", pingPongName)
	}
	bestL, bestH, bestErr, bestGot, err := gridQueueLock(f.Config, pp.Value, callQueueLocks, callQueueHandoffs,
		func(try *sim.Config) (map[string]float64, float64, error) {
			got, err := simulateCalls(try, queueLoops)
			return got, meanLogError(want, func(n string) float64 { return got[n] }), err
		})
	if err != nil {
		return false, err
	}
	var rows []string
	for _, call := range queueLoopCalls {
		rows = append(rows, call+": "+figureRows(queueLoops, call, want, bestGot))
	}
	what := fmt.Sprintf("\"queue calls over threads\": Put, Len, Get and shared Put on 1, 2, 4, 8 threads, beside launch + synchronize and back to back, "+
		"simulated with the lock held 0 to 1 us and contended hand-offs 0 to 3 us, host.handoff_ns the ping-pong's %s ns less two queue calls; "+
		"lock %.0f ns and hand-off %.0f ns fit best, mean error %.1f%%: %s", num(pp.Value), bestL, bestH, pct(bestErr), strings.Join(rows, "; "))
	queueLockComments(f.Comments, what, num(pp.Value), bestL)
	return true, nil
}

// pct is a mean absolute log error as a percentage.
func pct(e float64) float64 { return 100 * (math.Exp(e) - 1) }

// figureRows says, loop by loop, call's measured and simulated figures on
// each thread count: "launch + synchronize 1/2/4/8 threads 4800/... ns
// (simulated ...)".
func figureRows(loops []callLoop, call string, want, got map[string]float64) string {
	var rows []string
	for _, loop := range loops {
		var counts, ws, gs []string
		for _, n := range threadedCounts {
			name := callName(loop.name, call, n)
			if w, ok := want[name]; ok {
				counts = append(counts, fmt.Sprint(n))
				ws = append(ws, fmt.Sprintf("%.0f", w))
				gs = append(gs, fmt.Sprintf("%.0f", got[name]))
			}
		}
		if len(counts) > 0 {
			rows = append(rows, fmt.Sprintf("%s %s threads %s ns (simulated %s)", loop.name, strings.Join(counts, "/"), strings.Join(ws, "/"), strings.Join(gs, "/")))
		}
	}
	return strings.Join(rows, ", ")
}
