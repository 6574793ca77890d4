package calibrate

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// windowHandoffLoop is the loop of "scheduler threads behind a window"
// that host.queue_lock_ns and host.queue_lock_handoff_ns are fitted to:
// queue calls alone, no GPU.
const windowHandoffLoop = "hand-off only"

// pingPongName is "host thread hand-off"'s measurement: per hand-off of a
// ping-pong between two threads, that is a Put, the wake and a Get.
const pingPongName = "queue hand-off between host threads"

// Candidate values of the queue lock fit: the lock held 0 to 2 us in 25 ns
// steps, the contended hand-off 0 to 5 us in 100 ns steps.
var (
	queueLocks = func() (vs []float64) {
		for v := 0; v <= 2000; v += 25 {
			vs = append(vs, float64(v))
		}
		return vs
	}()
	queueLockHandoffs = func() (vs []float64) {
		for v := 0; v <= 5000; v += 100 {
			vs = append(vs, float64(v))
		}
		return vs
	}()
)

// FitQueueLock fits host.queue_lock_ns and host.queue_lock_handoff_ns, and
// host.handoff_ns with them, to a report's "scheduler threads behind a
// window", hand-off only (1, 2, 4 and 8 scheduler threads: the window
// thread's Put and Get per kernel and the scheduler threads' Get and Put,
// no GPU call) and its "queue hand-off between host threads" (the
// ping-pong, measured on the same host), simulated with cfg's every other
// field. host.handoff_ns is the ping-pong's hand-off less the two queue
// calls it makes (a Put and a Get), so that the ping-pong stays what was
// measured; the pair is the one whose simulated window figures are closest
// to the measured ones (mean absolute log ratio; the first of equals,
// smallest lock first). The lock stands for the queue calls' whole cost:
// the result leaves out cfg's host.queue_call_ns and
// queue_call_per_thread_ns. The result's Comments say where the fields
// come from and their error.
func FitQueueLock(rep *Report, cfg *sim.Config) (*Fitted, error) {
	pp, ok := rep.byName(pingPongName)
	if !ok || pp.Value <= 0 {
		return nil, fmt.Errorf("the report has no %q (gpusched calibrate --only \"host thread hand-off\")", pingPongName)
	}
	want := map[int]float64{}
	for _, n := range threadedCounts {
		if m, ok := rep.byName(windowName(windowHandoffLoop, n)); ok && m.Value > 0 {
			want[n] = m.Value
		}
	}
	if len(want) < 2 {
		return nil, fmt.Errorf("the report has no %q over 1 and more scheduler threads (gpusched calibrate --only \"scheduler threads behind a window\")", windowHandoffLoop)
	}
	c := *cfg
	c.Host.QueueCallNs, c.Host.QueueCallPerThreadNs = 0, 0
	f := &Fitted{Config: &c, Comments: map[string]string{}}
	bestL, bestH, bestErr, bestGot, err := gridQueueLock(&c, pp.Value, queueLocks, queueLockHandoffs,
		func(try *sim.Config) (map[int]float64, float64, error) {
			got, err := simulateWindow(try, windowHandoffLoop)
			return got, meanLogError(want, func(n int) float64 { return got[n] }), err
		})
	if err != nil {
		return nil, err
	}
	var rows []string
	for _, n := range threadedCounts {
		if w, ok := want[n]; ok {
			rows = append(rows, fmt.Sprintf("%d threads %.0f ns (simulated %.0f)", n, w, bestGot[n]))
		}
	}
	what := fmt.Sprintf("\"scheduler threads behind a window\", %s: time per kernel over 1, 2, 4, 8 scheduler threads, simulated with the lock held 0 to 2 us "+
		"and contended hand-offs 0 to 5 us, host.handoff_ns the ping-pong's %.0f ns less two queue calls; lock %.0f ns and hand-off %.0f ns fit best, mean error %.1f%%: %s",
		windowHandoffLoop, pp.Value, bestL, bestH, 100*(math.Exp(bestErr)-1), strings.Join(rows, ", "))
	queueLockComments(f.Comments, what, fmt.Sprintf("%.0f", pp.Value), bestL)
	return f, nil
}

// gridQueueLock tries every pair of host.queue_lock_ns in locks and
// host.queue_lock_handoff_ns in handoffs on cfg, with host.handoff_ns the
// ping-pong's hand-off pingPong less the two queue calls it makes (a Put
// and a Get; locks past half of it are not tried), scored by score (a
// mean absolute log error, with what was simulated); it sets the best
// pair into cfg (the first of equals, smallest lock first) and returns it
// with its error and simulated figures. A lock of 0 tries one hand-off:
// with no lock there is nothing to hand off.
func gridQueueLock[G any](cfg *sim.Config, pingPong float64, locks, handoffs []float64,
	score func(*sim.Config) (G, float64, error)) (lock, handoff, bestErr float64, bestGot G, err error) {
	bestErr = math.Inf(1)
	for _, l := range locks {
		if 2*l > pingPong {
			break // the ping-pong's hand-off holds two queue calls
		}
		for _, h := range handoffs {
			try := *cfg
			try.Host.HandoffNs, try.Host.QueueLockNs, try.Host.QueueLockHandoffNs = pingPong-2*l, l, h
			got, e, err := score(&try)
			if err != nil {
				return 0, 0, 0, bestGot, err
			}
			if e < bestErr-1e-9 {
				lock, handoff, bestErr, bestGot = l, h, e, got
			}
			if l == 0 {
				break // no lock: nothing to hand off
			}
		}
	}
	cfg.Host.HandoffNs, cfg.Host.QueueLockNs, cfg.Host.QueueLockHandoffNs = pingPong-2*lock, lock, handoff
	return lock, handoff, bestErr, bestGot, nil
}

// queueLockComments says where a queue-lock fit's three fields come from:
// what (the fit and its error), and host.handoff_ns as the ping-pong's
// hand-off (pingPong, as the fit prints it) less a Put's and a Get's lock.
func queueLockComments(comments map[string]string, what, pingPong string, lock float64) {
	comments["host.queue_lock_ns"] = "fitted with host.queue_lock_handoff_ns and host.handoff_ns: " + what
	comments["host.queue_lock_handoff_ns"] = "fitted with host.queue_lock_ns and host.handoff_ns: " + what
	comments["host.handoff_ns"] = fmt.Sprintf("fitted with host.queue_lock_ns: the ping-pong's hand-off (%s) %s ns less a Put's and a Get's queue lock (2 x %.0f ns)",
		pingPongName, pingPong, lock)
}

// simulateWindow runs one loop of "scheduler threads behind a window" on
// a simulator of cfg and returns its time per kernel by scheduler threads.
func simulateWindow(cfg *sim.Config, loop string) (map[int]float64, error) {
	rep, err := simulateOn(cfg, loop, func(c *calibrator, h device.Host) error {
		c.windowOnly = loop
		c.rounds = 1 // deterministic: every round is the same
		return c.windowHandoffs(h)
	})
	if err != nil {
		return nil, err
	}
	out := map[int]float64{}
	for _, n := range threadedCounts {
		if m, ok := rep.byName(windowName(loop, n)); ok {
			out[n] = m.Value
		}
	}
	return out, nil
}
