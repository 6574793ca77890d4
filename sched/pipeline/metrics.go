package pipeline

import (
	"time"

	"github.com/gpusched/gpusched/device"
)

// since adds the time from t0 to now to *d and returns now.
func since(h device.Host, t0 time.Duration, d *time.Duration) time.Duration {
	now := h.Now()
	*d += now - t0
	return now
}

// Metrics is what a pipeline scheduler measured in its last Run, in SET's
// overhead model: the measured time T is the ideal time plus the gaps the
// schedule leaves between and within batches, and the scheduling share is
// the fraction of host time spent in scheduling calls.
type Metrics struct {
	Jobs        int
	HostThreads int
	// Makespan is T_measured: from Run's start to its last job's completion,
	// on the main host thread's clock.
	Makespan time.Duration
	// Schedule is t_schedule: host time inside scheduling calls, summed over
	// host threads. Wait is host time blocked in synchronization.
	Schedule, Wait time.Duration
	// Syncs counts blocking synchronizations; Steals counts jobs a SET
	// worker took from a peer; NodeUpdates counts graph node updates issued
	// and NodeUpdatesSkipped those skipped because the node already held
	// the job's parameters.
	Syncs, Steals, NodeUpdates, NodeUpdatesSkipped int
	// With timing events (the schedulers' Gaps option), SET's overhead
	// model: Ideal is the time the device had at least one job in flight,
	// InterGaps the idle time between batches of a batched schedule,
	// IntraGaps the rest of the idle time (see gapTimer).
	Timed                       bool
	Ideal, IntraGaps, InterGaps time.Duration
	// t_schedule's driver calls, split (SET's variants): the graph
	// launches, the node updates (NodeUpdates of them) and the host
	// function enqueues, each one's host time, so that the GPU's and the
	// simulator's per-call costs of a row compare directly (issue #18:
	// SET's dispatcher is host-bound on the GPU).
	Launches, HostFuncs                  int
	LaunchTime, UpdateTime, HostFuncTime time.Duration
	// A Run that prepared its scheduler inside its timing (Queue's
	// PerRunThreads): the host time of each part.
	SetupAnalyze, SetupStreams, SetupThreads time.Duration
}

// merge adds a host thread's counts and times to m: every field a host
// thread accumulates, none of the run's own (Jobs, HostThreads, Makespan
// and the timing events' terms).
func (m *Metrics) merge(o *Metrics) {
	m.Schedule += o.Schedule
	m.Wait += o.Wait
	m.Syncs += o.Syncs
	m.Steals += o.Steals
	m.NodeUpdates += o.NodeUpdates
	m.NodeUpdatesSkipped += o.NodeUpdatesSkipped
	m.Launches += o.Launches
	m.HostFuncs += o.HostFuncs
	m.LaunchTime += o.LaunchTime
	m.UpdateTime += o.UpdateTime
	m.HostFuncTime += o.HostFuncTime
}

// scheduled adds the host time since t0 to part and to t_schedule.
func (m *Metrics) scheduled(h device.Host, t0 time.Duration, part *time.Duration) {
	d := h.Now() - t0
	*part += d
	m.Schedule += d
}

// launched adds a graph launch that began at t0 to m's launch time and
// t_schedule.
func (m *Metrics) launched(h device.Host, t0 time.Duration) {
	m.Launches++
	m.scheduled(h, t0, &m.LaunchTime)
}

// hostFunc enqueues fn behind st's work, as a scheduling call of m.
func (m *Metrics) hostFunc(h device.Host, st device.Stream, fn func()) error {
	t := h.Now()
	if err := h.HostFunc(st, fn); err != nil {
		return err
	}
	m.HostFuncs++
	m.scheduled(h, t, &m.HostFuncTime)
	return nil
}

// Share is t_schedule / (T_measured x host threads): the mean fraction of
// each host thread's time spent scheduling (for one host thread, SET's
// t_schedule / T_measured).
func (m *Metrics) Share() float64 {
	if m.Makespan <= 0 || m.HostThreads == 0 {
		return 0
	}
	return m.Schedule.Seconds() / (m.Makespan.Seconds() * float64(m.HostThreads))
}

// JobsPerSecond is the throughput.
func (m *Metrics) JobsPerSecond() float64 {
	if m.Makespan <= 0 {
		return 0
	}
	return float64(m.Jobs) / m.Makespan.Seconds()
}

// Map is the metrics by name, as experiment tables print them.
func (m *Metrics) Map() map[string]float64 {
	out := map[string]float64{
		"jobs":                 float64(m.Jobs),
		"host_threads":         float64(m.HostThreads),
		"makespan_s":           m.Makespan.Seconds(),
		"jobs_per_s":           m.JobsPerSecond(),
		"t_schedule_s":         m.Schedule.Seconds(),
		"t_wait_s":             m.Wait.Seconds(),
		"schedule_share":       m.Share(),
		"syncs":                float64(m.Syncs),
		"steals":               float64(m.Steals),
		"node_updates":         float64(m.NodeUpdates),
		"node_updates_skipped": float64(m.NodeUpdatesSkipped),
	}
	perCall := func(key string, d time.Duration, n int) {
		if n > 0 {
			out[key] = float64(d.Nanoseconds()) / float64(n)
		}
	}
	perCall("graph_launch_ns_per_launch", m.LaunchTime, m.Launches)
	perCall("node_update_ns_per_update", m.UpdateTime, m.NodeUpdates)
	perCall("host_func_ns_per_call", m.HostFuncTime, m.HostFuncs)
	if m.SetupAnalyze+m.SetupStreams+m.SetupThreads > 0 {
		out["setup_analyze_ns"] = float64(m.SetupAnalyze.Nanoseconds())
		out["setup_streams_ns"] = float64(m.SetupStreams.Nanoseconds())
		out["setup_threads_ns"] = float64(m.SetupThreads.Nanoseconds())
	}
	if m.Timed {
		out["t_ideal_s"] = m.Ideal.Seconds()
		out["gaps_intra_s"] = m.IntraGaps.Seconds()
		out["gaps_inter_s"] = m.InterGaps.Seconds()
	}
	return out
}
