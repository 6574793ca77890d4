package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// livelock runs main on an H100 with the given watchdog budget and returns
// the livelock error it must end with.
func livelock(t *testing.T, polls int, span time.Duration, main func(h device.Host) error) *device.DeadlockError {
	t.Helper()
	d := newH100(t, WithLivelockBudget(polls, span))
	err := d.Run(main)
	var de *device.DeadlockError
	require.ErrorAs(t, err, &de)
	require.True(t, de.Livelock, "%v", err)
	return de
}

// blockedStream makes a stream whose kernel waits on an event nobody
// records.
func blockedStream(h device.Host) (device.Stream, error) {
	s, err := h.NewStream(device.StreamOptions{})
	if err != nil {
		return nil, err
	}
	e, err := h.NewEvent(device.EventOptions{})
	if err != nil {
		return nil, err
	}
	if err := h.Wait(s, e); err != nil {
		return nil, err
	}
	return s, h.Launch(s, spinLaunch(1, 32, time.Microsecond))
}

func TestPollingWorkThatCannotFinishIsALivelock(t *testing.T) {
	de := livelock(t, 1000, time.Minute, func(h device.Host) error {
		s, err := blockedStream(h)
		if err != nil {
			return err
		}
		for {
			if idle, err := h.StreamQuery(s); idle || err != nil {
				return err
			}
		}
	})
	assert.Equal(t, "host thread main polls StreamQuery(stream 0): 1000 polls over 399.6µs found it not done, and nothing can complete it", de.Waiting[0])
	assert.Contains(t, de.Waiting, "stream 0 waits on event 0 (never recorded)")
	assert.Contains(t, de.Error(), "livelock at ")
}

func TestTwoThreadsPollingEachOtherAreALivelock(t *testing.T) {
	// Stream i's kernel waits on gate i; thread a opens gate 0 once stream
	// 1 is idle, thread b gate 1 once stream 0 is.
	de := livelock(t, 500, time.Minute, func(h device.Host) error {
		var gates [2]device.Event
		var streams [2]device.Stream
		for i := range gates {
			var err error
			if gates[i], err = h.NewEvent(device.EventOptions{}); err != nil {
				return err
			}
			if streams[i], err = h.NewStream(device.StreamOptions{}); err != nil {
				return err
			}
			if err := h.Wait(streams[i], gates[i]); err != nil {
				return err
			}
			if err := h.Launch(streams[i], spinLaunch(1, 32, time.Microsecond)); err != nil {
				return err
			}
		}
		opener := func(gate device.Event, polled, on device.Stream) func(device.Host) error {
			return func(h device.Host) error {
				for {
					idle, err := h.StreamQuery(polled)
					if err != nil {
						return err
					}
					if idle {
						return h.Record(gate, on)
					}
				}
			}
		}
		h.Go("a", opener(gates[0], streams[1], streams[0]))
		h.Go("b", opener(gates[1], streams[0], streams[1]))
		return nil
	})
	require.Len(t, de.Waiting, 4)
	assert.Contains(t, de.Waiting[0], "host thread a polls StreamQuery(stream 1): ")
	assert.Contains(t, de.Waiting[1], "host thread b polls StreamQuery(stream 0): ")
	assert.Equal(t, []string{"stream 0 waits on event 0 (never recorded)", "stream 1 waits on event 1 (never recorded)"}, de.Waiting[2:])
}

func TestSpinningOnAnEmptyQueueIsALivelock(t *testing.T) {
	// Len alone never lets the engine run, so no callback can ever Put.
	de := livelock(t, 1000, time.Minute, func(h device.Host) error {
		q := h.NewQueue("done")
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		if err := h.HostFunc(s, func() { q.Put(1) }); err != nil {
			return err
		}
		for q.Len() == 0 {
			h.Spend(time.Microsecond)
		}
		return nil
	})
	assert.Equal(t, `host thread main calls Len(queue "done") 1000 times in a row with no driver call between them, so nothing else runs`, de.Waiting[0])
}

func TestPollingWithPausesEndsAtTheTimeBudget(t *testing.T) {
	de := livelock(t, 1<<30, 10*time.Millisecond, func(h device.Host) error {
		s, err := blockedStream(h)
		if err != nil {
			return err
		}
		for {
			idle, err := h.StreamQuery(s)
			if idle || err != nil {
				return err
			}
			h.Spend(time.Millisecond)
		}
	})
	// Eleven polls, 1 ms + 400 ns apart: the eleventh is 10.004 ms after
	// the first.
	assert.Contains(t, de.Waiting[0], "11 polls over 10.004ms")
}

func TestLegitimatePollingDoesNotTrip(t *testing.T) {
	d := newH100(t, WithLivelockBudget(100, time.Millisecond))
	var polls int
	require.NoError(t, d.Run(func(h device.Host) error {
		// A 2 ms kernel polled every 400 ns: 5000 polls, none of them of
		// a frozen device (the kernel's end is pending).
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		if err := h.Launch(s, spinLaunch(1, 32, 2*time.Millisecond)); err != nil {
			return err
		}
		for {
			idle, err := h.StreamQuery(s)
			if idle || err != nil {
				return err
			}
			polls++
		}
	}))
	assert.Greater(t, polls, 4000)

	// A thread polls an event that another records after 20 us of host
	// work: 50 polls of a frozen device, within the budget.
	d = newH100(t, WithLivelockBudget(100, time.Millisecond))
	require.NoError(t, d.Run(func(h device.Host) error {
		e, err := h.NewEvent(device.EventOptions{})
		if err != nil {
			return err
		}
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			return err
		}
		h.Go("recorder", func(h device.Host) error {
			h.Spend(20 * time.Microsecond)
			return h.Record(e, s)
		})
		for {
			if done, err := h.Query(e); done || err != nil {
				return err
			}
		}
	}))
}

func TestDefaultBudgetEndsALivelock(t *testing.T) {
	if testing.Short() {
		t.Skip("4 million polls")
	}
	d := newH100(t)
	start := time.Now()
	err := d.Run(func(h device.Host) error {
		s, err := blockedStream(h)
		if err != nil {
			return err
		}
		for {
			if idle, err := h.StreamQuery(s); idle || err != nil {
				return err
			}
		}
	})
	var de *device.DeadlockError
	require.ErrorAs(t, err, &de)
	assert.True(t, de.Livelock)
	assert.Contains(t, de.Waiting[0], "4194304 polls")
	t.Logf("livelock found after %v of wall time", time.Since(start))
}
