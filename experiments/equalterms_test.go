package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

// smallWorkloads is a small workload of every registered family, for tests
// that run every scheduler on every family. A family missing here fails
// TestEveryScheduleIsTimedOnEqualTerms: add one.
var smallWorkloads = map[string]string{
	"synthetic":        `{layers: 3, width: 3, steps: 2, iters: 16, max_blocks: 8}`,
	"synthetic-random": `{draw: 6}`, // seed 1's draw 6: three kernels
	"kesco":            `{bench: BS, scale: 0.05}`,
	"kesco-mix":        `{tasks: 3, scale: 0.02}`,
	"rl-physics":       `{envs: 32, envs_per_group: 16, steps: 2, warmup: 2, iterations: 1}`,
	"dynamic-dnn":      `{variant: routing, inputs: 2, scale: 8}`,
	"nas-static":       `{model: squeezenet, scale: 8}`,
	"dnn-static":       `{model: squeezenet, scale: 8}`,
	"jobs-sobel":       `{jobs: 4, size: 32}`,
	"jobs-sssp":        `{jobs: 4, vertices: 256, degree: 4, iterations: 2}`,
	"jobs-bp":          `{jobs: 4, batch: 4, inputs: 32, hidden: 16}`,
	"jobs-gemm":        `{jobs: 4, size: 32}`,
	"jobs-knn":         `{jobs: 4, points: 256, queries: 4, dims: 4, k: 4}`,
	"jobs-hotspot":     `{jobs: 4, size: 32, iterations: 2}`,
	"tiles-mlp":        `{model: gpt3, tokens: 64, hidden: 1024, ff: 512, no_data: true}`,
	"tiles-convpair":   `{model: resnet38, layer: 3, batch: 1, no_data: true}`,
	"file":             `{path: ../workloads/file/testdata/example.yaml}`,
}

func smallWorkload(t *testing.T, family string) *workloads.Program {
	t.Helper()
	src, ok := smallWorkloads[family]
	require.True(t, ok, "no small workload of family %s in smallWorkloads: add one", family)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(src), &doc))
	p, err := NewWorkload(family, doc.Content[0], 1)
	require.NoError(t, err)
	return p
}

// callLog counts, per host call kind, the calls a schedule makes, with the
// host time each was made at, and which graph execs have been launched.
type callLog struct {
	mu       sync.Mutex
	calls    []call
	created  map[device.GraphExec]time.Duration
	launched map[device.GraphExec]bool
}

type call struct {
	kind string
	at   time.Duration
	// since, for a first launch, is when its exec was instantiated.
	since time.Duration
}

func (c *callLog) add(x call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, x)
}

// between counts the calls made in [t0, t1) by kind; the first launch of
// an exec instantiated before t0 counts as "first launch of an earlier
// exec".
func (c *callLog) between(t0, t1 time.Duration) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for _, x := range c.calls {
		if x.at >= t0 && x.at < t1 {
			k := x.kind
			if k == "first-launch" && x.since < t0 {
				k = "first launch of an earlier exec"
			}
			out[k]++
		}
	}
	return out
}

// loggingHost forwards to Host and logs the calls that cost once what a
// steady-state run would not pay again: creating and destroying streams,
// events, memory, graphs and host threads, and a graph exec's first launch.
type loggingHost struct {
	device.Host
	log *callLog
}

func (h *loggingHost) note(kind string) { h.log.add(call{kind: kind, at: h.Now()}) }

func (h *loggingHost) NewStream(o device.StreamOptions) (device.Stream, error) {
	h.note("new-stream")
	return h.Host.NewStream(o)
}
func (h *loggingHost) NewEvent(o device.EventOptions) (device.Event, error) {
	h.note("new-event")
	return h.Host.NewEvent(o)
}
func (h *loggingHost) Destroy(r device.Resource) error { h.note("destroy"); return h.Host.Destroy(r) }
func (h *loggingHost) Malloc(n int64) (device.Buffer, error) {
	h.note("malloc")
	return h.Host.Malloc(n)
}
func (h *loggingHost) AllocHost(n int64, pinned bool) (*device.HostMem, error) {
	h.note("alloc-host")
	return h.Host.AllocHost(n, pinned)
}
func (h *loggingHost) BeginCapture(s device.Stream) error {
	h.note("capture")
	return h.Host.BeginCapture(s)
}
func (h *loggingHost) Instantiate(g device.Graph) (device.GraphExec, error) {
	h.note("instantiate")
	at := h.Now()
	x, err := h.Host.Instantiate(g)
	if err == nil {
		h.log.mu.Lock()
		h.log.created[x] = at
		h.log.mu.Unlock()
	}
	return x, err
}
func (h *loggingHost) GraphLaunch(x device.GraphExec, s device.Stream) error {
	h.log.mu.Lock()
	first, since := !h.log.launched[x], h.log.created[x]
	h.log.launched[x] = true
	h.log.mu.Unlock()
	if first {
		h.log.add(call{kind: "first-launch", at: h.Now(), since: since})
	}
	return h.Host.GraphLaunch(x, s)
}
func (h *loggingHost) Go(name string, fn func(device.Host) error) {
	h.note("thread-start")
	h.Host.Go(name, func(child device.Host) error { return fn(logging(child, h.log)) })
}

// The optional capabilities pass through.
type infoLoggingHost struct {
	*loggingHost
	info device.InfoHost
}

func (h *infoLoggingHost) DeviceInfo() device.Info { return h.info.DeviceInfo() }

type dqLoggingHost struct {
	*infoLoggingHost
	device.DependencyQueue
}

func logging(h device.Host, log *callLog) device.Host {
	lh := &infoLoggingHost{loggingHost: &loggingHost{Host: h, log: log}, info: h.(device.InfoHost)}
	if dq, ok := h.(device.DependencyQueue); ok {
		return &dqLoggingHost{lh, dq}
	}
	return lh
}

// loggingDevice runs every host thread through a loggingHost.
type loggingDevice struct {
	device.Device
	log *callLog
}

func (d *loggingDevice) Run(main func(device.Host) error) error {
	d.log = &callLog{created: map[device.GraphExec]time.Duration{}, launched: map[device.GraphExec]bool{}}
	return d.Device.Run(func(h device.Host) error { return main(logging(h, d.log)) })
}

// steadyRuns prepares s on prog, warms it (sched.Warm), then runs it twice
// more, and returns what each of those two runs called.
func steadyRuns(t *testing.T, dev *loggingDevice, prog *workloads.Program, s sched.Scheduler) (first, second map[string]int) {
	t.Helper()
	require.NoError(t, dev.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, prog)
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(h)) }()
		if p, ok := s.(sched.Preparer); ok {
			if err := p.Prepare(h, in); err != nil {
				return err
			}
			defer func() { assert.NoError(t, p.Cleanup(h)) }()
		}
		if err := sched.Warm(h, s, in); err != nil {
			return err
		}
		var spans [2][2]time.Duration
		for r := range spans {
			if err := h.Synchronize(); err != nil {
				return err
			}
			spans[r][0] = h.Now()
			if err := s.Run(h, in); err != nil {
				return err
			}
			if err := h.Synchronize(); err != nil {
				return err
			}
			spans[r][1] = h.Now()
		}
		first, second = dev.log.between(spans[0][0], spans[0][1]), dev.log.between(spans[1][0], spans[1][1])
		return nil
	}))
	return first, second
}

// TestEveryScheduleIsTimedOnEqualTerms runs every registered scheduler on
// a small workload of every family it applies to, and every scheduler that
// an experiment file names on the first family it applies to, on the
// simulated H100, and checks the rule of sched.Warm: the run the runner
// times pays exactly what a scheduler pays on every run (the same
// creations, captures, instantiations and destructions as the run after it,
// and no first launch of a graph exec prepared before it), so no
// scheduler's timed run carries a one-time cost that another's leaves out.
func TestEveryScheduleIsTimedOnEqualTerms(t *testing.T) {
	simDev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	devOffers, err := DeviceOffers(simDev)
	require.NoError(t, err)
	dev := &loggingDevice{Device: simDev}
	families := Workloads()
	progs := map[string]*workloads.Program{}
	for _, f := range families {
		progs[f] = smallWorkload(t, f)
	}
	check := func(family string, spec SchedulerSpec) {
		t.Run(family+"/"+spec.Name, func(t *testing.T) {
			prog := progs[family]
			s, err := NewScheduler(spec.Kind, paramsNode(&spec.Params))
			require.NoError(t, err)
			first, second := steadyRuns(t, dev, prog, s)
			assert.Zero(t, first["first launch of an earlier exec"], "a graph exec prepared before the run launched for the first time after the warm run")
			assert.Equal(t, second, first, "the run after the warm run pays what the next run does not (or the reverse)")

			s, err = NewScheduler(spec.Kind, paramsNode(&spec.Params))
			require.NoError(t, err)
			o, err := runOnce(dev, prog, s, false)
			require.NoError(t, err)
			assert.Equal(t, second, dev.log.between(o.t0, o.t1), "the runner's timed run is not a steady-state run")
		})
	}
	for _, kind := range Schedulers() {
		if strings.HasPrefix(kind, "test-") {
			continue // registered by this package's tests
		}
		s, err := NewScheduler(kind, nil)
		require.NoError(t, err)
		applied := 0
		for _, f := range families {
			if len(Applies(s, progs[f], devOffers)) == 0 {
				check(f, SchedulerSpec{Name: kind, Kind: kind})
				applied++
			}
		}
		assert.NotZero(t, applied, "scheduler %s applies to no family's small workload", kind)
	}
	for _, spec := range configSchedulers(t) {
		s, err := NewScheduler(spec.Kind, paramsNode(&spec.Params))
		require.NoError(t, err)
		for _, f := range families {
			if len(Applies(s, progs[f], devOffers)) == 0 {
				check(f, spec)
				break
			}
		}
	}
}

// configSchedulers are the schedulers the experiment files name, one of
// each by name and parameters, leaving out those with default parameters.
func configSchedulers(t *testing.T) []SchedulerSpec {
	files, err := filepath.Glob(filepath.Join("..", "configs", "experiments", "*.yaml"))
	require.NoError(t, err)
	seen := map[string]bool{}
	var out []SchedulerSpec
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var e struct {
			Schedulers []SchedulerSpec `yaml:"schedulers"`
		}
		require.NoError(t, yaml.Unmarshal(data, &e), f)
		for _, spec := range e.Schedulers {
			params, err := yaml.Marshal(&spec.Params)
			require.NoError(t, err)
			key := spec.Kind + " " + strings.TrimSpace(string(params))
			if seen[key] || spec.Params.Kind == 0 {
				continue
			}
			seen[key] = true
			spec.Name = key
			out = append(out, spec)
		}
	}
	return out
}
