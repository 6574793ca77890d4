package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

// startCounter counts the host threads started and the streams created
// through it.
type startCounter struct {
	device.Host
	threads, streams int
}

func (c *startCounter) Go(name string, fn func(h device.Host) error) {
	c.threads++
	c.Host.Go(name, fn)
}

func (c *startCounter) NewStream(o device.StreamOptions) (device.Stream, error) {
	c.streams++
	return c.Host.NewStream(o)
}

// Queue starts its threads and creates its streams in Prepare and keeps
// them for every Run until Cleanup, as every scheduler prepares once: a
// timed run (the second, after the warm one) starts none and reports its
// own jobs and synchronizations only.
func TestQueueKeepsItsThreadsAcrossRuns(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 24, Size: 64}, 1)
	require.NoError(t, err)
	q, err := NewQueue(3)
	require.NoError(t, err)
	races, err := onBound(t, w.Program, func(h device.Host, in *workloads.Instance) error {
		c := &startCounter{Host: h}
		if err := q.Prepare(c, in); err != nil {
			return err
		}
		assert.Equal(t, 3, c.threads, "Prepare starts a thread per stream")
		assert.Equal(t, 3, c.streams)
		for run := 0; run < 2; run++ {
			if err := q.Run(c, in); err != nil {
				return err
			}
			m := q.Metrics()
			assert.Equal(t, 3, c.threads, "run %d starts no thread", run)
			assert.Equal(t, 3, c.streams, "run %d creates no stream", run)
			assert.InDelta(t, 24, m["jobs"], 0, "run %d", run)
			assert.InDelta(t, 24, m["syncs"], 0, "run %d: this run's synchronizations only", run)
		}
		return q.Cleanup(c)
	})
	require.NoError(t, err)
	assert.Empty(t, races)
}

// With PerRunThreads every Run ends its threads, so the run after the
// first prepares again: it starts a thread and creates a stream per worker
// and reports what each part of its preparation took (the first run, after
// Prepare, reports none); outputs stay race-free, and Cleanup destroys
// every run's streams.
func TestQueuePerRunThreadsPreparesInsideLaterRuns(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 24, Size: 64}, 1)
	require.NoError(t, err)
	q, err := NewQueue(3)
	require.NoError(t, err)
	q.PerRunThreads = true
	var destroyed int
	races, err := onBound(t, w.Program, func(h device.Host, in *workloads.Instance) error {
		c := &startCounter{Host: h}
		if err := q.Prepare(c, in); err != nil {
			return err
		}
		for run := 0; run < 3; run++ {
			if err := q.Run(c, in); err != nil {
				return err
			}
			m := q.Metrics()
			assert.Equal(t, 3*(run+1), c.threads, "run %d: threads started so far", run)
			assert.Equal(t, 3*(run+1), c.streams, "run %d: streams created so far", run)
			assert.InDelta(t, 24, m["syncs"], 0, "run %d", run)
			if run == 0 {
				assert.NotContains(t, m, "setup_threads_ns", "the first run was prepared before it")
			} else {
				assert.Greater(t, m["setup_threads_ns"], 0.0, "run %d starts its threads inside itself", run)
				// 24 jobs of 3 operations at analyzeCostPerOp, charged
				// with Spend (the simulator runs the Go work in no time).
				assert.InDelta(t, float64(72*analyzeCostPerOp.Nanoseconds()), m["setup_analyze_ns"], 1, "run %d analyzes the jobs again", run)
				assert.Greater(t, m["setup_streams_ns"], 0.0, "run %d creates its streams inside itself", run)
			}
		}
		destroyed = len(q.stale) + len(q.streams)
		return q.Cleanup(c)
	})
	require.NoError(t, err)
	assert.Empty(t, races)
	assert.Equal(t, 9, destroyed, "Cleanup destroys the three runs' streams")
}

// A job that fails ends its worker's thread and fails the run, and every
// later run says so at once, without waiting for the ended thread (no
// hang); Cleanup still ends the other threads.
func TestQueueReportsAFailedWorker(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 12, Size: 64}, 1)
	require.NoError(t, err)
	q, err := NewQueue(3)
	require.NoError(t, err)
	_, err = onBound(t, w.Program, func(h device.Host, in *workloads.Instance) error {
		require.NoError(t, q.Prepare(h, in))
		require.NoError(t, q.Run(h, in))
		// Destroying the workers' streams makes their next job fail.
		for _, s := range q.streams {
			require.NoError(t, h.Destroy(s))
		}
		first := q.Run(h, in)
		require.Error(t, first)
		second := q.Run(h, in)
		require.Error(t, second)
		assert.Contains(t, second.Error(), "failed in an earlier run")
		q.streams = nil // destroyed above
		return q.Cleanup(h)
	})
	// The device reports the failed threads' errors too.
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was destroyed")
}
