package experiments

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/experiments/fidelity"
	"gopkg.in/yaml.v3"
)

// ValidateOptions control a validation beyond its inputs.
type ValidateOptions struct {
	// Run: workers and progress of the simulator runs.
	Run RunOptions
	// Sim is the simulator config every GPU row is simulated on; empty:
	// the default config of each row's GPU model (DefaultSimConfig).
	Sim string
	// SimVariant, with Sim empty, simulates each row on its GPU's default
	// config's variant NAME-SimVariant instead (h100-datasheet for
	// "datasheet": the config before calibration).
	SimVariant string
	// Experiment is the experiment file of the GPU results; empty: the
	// file the results name (their source, under configs/experiments).
	Experiment string
	// Root is the directory the experiment files named by results are
	// looked up from (default: the working directory).
	Root string
	// SchedulerDefaults sets parameters of every scheduler entry of a kind
	// that does not set them itself, to simulate what an older GPU run ran
	// (set.warm=false for SET rows measured before SET warmed its execs):
	// kind -> parameter -> value. A kind written GLOB:KIND applies only to
	// the results files whose base name matches GLOB (path.Match), for
	// runs the files do not tell apart by their parameters (Queue before
	// session 21: heldout1[0-6]-set-gpu*.json:queue -> per_run_threads).
	SchedulerDefaults map[string]map[string]string
	// Keep, if set, selects the GPU rows to validate (the others are not
	// simulated); nil keeps every row.
	Keep func(*Row) bool
	// Fidelity are the thresholds of the order metrics.
	Fidelity fidelity.Options
	// HostSpeed simulates the rows of a file whose provenance has a host
	// probe (Provenance.Host) with the config's host costs scaled by the
	// probe's launch cost over the config's (scaleHostCosts), and notes
	// the factor (without it, the probe is noted); files without a probe
	// are simulated as they are.
	HostSpeed bool
	// Cache, if set, is the directory of simulated rows kept between runs
	// (simCacheKey says what they are kept under); empty: none.
	Cache string

	tmp     string    // where scaled configs are written
	digests *sync.Map // config spec -> ConfigDigest, for one ValidateFiles
}

// Validate runs e on the simulator config simSpec and on the device gpuSpec
// (normally cuda; any device works, so two simulator configs can be
// compared too) and joins the two result sets.
func Validate(e *Experiment, simSpec, gpuSpec string, opt RunOptions) (*Validation, *Results, *Results, error) {
	on := func(spec string) (*Results, error) {
		v := *e
		v.Devices = []string{spec}
		if err := checkDeviceSpec(spec); err != nil {
			return nil, fmt.Errorf("device %q: %w", spec, err)
		}
		return Run(&v, opt)
	}
	gpu, err := on(gpuSpec)
	if err != nil {
		return nil, nil, nil, err
	}
	simRes, err := on(simSpec)
	if err != nil {
		return nil, nil, nil, err
	}
	v := newValidation(fidelity.DefaultOptions())
	v.add(e, simRes, gpu, Source{GPU: gpuSpec, Experiment: e.Name, ExperimentFile: e.Source,
		Sim: []string{simSpec}}, func(*Row) string { return simSpec })
	v.finish()
	return v, simRes, gpu, nil
}

// ValidateFiles simulates the rows of committed GPU results (no GPU
// needed): for each file, the experiment that wrote it (as the results
// record it, or ValidateOptions.Experiment) runs on the simulator,
// restricted to the workloads and schedulers the file has, at its seed and
// sweep, and its rows are joined with the GPU's. The simulator results come back in
// the files' order.
//
// Files are simulated in parallel (ValidateOptions.Run.Workers at once,
// default one per CPU, the largest first) and joined in the order given, so
// the validation is the same whatever the worker count. With
// ValidateOptions.Cache, a file whose simulated rows are cached under the
// same key (simCacheKey: what the simulation reads, not the GPU's
// measurements) is not simulated again.
func ValidateFiles(paths []string, opt ValidateOptions) (*Validation, []*Results, error) {
	if opt.Fidelity == (fidelity.Options{}) {
		opt.Fidelity = fidelity.DefaultOptions()
	}
	v := newValidation(opt.Fidelity)
	tmp, err := os.MkdirTemp("", "gpusched-validate-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // best effort: a temporary directory of config copies
	opt.digests = &sync.Map{}
	files := make([]*simFile, len(paths))
	errs := make([]error, len(paths))
	workers := opt.Run.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	fileWorkers := min(workers, len(paths))
	run := opt.Run
	if fileWorkers > 1 { // the files share the workers: fewer files than workers run their rows on the rest
		run.Workers, run.Progress = workers/fileWorkers, nil
	}
	queue := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < fileWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				fo := opt
				fo.Run = run
				fo.tmp = filepath.Join(tmp, strconv.Itoa(i)) // a file's scaled configs apart from another's
				if errs[i] = os.Mkdir(fo.tmp, 0o755); errs[i] == nil {
					files[i], errs[i] = simulateFile(paths[i], fo)
				}
				if errs[i] != nil {
					errs[i] = fmt.Errorf("%s: %w", paths[i], errs[i])
				}
			}
		}()
	}
	for _, i := range largestFirst(paths) {
		queue <- i
	}
	close(queue)
	wg.Wait()
	sims := make([]*Results, len(paths))
	for i, f := range files {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		v.join(f)
		sims[i] = f.sim
	}
	v.finish()
	return v, sims, nil
}

// largestFirst is the indexes of paths, the largest file first (ties in
// the given order): the longest simulations start first, so the last
// ones to finish are short.
func largestFirst(paths []string) []int {
	idx := make([]int, len(paths))
	size := make([]int64, len(paths))
	for i, p := range paths {
		idx[i] = i
		if st, err := os.Stat(p); err == nil {
			size[i] = st.Size()
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return size[idx[a]] > size[idx[b]] })
	return idx
}

// simFile is one GPU result set simulated, ready to join.
type simFile struct {
	gpu, sim *Results
	sub      *Experiment
	src      Source
	configOf map[string]string // GPU name -> simulator config
	labels   map[string]string // scaled config -> what it shows as
}

// simulateFile reads one GPU result set and simulates its rows (or takes
// them from the cache).
func simulateFile(path string, opt ValidateOptions) (*simFile, error) {
	gpu, err := ReadResults(path)
	if err != nil {
		return nil, err
	}
	if opt.Keep != nil {
		gpu = keepRows(gpu, opt.Keep)
		if len(gpu.Rows) == 0 {
			return nil, fmt.Errorf("no row is selected")
		}
	}
	f := &simFile{gpu: gpu, src: Source{GPU: path, Experiment: gpu.Experiment}, configOf: map[string]string{}}
	src := &f.src
	e, err := experimentOf(gpu, opt.Experiment)
	if err != nil {
		return nil, err
	}
	src.ExperimentFile = e.Source
	if e.Source == "" {
		src.ExperimentFile = "as recorded in the results"
	}
	if gpu.Migrated != "" {
		src.FirstRun = true
		src.Notes = append(src.Notes, "converted from an earlier results format: its GPU rows timed the first run after Prepare, "+
			"where the simulator now times the run after an untimed one (sched.Warm)")
	}
	if e.Name != gpu.Experiment {
		src.Notes = append(src.Notes, fmt.Sprintf("the results are from experiment %q, the file is %q", gpu.Experiment, e.Name))
	}
	for i := range gpu.Rows {
		name := gpu.Rows[i].DeviceName
		if _, ok := f.configOf[name]; ok {
			continue
		}
		cfg, err := simConfigOf(name, opt)
		if err != nil {
			return nil, err
		}
		f.configOf[name] = cfg
		src.Sim = append(src.Sim, fmt.Sprintf("%s -> %s", name, cfg))
	}
	if f.labels, err = applyHostSpeed(gpu, f.configOf, opt, src); err != nil {
		return nil, err
	}
	sub, notes, err := simSubset(e, gpu, f.configOf)
	if err != nil {
		return nil, err
	}
	opt.SchedulerDefaults, err = defaultsFor(opt.SchedulerDefaults, path)
	if err != nil {
		return nil, err
	}
	notes = append(notes, sub.applyDefaults(opt.SchedulerDefaults, recordedParams(gpu))...)
	src.Notes = append(src.Notes, notes...)
	f.sub = sub
	run := opt.Run
	run.Sweep = gpu.Sweep
	run.Shard = Shard{}
	var key string
	if opt.Cache != "" && opt.Keep == nil && len(f.labels) == 0 { // scaled configs are temporary files: not cached
		if key, err = simCacheKeyOf(sub, run.Sweep, f.configOf, opt); err != nil {
			return nil, err
		}
		if f.sim = readSimCache(opt.Cache, key); f.sim != nil {
			return f, nil
		}
	}
	if f.sim, err = Run(sub, run); err != nil {
		return nil, err
	}
	if key != "" {
		if err := writeSimCache(opt.Cache, key, f.sim); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// join adds a simulated file's rows.
func (v *Validation) join(f *simFile) {
	first := len(v.Rows)
	v.add(f.sub, f.sim, f.gpu, f.src, func(r *Row) string { return f.configOf[r.DeviceName] })
	for i := first; i < len(v.Rows); i++ { // a scaled copy is shown as what it is a copy of
		if l, ok := f.labels[v.Rows[i].SimConfig]; ok {
			v.Rows[i].SimConfig = l
		}
	}
}

// applyHostSpeed points configOf (GPU name -> config) at copies of its
// configs with host costs scaled to gpu's probed host (opt.HostSpeed, a
// file with a probe), and notes the factor in src (and a probe not applied
// too). It returns each copy's label: the config it copies and the factor.
func applyHostSpeed(gpu *Results, configOf map[string]string, opt ValidateOptions, src *Source) (map[string]string, error) {
	probeNs, ok := probedLaunchNs(gpu)
	if !ok || opt.SimVariant != "" { // a variant (the config before calibration) runs as it is
		return nil, nil
	}
	labels := map[string]string{}
	for _, name := range sortedKeys(configOf) {
		spec := configOf[name]
		path, hs, err := hostSpeedConfig(spec, probeNs, opt.tmp)
		if err != nil {
			return nil, err
		}
		if !opt.HostSpeed {
			src.Notes = append(src.Notes, fmt.Sprintf("%s on %s, not applied (--host-speed=off)", hs, spec))
			continue
		}
		configOf[name] = path
		labels[path] = fmt.Sprintf("%s (host x%.3f)", spec, hs.factor())
		src.Notes = append(src.Notes, fmt.Sprintf("%s: %s's host costs scaled", hs, spec))
	}
	return labels, nil
}

// simConfigOf is the simulator config the rows of GPU gpuName are
// simulated on: opt.Sim, else the GPU's default config or its variant.
func simConfigOf(gpuName string, opt ValidateOptions) (string, error) {
	if opt.Sim != "" {
		if opt.SimVariant != "" {
			return "", fmt.Errorf("give a simulator config or a variant of the default ones, not both")
		}
		return opt.Sim, nil
	}
	cfg, err := DefaultSimConfig(gpuName)
	if err != nil || opt.SimVariant == "" {
		return cfg, err
	}
	v := cfg + "-" + opt.SimVariant
	if _, err := SimInfo(v); err != nil {
		return "", fmt.Errorf("no %s variant of config %s (for GPU %q): %w", opt.SimVariant, cfg, gpuName, err)
	}
	return v, nil
}

// keepRows is a copy of r with only the rows keep selects.
func keepRows(r *Results, keep func(*Row) bool) *Results {
	out := *r
	out.Rows = nil
	for i := range r.Rows {
		if keep(&r.Rows[i]) {
			out.Rows = append(out.Rows, r.Rows[i])
		}
	}
	return &out
}

// experimentOf is the experiment that wrote gpu: the named file, else the
// results' own record of it (the resolved experiment), with only the
// workloads and schedulers of gpu's rows.
func experimentOf(gpu *Results, file string) (*Experiment, error) {
	if file != "" {
		return LoadExperiment(file)
	}
	if gpu.Resolved == nil {
		return nil, fmt.Errorf("the results record no experiment; give its file with --experiment")
	}
	r := *gpu.Resolved
	if len(r.Sweep) == 0 { // build only what the rows ran (a sweep may rename schedulers: all of it)
		used := map[string]bool{r.Baseline: true}
		for i := range gpu.Rows {
			used["w\x00"+gpu.Rows[i].Workload], used[gpu.Rows[i].Scheduler] = true, true
		}
		r.Workloads, r.Schedulers = nil, nil
		for _, w := range gpu.Resolved.Workloads {
			if used["w\x00"+w.Name] {
				r.Workloads = append(r.Workloads, w)
			}
		}
		for _, sc := range gpu.Resolved.Schedulers {
			if used[sc.Name] {
				r.Schedulers = append(r.Schedulers, sc)
			}
		}
	}
	return experimentFromResolved(&r)
}

// experimentFromResolved rebuilds the experiment a results file records,
// through the experiment file decoder (so that its entries are checked as
// a file's are). Its devices are left out: validation names its own.
func experimentFromResolved(r *Resolved) (*Experiment, error) {
	entries := func(es []ResolvedEntry, key string) ([]map[string]any, error) {
		var out []map[string]any
		for _, e := range es {
			m := map[string]any{"name": e.Name}
			if key == "family" {
				m["family"] = e.Family
			} else {
				m["kind"] = e.Kind
			}
			if len(e.Params) > 0 {
				var p any
				if err := json.Unmarshal(e.Params, &p); err != nil {
					return nil, fmt.Errorf("%s %s: %w", key, e.Name, err)
				}
				m["params"] = p
			}
			out = append(out, m)
		}
		return out, nil
	}
	doc := map[string]any{"name": r.Name, "seed": r.Seed, "repetitions": r.Repetitions, "devices": []string{CUDADevice}}
	if r.Baseline != "" {
		doc["baseline"] = r.Baseline
	}
	if r.Warmup != nil {
		doc["warmup"] = *r.Warmup
	}
	var err error
	if doc["workloads"], err = entries(r.Workloads, "family"); err != nil {
		return nil, err
	}
	if doc["schedulers"], err = entries(r.Schedulers, "kind"); err != nil {
		return nil, err
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return ParseExperiment(data, "the resolved experiment "+r.Name)
}

// simSubset is e restricted to the workloads and schedulers gpu has rows
// of (the baseline kept), on the simulator configs, at gpu's seed, one
// repetition: the simulator is deterministic, so more would repeat it.
func simSubset(e *Experiment, gpu *Results, configOf map[string]string) (*Experiment, []string, error) {
	var notes []string
	sub := *e
	if gpu.Seed != e.Seed {
		notes = append(notes, fmt.Sprintf("seed %d of the results used (the experiment file says %d)", gpu.Seed, e.Seed))
		sub.Seed = gpu.Seed
	}
	if gpu.Baseline != e.Baseline {
		notes = append(notes, fmt.Sprintf("the results' baseline is %q, the file's %q: speedups use the results' rows", gpu.Baseline, e.Baseline))
	}
	workloads, scheds := map[string]bool{}, map[string]bool{}
	for i := range gpu.Rows {
		workloads[gpu.Rows[i].Workload] = true
		scheds[gpu.Rows[i].Scheduler] = true
	}
	if len(gpu.Sweep) == 0 { // a sweep may rename schedulers: keep them all
		sub.Workloads = nil
		for _, w := range e.Workloads {
			if workloads[w.Name] {
				sub.Workloads = append(sub.Workloads, w)
			}
		}
		sub.Schedulers = nil
		for _, s := range e.Schedulers {
			if scheds[s.Name] || s.Name == e.Baseline {
				sub.Schedulers = append(sub.Schedulers, s)
			}
		}
	}
	if len(sub.Workloads) == 0 || len(sub.Schedulers) == 0 {
		return nil, nil, fmt.Errorf("no workload or scheduler of the results is in experiment %s (%s)", e.Name, e.Source)
	}
	sub.Devices = nil
	for _, name := range sortedKeys(configOf) {
		if !contains(sub.Devices, configOf[name]) {
			sub.Devices = append(sub.Devices, configOf[name])
		}
	}
	for _, d := range sub.Devices {
		if err := checkDeviceSpec(d); err != nil {
			return nil, nil, fmt.Errorf("simulator config %q: %w", d, err)
		}
	}
	zero := 0
	sub.Repetitions, sub.Warmup = 1, &zero
	return &sub, notes, nil
}

// recordedParams reports whether every GPU row of scheduler entry name
// records parameter param: rows made since results record every
// parameter of a scheduler, whose values say how it ran.
func recordedParams(gpu *Results) func(name, param string) bool {
	return func(name, param string) bool {
		seen := false
		for i := range gpu.Rows {
			r := &gpu.Rows[i]
			if r.Scheduler != name {
				continue
			}
			if _, ok := r.SchedulerParams[param]; !ok {
				return false
			}
			seen = true
		}
		return seen
	}
}

// applyDefaults sets defaults[kind][param] on every scheduler entry of
// that kind whose parameters leave it out and whose GPU rows do not record
// it (recorded: a default stands for what older rows ran, and rows that
// record the parameter say what they ran; a global default would have
// simulated a newer file's rows as an older file's ran), and says where
// it did.
func (e *Experiment) applyDefaults(defaults map[string]map[string]string, recorded func(name, param string) bool) []string {
	var notes []string
	e.Schedulers = append([]SchedulerSpec(nil), e.Schedulers...) // entries may be shared with another experiment
	for i := range e.Schedulers {
		s := &e.Schedulers[i]
		params := defaults[s.Kind]
		if len(params) == 0 {
			continue
		}
		n := cloneNode(&s.Params)
		var set []string
		for _, k := range sortedKeys(params) {
			if !hasKey(n, k) && !recorded(s.Name, k) {
				setParam(n, []string{k}, params[k], s.Line)
				set = append(set, k+"="+params[k])
			}
		}
		if len(set) > 0 {
			s.Params = *n
			notes = append(notes, fmt.Sprintf("scheduler %s simulated with %s", s.Name, strings.Join(set, ", ")))
		}
	}
	return notes
}

// hasKey reports whether mapping n has key k.
func hasKey(n *yaml.Node, k string) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return true
		}
	}
	return false
}

// DefaultSimConfig is the built-in simulator config of a GPU model: the
// longest config name that the GPU's name contains as a word (h100 for
// "NVIDIA H100 80GB HBM3", h200 for "NVIDIA H200").
func DefaultSimConfig(gpuName string) (string, error) {
	words := strings.FieldsFunc(strings.ToLower(gpuName), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	best := ""
	for _, n := range SimConfigs() {
		if contains(words, strings.ToLower(n)) && len(n) > len(best) {
			best = n
		}
	}
	if best == "" {
		return "", fmt.Errorf("no built-in simulator config for GPU %q (have %s); pass --sim", gpuName, strings.Join(SimConfigs(), ", "))
	}
	return best, nil
}

// PickSimConfig chooses the simulator config that models gpu: a config
// whose device name is the GPU's own, preferring a measured one (written
// by gpusched calibrate, named *measured*); otherwise one with the same SM
// count whose name shares the GPU's model (h100 for "NVIDIA H100 80GB
// HBM3"). why says which rule chose it.
func PickSimConfig(gpu device.Info) (name, why string, err error) {
	type cand struct {
		name string
		info device.Info
	}
	var cands []cand
	for _, n := range SimConfigs() {
		info, err := SimInfo(n)
		if err != nil {
			continue
		}
		cands = append(cands, cand{n, info})
	}
	var exact []cand
	for _, c := range cands {
		if c.info.Name == gpu.Name {
			exact = append(exact, c)
		}
	}
	for _, c := range exact {
		if strings.Contains(c.name, "measured") {
			return c.name, fmt.Sprintf("measured config for %s", gpu.Name), nil
		}
	}
	if len(exact) > 0 {
		return exact[0].name, fmt.Sprintf("config named %s (not measured on this GPU; `gpusched calibrate` makes one)", gpu.Name), nil
	}
	lower := strings.ToLower(gpu.Name)
	for _, c := range cands {
		if c.info.SMs == gpu.SMs && strings.Contains(lower, strings.ToLower(c.name)) {
			return c.name, fmt.Sprintf("config %s has %s's SM count (%d) and model; not measured on it", c.name, gpu.Name, gpu.SMs), nil
		}
	}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.name
	}
	sort.Strings(names)
	return "", "", fmt.Errorf("no simulator config models %s (%d SMs); run `gpusched calibrate --device cuda -o my.yaml` or pass --sim (have %s)",
		gpu.Name, gpu.SMs, strings.Join(names, ", "))
}
