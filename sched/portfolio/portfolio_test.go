package portfolio

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/synthetic"
)

// simModel runs a schedule on the simulated H100 as the runner does:
// Prepare, the warm run, the timed run.
type simModel struct {
	calls atomic.Int64
	// lie, if set, replaces the makespan the simulator predicts.
	lie func(name string, d time.Duration) time.Duration
}

func (m *simModel) Estimate(p *workloads.Program, s sched.Scheduler) (Estimate, error) {
	m.calls.Add(1)
	d, races, err := measure(p, s)
	if m.lie != nil {
		d = m.lie(s.Name(), d)
	}
	return Estimate{Makespan: d, Races: races}, err
}

// measure times s's second run on p on a fresh simulated H100.
func measure(p *workloads.Program, s sched.Scheduler) (time.Duration, int, error) {
	dev, err := sim.NewNamed("h100-datasheet")
	if err != nil {
		return 0, 0, err
	}
	var span time.Duration
	err = dev.Run(func(h device.Host) (err error) {
		in, err := workloads.Bind(h, p)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, in.Release(h)) }()
		if err := prepare(h, in, s); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, cleanup(h, s)) }()
		if err := sched.Warm(h, s, in); err != nil {
			return err
		}
		t0 := h.Now()
		if err := s.Run(h, in); err != nil {
			return err
		}
		if err := h.Synchronize(); err != nil {
			return err
		}
		span = h.Now() - t0
		return nil
	})
	return span, len(dev.Races()), err
}

func program(t *testing.T) *workloads.Program {
	t.Helper()
	p := synthetic.Defaults()
	p.Layers, p.Width, p.Steps, p.Iters = 4, 5, 2, 64
	prog, err := synthetic.Generate(p, 2)
	require.NoError(t, err)
	return prog
}

// onH100 runs fn with prog bound on the simulated H100, and releases it.
func onH100(t *testing.T, prog *workloads.Program, fn func(h device.Host, in *workloads.Instance)) {
	t.Helper()
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	require.NoError(t, dev.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		require.NoError(t, err)
		defer func() { assert.NoError(t, in.Release(h)) }()
		fn(h, in)
		return nil
	}))
}

func models(m CostModel) Models {
	return func(string, device.Info) (CostModel, error) { return m, nil }
}

// every candidate's measured time on prog, by name.
func measureAll(t *testing.T, prog *workloads.Program) map[string]time.Duration {
	t.Helper()
	out := map[string]time.Duration{}
	for _, c := range candidates(prog, []sched.Trait{sched.TraitDependencyQueue}) {
		s, err := c.build()
		require.NoError(t, err)
		d, races, err := measure(prog, s)
		require.NoError(t, err, c.name)
		require.Zero(t, races, c.name)
		out[c.name] = d
	}
	return out
}

func fastest(times map[string]time.Duration) time.Duration {
	best := time.Duration(1 << 62)
	for _, d := range times {
		best = min(best, d)
	}
	return best
}

// TestPortfolioPicksTheFastestCandidate: with the simulator itself as the
// model, the portfolio's timed run is the fastest candidate's, and its
// stats name the pick at rank 0 with the predicted time it then ran in.
func TestPortfolioPicksTheFastestCandidate(t *testing.T) {
	prog := program(t)
	times := measureAll(t, prog)
	require.Greater(t, len(times), 15, "the synthetic DAG admits the DAG, runtime and per-step candidates")
	m := &simModel{}
	p, err := New(Options{Model: "test", Finalists: 1, Check: 0, Margin: 0}, models(m), nil)
	require.NoError(t, err)
	got, races, err := measure(prog, p)
	require.NoError(t, err)
	assert.Zero(t, races)
	assert.Equal(t, fastest(times), got)
	st := p.Stats()
	assert.Equal(t, 1.0, st["picked:"+p.Picked()])
	assert.Equal(t, 0.0, st["picked_rank"])
	assert.Equal(t, float64(got.Nanoseconds())/1e3, st["predicted_us"])
	assert.Equal(t, float64(len(times)), st["candidates"])
}

// TestDeviceCheckOverrulesAWrongModel: a model that ranks the candidates
// backwards (the fastest predicted slowest) picks the slowest; checking
// every candidate on the device picks the fastest again.
func TestDeviceCheckOverrulesAWrongModel(t *testing.T) {
	prog := program(t)
	times := measureAll(t, prog)
	backwards := func(_ string, d time.Duration) time.Duration { return time.Second - d }
	slowest := time.Duration(0)
	for _, d := range times {
		slowest = max(slowest, d)
	}
	for _, tc := range []struct {
		name string
		opt  Options
		want time.Duration
	}{
		{"model only", Options{Model: "test", Finalists: 1, Check: 0}, slowest},
		{"every candidate checked", Options{Model: "test", Finalists: 64, Check: 2, Margin: 10}, fastest(times)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.opt, models(&simModel{lie: backwards}), nil)
			require.NoError(t, err)
			got, _, err := measure(prog, p)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestRacyCandidatesAreDropped: a candidate the model saw race is never
// picked, however fast it is predicted.
func TestRacyCandidatesAreDropped(t *testing.T) {
	prog := program(t)
	var racy string
	m := &raceModel{simModel: &simModel{}, racy: &racy}
	p, err := New(Options{Model: "test", Finalists: 1, Check: 0}, models(m), nil)
	require.NoError(t, err)
	_, _, err = measure(prog, p)
	require.NoError(t, err)
	assert.NotEqual(t, racy, p.Picked())
	assert.Equal(t, 1.0, p.Stats()["candidates_racy"])
}

// raceModel reports a race, and a makespan of 1 ns, for the first
// candidate it is asked about.
type raceModel struct {
	*simModel
	once sync.Once
	racy *string
}

func (m *raceModel) Estimate(p *workloads.Program, s sched.Scheduler) (Estimate, error) {
	mine := false
	m.once.Do(func() { mine, *m.racy = true, s.Name() })
	if mine {
		return Estimate{Makespan: 1, Races: 1}, nil
	}
	return m.simModel.Estimate(p, s)
}

// TestMemoRecallsTheSelection: a second Portfolio with the same memo on
// the same program asks the model nothing and prepares the same pick.
func TestMemoRecallsTheSelection(t *testing.T) {
	prog := program(t)
	m := &simModel{}
	var memo Memo
	opt := Options{Model: "test", Finalists: 2, Check: 1, Margin: 0.5}
	first, err := New(opt, models(m), &memo)
	require.NoError(t, err)
	d1, _, err := measure(prog, first)
	require.NoError(t, err)
	calls := m.calls.Load()
	require.Positive(t, calls)
	second, err := New(opt, models(m), &memo)
	require.NoError(t, err)
	d2, _, err := measure(prog, second)
	require.NoError(t, err)
	assert.Equal(t, calls, m.calls.Load(), "no estimates for a recalled selection")
	assert.Equal(t, first.Picked(), second.Picked())
	assert.Equal(t, d1, d2)
	assert.Equal(t, 1.0, second.Stats()["cached"])
	assert.Equal(t, first.Stats()["prepare_us"], second.Stats()["prepare_us"])
}

func TestOptionsAreChecked(t *testing.T) {
	m := models(&simModel{})
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{Finalists: 3, Check: 3}, "model must name"},
		{Options{Model: "auto", Finalists: 0}, "finalists must be in [1, 64], got 0"},
		{Options{Model: "auto", Finalists: 3, Check: -1}, "check must be in [0, 20], got -1"},
		{Options{Model: "auto", Finalists: 3, Margin: -0.5}, "margin must be in [0, 10], got -0.5"},
	} {
		_, err := New(tc.opt, m, nil)
		assert.ErrorContains(t, err, tc.want)
	}
	_, err := New(DefaultOptions(), nil, nil)
	assert.ErrorContains(t, err, "no cost models")
}

// failing is a scheduler whose Prepare fails, as a finalist might on the
// device where the model ran it.
type failing struct{}

func (failing) Name() string                                   { return "failing" }
func (failing) Run(device.Host, *workloads.Instance) error     { return nil }
func (failing) Prepare(device.Host, *workloads.Instance) error { return errors.New("no such luck") }
func (failing) Cleanup(device.Host) error                      { return nil }

// TestAFinalistThatFailsOnTheDeviceIsPassedOver: the check keeps the
// finalists that run and counts the one that failed; it fails only when
// every finalist does.
func TestAFinalistThatFailsOnTheDeviceIsPassedOver(t *testing.T) {
	prog := program(t)
	cands := []candidate{
		{name: "failing", family: "runtime", build: func() (sched.Scheduler, error) { return failing{}, nil }},
		{name: "serial", family: "one stream", build: func() (sched.Scheduler, error) { return sched.NewSerial(), nil }},
	}
	p, err := New(Options{Model: "test", Finalists: 2, Check: 1}, models(&simModel{}), nil)
	require.NoError(t, err)
	onH100(t, prog, func(h device.Host, in *workloads.Instance) {
		pick, _, s, measured, failed, err := p.check(h, in, cands, []int{0, 1})
		require.NoError(t, err)
		assert.Equal(t, 1, pick)
		assert.Equal(t, 1, failed)
		assert.Positive(t, measured)
		require.NoError(t, cleanup(h, s))
		_, _, _, _, failed, err = p.check(h, in, cands, []int{0})
		assert.ErrorContains(t, err, "every finalist failed on the device: failing: no such luck")
		assert.Equal(t, 1, failed)
	})
}

// TestFinalistsCoverEveryFamily: the best predictions within the margin,
// then each other family's best, in prediction order; unchecked, only the
// best.
func TestFinalistsCoverEveryFamily(t *testing.T) {
	cands := []candidate{{name: "a", family: "graph"}, {name: "b", family: "graph"}, {name: "c", family: "streams"},
		{name: "serial", family: "one stream"}, {name: "d", family: "streams"}, {name: "e", family: "runtime"}}
	us := func(i int, d time.Duration) predicted {
		return predicted{idx: i, est: Estimate{Makespan: d * time.Microsecond}}
	}
	ranked := []predicted{us(1, 10), us(0, 10), us(4, 12), us(2, 30), us(5, 31), us(3, 100)}
	p, err := New(Options{Model: "test", Finalists: 3, Check: 1, Margin: 0.1}, models(&simModel{}), nil)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 0, 4, 5, 3}, p.finalists(ranked, cands), "b and a within 10%, then d, e and serial for their families")
	p.opt.Check = 0
	assert.Equal(t, []int{1}, p.finalists(ranked, cands))
}

// repeating runs the program `first` times on each of its first two runs
// after Prepare (the untimed one and the next) and `later` times after
// that: with first > later, a schedule that is fast only run back to back.
type repeating struct {
	serial       *sched.Serial
	first, later int
	runs         int
}

func (r *repeating) Name() string { return fmt.Sprintf("repeating(%d,%d)", r.first, r.later) }
func (r *repeating) Prepare(h device.Host, in *workloads.Instance) error {
	r.runs = 0
	return r.serial.Prepare(h, in)
}
func (r *repeating) Cleanup(h device.Host) error { return r.serial.Cleanup(h) }
func (r *repeating) Run(h device.Host, in *workloads.Instance) error {
	r.runs++
	n := r.later
	if r.runs <= 2 {
		n = r.first
	}
	for range n {
		if err := r.serial.Run(h, in); err != nil {
			return err
		}
	}
	return nil
}

// TestCheckTimesAsTheRunnerDoes: every timed run of the check follows a
// fresh Prepare and one untimed run, as a row's timed run does, so a
// schedule that is fast only on its third and later runs in one Prepare
// (three passes on its first two runs, one after) loses to one of two
// passes every run; timed back to back it would have won.
func TestCheckTimesAsTheRunnerDoes(t *testing.T) {
	prog := program(t)
	rep := func(first, later int) func() (sched.Scheduler, error) {
		return func() (sched.Scheduler, error) {
			return &repeating{serial: sched.NewSerial(), first: first, later: later}, nil
		}
	}
	cands := []candidate{{name: "warms up", family: "runtime", build: rep(3, 1)}, {name: "steady", family: "one stream", build: rep(2, 2)}}
	p, err := New(Options{Model: "test", Finalists: 2, Check: 3}, models(&simModel{}), nil)
	require.NoError(t, err)
	onH100(t, prog, func(h device.Host, in *workloads.Instance) {
		pick, _, s, measured, failed, err := p.check(h, in, cands, []int{0, 1})
		require.NoError(t, err)
		assert.Equal(t, 1, pick, "steady: two passes against three on the run the runner times")
		assert.Zero(t, failed)
		require.NoError(t, cleanup(h, s))
		one, err := timeRuns(h, in, &repeating{serial: sched.NewSerial(), first: 1, later: 1}, 1)
		require.NoError(t, err)
		assert.InDelta(t, 2*float64(one), float64(measured), 0.1*float64(one), "the pick's median is two passes")
	})
}

// searching stands for a search that finds another schedule every Prepare
// (as AutoGraph's does on a GPU, from the timings it measures): its k-th
// Prepare finds a schedule of passes[k] serial passes per run; Frozen
// gives the last one found.
type searching struct {
	passes   []int
	prepares *int
	found    int
	serial   *sched.Serial
}

func (s *searching) Name() string { return "searching" }
func (s *searching) Prepare(h device.Host, in *workloads.Instance) error {
	s.found = s.passes[*s.prepares%len(s.passes)]
	*s.prepares++
	s.serial = sched.NewSerial()
	return s.serial.Prepare(h, in)
}
func (s *searching) Cleanup(h device.Host) error { return s.serial.Cleanup(h) }
func (s *searching) Run(h device.Host, in *workloads.Instance) error {
	for range s.found {
		if err := s.serial.Run(h, in); err != nil {
			return err
		}
	}
	return nil
}
func (s *searching) Frozen() sched.Scheduler {
	return &repeating{serial: sched.NewSerial(), first: s.found, later: s.found}
}

// TestASearchIsKeptAsItsFastestRoundFound: a search whose outcome changes
// every Prepare is checked round by round; the pick is the schedule its
// fastest round found (one pass, from the second of three searches), built
// as that schedule from then on (frozen), without searching again.
func TestASearchIsKeptAsItsFastestRoundFound(t *testing.T) {
	prog := program(t)
	prepares := 0
	build := func() (sched.Scheduler, error) { return &searching{passes: []int{3, 1, 2}, prepares: &prepares}, nil }
	cands := []candidate{{name: "searching", family: "search", build: build}}
	p, err := New(Options{Model: "test", Finalists: 1, Check: 3}, models(&simModel{}), nil)
	require.NoError(t, err)
	onH100(t, prog, func(h device.Host, in *workloads.Instance) {
		pick, chosen, s, _, _, err := p.check(h, in, cands, []int{0})
		require.NoError(t, err)
		assert.Zero(t, pick)
		assert.True(t, chosen.frozen)
		assert.Equal(t, 3, prepares, "one search per round, none for the pick")
		require.NoError(t, cleanup(h, s))
		again, err := chosen.build()
		require.NoError(t, err)
		assert.Equal(t, &repeating{serial: sched.NewSerial(), first: 1, later: 1}, again, "the fastest round's one pass")
		assert.Equal(t, 3, prepares)
	})
}
