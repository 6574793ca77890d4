package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/device/cuda"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
)

// Resolved is an experiment as it ran: the file's matrix after defaults,
// automatic names and the sweep, with a digest of every simulator config it
// names. Results carry it, so a results file says what ran without the
// experiment file, and its digest tells results of one experiment from
// those of another with the same name.
type Resolved struct {
	// Runner is "" for gpusched run and sweep, the paper's name for
	// gpusched paper NAME run (whose hooks add checks and measurements).
	Runner      string `json:"runner,omitempty"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Seed        int64  `json:"seed"`
	Repetitions int    `json:"repetitions"`
	// Warmup is nil where the file leaves it to the device: 1 on a GPU,
	// 0 on the simulator (a paper's runner may set another default; every
	// row records the warm-up it ran).
	Warmup     *int             `json:"warmup,omitempty"`
	Baseline   string           `json:"baseline,omitempty"`
	Workloads  []ResolvedEntry  `json:"workloads"`
	Schedulers []ResolvedEntry  `json:"schedulers"`
	Devices    []ResolvedDevice `json:"devices"`
	Sweep      []SweepParam     `json:"sweep,omitempty"`
}

// ResolvedEntry is a workload (Family) or scheduler (Kind) entry with its
// parameters as the file gives them (before any sweep).
type ResolvedEntry struct {
	Name   string          `json:"name"`
	Family string          `json:"family,omitempty"`
	Kind   string          `json:"kind,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

// ResolvedDevice is a device as the file names it and, for a simulator,
// the SHA-256 of the config it loaded (ConfigDigest: the config and its
// kernel profile), so a changed config is a different experiment and a
// results file tells whether a config of its name still makes its rows.
type ResolvedDevice struct {
	Spec         string `json:"spec"`
	ConfigSHA256 string `json:"config_sha256,omitempty"`
}

// Resolve describes e run with sweep by runner ("" for gpusched run).
func Resolve(e *Experiment, sweep []SweepParam, runner string) (*Resolved, error) {
	r := &Resolved{Runner: runner, Name: e.Name, Description: e.Description, Seed: e.Seed,
		Repetitions: e.Repetitions, Warmup: e.Warmup, Baseline: e.Baseline, Sweep: sweep}
	for i := range e.Workloads {
		w := &e.Workloads[i]
		p, err := ParamsJSON(&w.Params)
		if err != nil {
			return nil, fmt.Errorf("workload %q: %w", w.Name, err)
		}
		r.Workloads = append(r.Workloads, ResolvedEntry{Name: w.Name, Family: w.Family, Params: p})
	}
	for i := range e.Schedulers {
		s := &e.Schedulers[i]
		p, err := ParamsJSON(&s.Params)
		if err != nil {
			return nil, fmt.Errorf("scheduler %q: %w", s.Name, err)
		}
		r.Schedulers = append(r.Schedulers, ResolvedEntry{Name: s.Name, Kind: s.Kind, Params: p})
	}
	for _, d := range e.Devices {
		rd := ResolvedDevice{Spec: d}
		if !IsCUDA(d) {
			digest, err := ConfigDigest(d)
			if err != nil {
				return nil, err
			}
			rd.ConfigSHA256 = digest
		}
		r.Devices = append(r.Devices, rd)
	}
	return r, nil
}

// ConfigDigest is the SHA-256 of the simulator config spec names (an
// embedded name or a .yaml path) as the simulator loads it: the config
// (sim.Config.Marshal) followed, where it names a kernel profile, by the
// profile (sim.Profile.Marshal), so a refitted config or profile has
// another digest. Comments do not count.
func ConfigDigest(spec string) (string, error) {
	cfg, err := sim.LoadConfig(spec)
	if err != nil {
		return "", err
	}
	data, err := cfg.Marshal()
	if err != nil {
		return "", fmt.Errorf("device %s: %w", spec, err)
	}
	if cfg.Profile != nil {
		p, err := cfg.Profile.Marshal()
		if err != nil {
			return "", fmt.Errorf("device %s: profile: %w", spec, err)
		}
		data = append(append(data, "---\n"...), p...)
	}
	return sha256Hex(data), nil
}

// Digest is the SHA-256 of r's JSON encoding.
func (r *Resolved) Digest() string {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // a Resolved holds only strings, numbers and valid raw JSON
	}
	return sha256Hex(b)
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ParamsJSON is a parameters mapping as compact JSON with sorted keys (nil
// for none), as results record it.
func ParamsJSON(n *yaml.Node) (json.RawMessage, error) {
	if n == nil || n.Kind == 0 {
		return nil, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(jsonable(v))
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	return b, nil
}

// jsonable turns YAML's generic maps (whose keys may be any scalar) into
// maps JSON can encode.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

// Provenance is which gpusched measured results and, on a GPU, where and
// when. Simulator runs record the build only, so their files do not depend
// on the machine or the day.
type Provenance struct {
	Gpusched string `json:"gpusched"`         // module version, "devel" for a source build
	Commit   string `json:"commit,omitempty"` // VCS revision, "-dirty" if modified
	GPU      *GPU   `json:"gpu,omitempty"`
	Date     string `json:"date,omitempty"` // UTC day of a GPU run
	// Host is the host machine of a GPU run and its launch cost before
	// and after the rows (gpusched run since session 9; older files have
	// none).
	Host *Host `json:"host,omitempty"`
	// Note records what a migrated file knows of where it ran.
	Note string `json:"note,omitempty"`
}

// GPU is the device a GPU run measured on.
type GPU struct {
	Name              string `json:"name"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	SMs               int    `json:"sms,omitempty"`
	MemoryBytes       int64  `json:"memory_bytes,omitempty"`
	Driver            string `json:"driver,omitempty"` // NVIDIA driver version
	CUDA              string `json:"cuda,omitempty"`   // CUDA version the driver supports
}

// Version is gpusched's module version ("devel" when built from source)
// and VCS commit ("" when the build does not record one, as in tests).
func Version() (version, commit string) {
	version = "devel"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version, ""
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		version = v
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if commit != "" && modified {
		commit += "-dirty"
	}
	return version, commit
}

// provenance describes this build, and the first GPU when gpu is set.
func provenance(gpu bool) Provenance {
	v, c := Version()
	p := Provenance{Gpusched: v, Commit: c}
	if !gpu {
		return p
	}
	p.Date = time.Now().UTC().Format("2006-01-02")
	p.GPU = &GPU{Driver: nvidiaDriver()}
	if ds, err := cuda.Devices(); err == nil && len(ds) > 0 {
		d := ds[0]
		p.GPU.Name, p.GPU.ComputeCapability, p.GPU.SMs, p.GPU.MemoryBytes, p.GPU.CUDA =
			d.Name, d.ComputeCapability, d.SMs, d.MemoryBytes, d.DriverVersion
	}
	return p
}

var driverVersion = regexp.MustCompile(`Kernel Module(?: for [^ ]+)?\s+([0-9][0-9.]+)`)

// nvidiaDriver reads the NVIDIA kernel module's version ("" if unknown).
func nvidiaDriver() string {
	data, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return ""
	}
	if m := driverVersion.FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return ""
}

// mergeProvenance joins the provenance of several parts, each distinct
// entry once, in order of first appearance.
func mergeProvenance(parts []*Results) []Provenance {
	var out []Provenance
	seen := map[string]bool{}
	for _, p := range parts {
		for _, pr := range p.Provenance {
			b, _ := json.Marshal(pr)
			if !seen[string(b)] {
				seen[string(b)] = true
				out = append(out, pr)
			}
		}
	}
	return out
}

// checkDigest reports whether r's digest is its resolved experiment's.
func (r *Results) checkDigest() error {
	if r.Resolved == nil {
		return fmt.Errorf("it records no resolved experiment")
	}
	if got := r.Resolved.Digest(); got != r.Digest {
		return fmt.Errorf("its digest %s is not its resolved experiment's (%s): the file was edited", short(r.Digest), short(got))
	}
	return nil
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

// ParamsNode turns parameters as results record them back into the YAML
// node factories decode (nil for none).
func ParamsNode(raw json.RawMessage) (*yaml.Node, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// BuildWorkload builds workload i of the resolved experiment, as the run
// built it.
func (r *Resolved) BuildWorkload(i int) (*workloads.Program, error) {
	w := r.Workloads[i]
	params, err := ParamsNode(w.Params)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", w.Name, err)
	}
	return NewWorkload(w.Family, params, r.Seed)
}

// YAML is r as an experiment file: what gpusched run reads to run r
// again. Its sweep, if any, is not part of the file (give it to gpusched
// sweep again), nor is its runner (gpusched paper NAME run).
func (r *Resolved) YAML() ([]byte, error) {
	f := Experiment{Name: r.Name, Description: r.Description, Seed: r.Seed, Repetitions: r.Repetitions, Warmup: r.Warmup, Baseline: r.Baseline}
	for _, w := range r.Workloads {
		p, err := ParamsNode(w.Params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.Name, err)
		}
		f.Workloads = append(f.Workloads, WorkloadSpec{Name: w.Name, Family: w.Family, Params: deref(p)})
	}
	for _, s := range r.Schedulers {
		p, err := ParamsNode(s.Params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		f.Schedulers = append(f.Schedulers, SchedulerSpec{Name: s.Name, Kind: s.Kind, Params: deref(p)})
	}
	for _, d := range r.Devices {
		f.Devices = append(f.Devices, d.Spec)
	}
	return yaml.Marshal(&f)
}

// deref is *n, or the zero node (omitted when marshalled) for nil.
func deref(n *yaml.Node) yaml.Node {
	if n == nil {
		return yaml.Node{}
	}
	return *n
}
