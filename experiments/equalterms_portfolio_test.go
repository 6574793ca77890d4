package experiments

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/portfolio"
	"github.com/gpusched/gpusched/workloads"
)

// TestPortfolioRunsItsPickOnEqualTerms: a row of the portfolio is timed
// exactly as the row of the schedule it picked, on the simulated H100 with
// the runner's protocol (runOnce on a row's device): the repetition that
// selects (and checks finalists on the device first) and a later one that
// recalls the selection both take the bare pick's makespan to the
// nanosecond (the selecting one to the simulator's rounding). Whatever the
// wrapper, the selection's check or a finalist left behind added to the
// timed run would show here.
func TestPortfolioRunsItsPickOnEqualTerms(t *testing.T) {
	for _, family := range []string{"dynamic-dnn", "kesco", "synthetic", "jobs-bp", "dnn-static"} {
		t.Run(family, func(t *testing.T) {
			prog := smallWorkload(t, family)
			dev, err := openSim("h100", false)
			require.NoError(t, err)
			defer func() { assert.NoError(t, dev.Close()) }()
			var memo portfolio.Memo
			// dynamic-dnn's routing program issues its kernels from the
			// host one by one, as the GPU row that the portfolio ran 4%
			// slower than serial's own row (it picked serial) does.
			p, err := portfolio.New(portfolio.DefaultOptions(), simModels, &memo)
			require.NoError(t, err)
			selecting, err := runOnce(dev, prog, p, false)
			require.NoError(t, err)
			p2, err := portfolio.New(portfolio.DefaultOptions(), simModels, &memo)
			require.NoError(t, err)
			recalled, err := runOnce(dev, prog, p2, false)
			require.NoError(t, err)
			require.Equal(t, 1.0, p2.Stats()["cached"], "the second repetition recalls the selection")
			require.Equal(t, p.Picked(), p2.Picked())

			fresh, err := openSim("h100", false)
			require.NoError(t, err)
			defer func() { assert.NoError(t, fresh.Close()) }()
			offers, err := DeviceOffers(fresh)
			require.NoError(t, err)
			bare, err := portfolio.Build(prog, offers, p.Picked())
			require.NoError(t, err)
			want, err := runOnce(fresh, prog, bare, false)
			require.NoError(t, err)
			// The selecting repetition's timed run starts later in the
			// device's run (after the check), and the simulator rounds
			// some durations from absolute times: 1 ns either way.
			assert.InDelta(t, want.makespan, selecting.makespan, 1, "%s: the selecting repetition against bare %s", family, p.Picked())
			assert.Equal(t, want.makespan, recalled.makespan, "%s: a recalled repetition against bare %s", family, p.Picked())
		})
	}
}

// allocating runs serial and allocates garbage on each run, noting
// whether a collection ran during its second (the timed) run.
type allocating struct {
	sched.Serial
	runs    int
	gcsSeen uint32
}

func (a *allocating) Run(h device.Host, in *workloads.Instance) error {
	a.runs++
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var keep [][]byte
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	runtime.KeepAlive(keep)
	runtime.ReadMemStats(&after)
	if a.runs == 2 {
		a.gcsSeen = after.NumGC - before.NumGC
	}
	return a.Serial.Run(h, in)
}

// notSimulated hides a simulator from runOnce's check for one, as a GPU.
type notSimulated struct{ *sim.Device }

// TestNoCollectionDuringATimedRun: on a real device the runner keeps Go's
// collector out of the timed run (64 MiB of garbage allocated in it would
// start several), and gives it back after.
func TestNoCollectionDuringATimedRun(t *testing.T) {
	prog := smallWorkload(t, "synthetic")
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	defer func() { assert.NoError(t, dev.Close()) }()
	a := &allocating{}
	_, err = runOnce(notSimulated{dev}, prog, a, false)
	require.NoError(t, err)
	require.Equal(t, 2, a.runs, "the warm run and the timed run")
	assert.Zero(t, a.gcsSeen, "collections during the timed run")
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	assert.Positive(t, percent, "the collector is back on after the run")
}
