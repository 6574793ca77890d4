package sim

// rateEngine is a copy engine whose transfer can change speed while it
// moves: the device-to-device engine beside memory-moving kernels
// (bandwidth.go) and, with copy.duplex_slowdown, each host engine beside
// the other direction's (pcie.go). It runs one copy at a time in issue
// order: a copy waits copy.latency_ns, then moves; its transfer's work
// left is kept at its rate alone, so that a change of slowdown gives its
// new end.
type rateEngine struct {
	copy   *command // the copy on the engine (nil: idle)
	moving bool     // its data is moving (its latency is over)
	queue  []*command
	rest   float64 // ps of its transfer left, at its rate alone
	at     Time    // when rest was last brought up to date
	slow   float64 // its slowdown since at (0: not yet rated)
	seq    uint64  // the seq of its live end event
}

// emptied is e idle with nothing queued, keeping the queue's array.
func (e *rateEngine) emptied() rateEngine {
	clear(e.queue)
	return rateEngine{queue: e.queue[:0]}
}

// admit puts copy k on the engine at now, when it is idle (true: k's
// latency starts), or queues it behind the one on it.
func (e *rateEngine) admit(k *command, now Time) bool {
	if e.copy != nil {
		e.queue = append(e.queue, k)
		return false
	}
	e.copy = k
	k.start = now
	return true
}

// move starts the transfer of the engine's copy at now: rest ps of work
// at its rate alone, not yet rated.
func (e *rateEngine) move(now Time, rest float64) {
	e.moving, e.slow, e.at, e.rest = true, 0, now, rest
}

// finish ends the engine's copy k at now and returns the next queued copy
// to start (nil: none).
func (e *rateEngine) finish(k *command, now Time) *command {
	e.finishKeep(k, now)
	return e.pop()
}

// finishKeep ends the engine's copy k at now and leaves the queue as it is.
func (e *rateEngine) finishKeep(k *command, now Time) {
	k.end = now
	e.copy, e.moving, e.slow, e.seq = nil, false, 0, 0
}

// pop takes the first queued copy off the queue (nil: none).
func (e *rateEngine) pop() *command {
	if len(e.queue) == 0 {
		return nil
	}
	next := e.queue[0]
	copy(e.queue, e.queue[1:])
	e.queue[len(e.queue)-1] = nil
	e.queue = e.queue[:len(e.queue)-1]
	return next
}

// left is the transfer time the engine's copy has left at now, at its
// rate alone: all of it (whole) while its latency runs.
func (e *rateEngine) left(now Time, whole Time) Time {
	if !e.moving {
		return whole
	}
	rest := e.rest
	if e.slow > 0 {
		rest = max(0, rest-float64(now-e.at)/e.slow)
	}
	return psTime(rest)
}

// setSlow brings the moving copy's work left up to now at its slowdown so
// far and rates it s from now on; it returns the time its end lies after
// now, and false when s is its slowdown already (its end stands).
func (e *rateEngine) setSlow(now Time, s float64) (Time, bool) {
	if s == e.slow {
		return 0, false
	}
	if e.slow > 0 {
		e.rest = max(0, e.rest-float64(now-e.at)/e.slow)
	}
	e.at, e.slow = now, s
	return psTime(e.rest * s), true
}
