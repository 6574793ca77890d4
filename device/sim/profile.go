package sim

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/configs"
	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/internal/stats"
)

// Profile is the measured block times of kernels on one GPU, with a model
// fitted per kernel, which the simulator uses in place of the Work estimate
// for the kernels it names (docs/SIMULATOR.md). `gpusched profile` writes
// it; a device config names it in its profile field. Every field is
// required; an unknown field is an error (ParseProfile).
type Profile struct {
	// Device is the measured GPU's name (device.Info.Name) and SMs its SM
	// count; a config may use the profile only with the same SM count.
	Device string `yaml:"device"`
	SMs    int    `yaml:"sms"`
	// Source says how the profile was measured (the command line).
	Source string `yaml:"source"`
	// BackToBackNs is what a launch adds to the kernel before it on one
	// stream (an empty kernel's per-launch time less MinBlockNs); it is
	// subtracted from every point to give the kernel's own duration.
	BackToBackNs float64 `yaml:"back_to_back_ns"`
	// MinBlockNs is an empty block's lifetime (time per wave of empty
	// blocks padded to one per SM).
	MinBlockNs float64 `yaml:"min_block_ns"`
	// L2Bytes (optional) is the measured device's L2 cache, and
	// EffectiveL2Bytes (optional) how much of it a launch's bytes may take
	// before they come from device memory, fitted (FitProfile): a launch
	// whose bytes exceed it pays a model's ns_per_byte_beyond_l2.
	L2Bytes          int64 `yaml:"l2_bytes,omitempty"`
	EffectiveL2Bytes int64 `yaml:"effective_l2_bytes,omitempty"`
	// BlockDispatchNs (optional) is the block distributor's time per
	// block (a full wave of empty blocks over its blocks, when that wave
	// takes longer than a one-per-SM wave; 0: not seen). The fit models
	// it as the simulator does (front_end.block_dispatch_ns).
	BlockDispatchNs float64 `yaml:"block_dispatch_ns,omitempty"`
	// ClockHz (optional) is the measured device's SM clock: the fit costs
	// a Work cycle one clock period where a kernel's points span too few
	// Cycles to fit that cost (calibrate.FitProfile).
	ClockHz int64 `yaml:"clock_hz,omitempty"`
	// DefaultWarpSlope is the co-residency factor's growth per resident
	// warp beyond a block's own, for kernels whose profile has no
	// co-residency curve: factor = 1 + slope x (warps - own warps). It is
	// the median over the curves measured.
	DefaultWarpSlope float64 `yaml:"default_warp_slope"`
	// Kernels are the profiled kernels, one entry per module.name.
	Kernels []KernelProfile `yaml:"kernels"`
}

// KernelProfile is one kernel's measurements and fitted block model.
type KernelProfile struct {
	Kernel       string     `yaml:"kernel"` // module.name, e.g. nn.nn_conv2d
	Regs         int        `yaml:"regs"`
	StaticShared int        `yaml:"static_shared"`
	Model        BlockModel `yaml:"model"`
	Fit          FitError   `yaml:"fit"`
	// Points are the measurements the model is fitted to.
	Points []ProfilePoint `yaml:"points"`
}

// BlockModel is a block's duration:
//
//	(ns + ns_per_cycle x Cycles + ns_per_flop x Flops + ns_per_byte x Bytes) x factor(W)
//
// (ns_per_byte_beyond_l2 more per byte for a launch whose bytes exceed the
// L2 cache),
// or, for a roofline model, the largest of the three Work terms in place
// of their sum (a block whose arithmetic and memory traffic overlap),
// where Cycles, Flops and Bytes are the launch's Work per block, and
// factor is the co-residency curve relative to the block alone: measured
// factors at resident warps, linear between them and beyond the last two
// (Profile.DefaultWarpSlope when the curve has fewer than two points). W
// is (1 - gpu_share) x the warps resident on the block's SM (its own
// included) + gpu_share x the mean resident warps per SM over the GPU: 0
// for a kernel limited by its SM (math pipes, shared memory), toward 1 for
// one limited by what all SMs share (device memory).
type BlockModel struct {
	Ns         float64 `yaml:"ns"`
	NsPerCycle float64 `yaml:"ns_per_cycle"`
	NsPerFlop  float64 `yaml:"ns_per_flop"`
	NsPerByte  float64 `yaml:"ns_per_byte"`
	// NsPerByteBeyondL2 (optional) is what a byte costs on top of
	// NsPerByte when the launch's bytes (blocks x Bytes) exceed the
	// profile's l2_bytes: device memory rather than L2.
	NsPerByteBeyondL2 float64 `yaml:"ns_per_byte_beyond_l2,omitempty"`
	// ColdNsPerByte (optional; fitted from points with cold samples) is
	// what a byte of a block's Work costs on top of the lone time when
	// the launch's read buffers are not in L2 (cold_ns less rewarm_ns, per
	// block of a wave): the simulator charges it times the fraction of
	// the launch's read bytes its L2 residency misses (l2Cache).
	ColdNsPerByte float64            `yaml:"cold_ns_per_byte,omitempty"`
	Roofline      bool               `yaml:"roofline"`
	GPUShare      float64            `yaml:"gpu_share"`
	CoResidency   []CoResidencyPoint `yaml:"coresidency"`
	// Neighbors (optional; 0: none) is how many of the kernel's profiled
	// launches nearest a launch without a point of its own correct the
	// model's lone time for it, and NeighborRadius the distance (in log2
	// units of the launches' features) at which one counts as much as the
	// model (NeighborLogRatio; fitted by calibrate.FitProfile).
	Neighbors      int     `yaml:"neighbors,omitempty"`
	NeighborRadius float64 `yaml:"neighbor_radius,omitempty"`
	// NeighborScales (optional) multiplies each feature's difference in
	// the rule's distance (LaunchFeatures' order; a feature past the list
	// counts 1): a feature the kernel's time per Work follows weighs
	// more, one it ignores less or nothing.
	NeighborScales []float64 `yaml:"neighbor_scales,omitempty,flow"`
}

// CoResidencyPoint is a block's duration with Warps resident warps on its
// SM, relative to the block alone (Factor 1 at its own warps).
type CoResidencyPoint struct {
	Warps  int     `yaml:"warps"`
	Factor float64 `yaml:"factor"`
}

// FitError is how well a kernel's model reproduces its points: the
// relative error of each point's predicted per-launch time (median and
// largest, percent), and the GPU's own spread, the median over points of
// (slowest - fastest sample) / median sample, percent. CVMedianPct and
// CVMaxPct (optional) are the same errors of the fallback that times
// launches without a point (the model with its neighbor rule) on launch
// shapes left out of the fit (calibrate.CrossValidate, 10 folds).
type FitError struct {
	Points      int     `yaml:"points"`
	MedianPct   float64 `yaml:"median_pct"`
	MaxPct      float64 `yaml:"max_pct"`
	SpreadPct   float64 `yaml:"spread_pct"`
	CVMedianPct float64 `yaml:"cv_median_pct,omitempty"`
	CVMaxPct    float64 `yaml:"cv_max_pct,omitempty"`
	// ColdPoints (optional) is the points with cold samples the cold
	// term was fitted on, and ColdMedianPct and ColdMaxPct the relative
	// errors of the cold launch time it predicts (rewarm + term) against
	// the measured cold time.
	ColdPoints    int     `yaml:"cold_points,omitempty"`
	ColdMedianPct float64 `yaml:"cold_median_pct,omitempty"`
	ColdMaxPct    float64 `yaml:"cold_max_pct,omitempty"`
}

// ProfilePoint is one launch measured alone: Launches back-to-back
// launches per sample on one idle stream, Ns the per-launch time of each
// sample (elapsed / Launches).
type ProfilePoint struct {
	Grid     int       `yaml:"grid"`     // blocks
	Threads  int       `yaml:"threads"`  // per block
	Shared   int       `yaml:"shared"`   // dynamic shared memory per block, bytes (padding included)
	PerSM    int       `yaml:"per_sm"`   // blocks one SM holds at that shared memory
	Forced   bool      `yaml:"forced"`   // shared memory padded to allow PerSM blocks per SM
	Cycles   float64   `yaml:"cycles"`   // Work per block
	Flops    float64   `yaml:"flops"`    //
	Bytes    float64   `yaml:"bytes"`    //
	Launches int       `yaml:"launches"` // per sample
	Ns       []float64 `yaml:"ns"`       // per-launch time of each sample
	// Scalars (optional) is the launch's scalar arguments in order
	// (ScalarSignature): a point with them times only launches with the
	// same ones (a 1x7 and a 7x1 convolution share every other field); a
	// point without them, any launch of its other fields.
	Scalars string `yaml:"scalars,omitempty"`
	// ColdNs (optional; `gpusched profile --cold-l2`) is one launch's time
	// per sample with the L2 cache evicted first (its inputs come from
	// device memory, as for a kernel whose buffers were last touched long
	// before), and RewarmNs the same single launch again right after each
	// (inputs in L2): their difference is what a cold launch costs beyond
	// a warm one at the same launch count (BlockModel.ColdNsPerByte).
	ColdNs   []float64 `yaml:"cold_ns,omitempty,flow"`
	RewarmNs []float64 `yaml:"rewarm_ns,omitempty,flow"`
}

// Median is the median of the point's samples.
func (p *ProfilePoint) Median() float64 { return stats.MedianOrZero(p.Ns) }

// Spread is (largest - smallest) / median of the point's samples.
func (p *ProfilePoint) Spread() float64 {
	m := p.Median()
	if m <= 0 || len(p.Ns) == 0 {
		return 0
	}
	lo, hi := p.Ns[0], p.Ns[0]
	for _, v := range p.Ns {
		lo, hi = min(lo, v), max(hi, v)
	}
	return (hi - lo) / m
}

// KernelKey is a kernel's profile name, module.name.
func KernelKey(k *device.Kernel) string { return k.Module + "." + k.Name }

// Lone is the model's block duration alone on its SM, in ns, for a block
// of a launch whose bytes exceed the L2 cache (beyondL2) or not.
func (m *BlockModel) Lone(w *device.Work, beyondL2 bool) float64 {
	c, f, b := m.NsPerCycle*w.Cycles, m.NsPerFlop*w.Flops, m.NsPerByte*w.Bytes
	if beyondL2 {
		b += m.NsPerByteBeyondL2 * w.Bytes
	}
	if m.Roofline {
		return m.Ns + max(c, f, b)
	}
	return m.Ns + c + f + b
}

// Factor is the co-residency factor of a block of own warps on an SM
// holding sm resident warps (its own included) while the GPU holds mean
// resident warps per SM, relative to the block alone; slope serves when
// the curve has fewer than two points.
func (m *BlockModel) Factor(sm, mean float64, own int, slope float64) float64 {
	w := max((1-m.GPUShare)*sm+m.GPUShare*mean, float64(own))
	if len(m.CoResidency) < 2 {
		return 1 + slope*(w-float64(own))
	}
	return max(m.curve(w)/m.curve(float64(own)), 1e-3)
}

// curve interpolates the co-residency curve at w warps, linearly between
// points and beyond the ends along the nearest segment.
func (m *BlockModel) curve(w float64) float64 {
	c := m.CoResidency
	i := 1
	for i < len(c)-1 && float64(c[i].Warps) < w {
		i++
	}
	a, b := c[i-1], c[i]
	t := (w - float64(a.Warps)) / float64(b.Warps-a.Warps)
	return max(a.Factor+t*(b.Factor-a.Factor), 1e-3)
}

// ParseProfile decodes a profile strictly (every field present, no unknown
// field) and checks its values; errors name source, line and field.
func ParseProfile(data []byte, source string) (*Profile, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		return nil, fmt.Errorf("%s: empty profile", source)
	}
	if err := checkFields(root.Content[0], reflect.TypeOf(Profile{}), "", source, map[string]int{}); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := p.check(); err != nil {
		var pe *pathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %s: %s", source, lineOf(root.Content[0], pe.path), pe.path, pe.msg)
		}
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return &p, nil
}

// pathError is a bad value at a path of the document (kernels[2].model.ns).
type pathError struct{ path, msg string }

func (e *pathError) Error() string { return e.path + ": " + e.msg }

func pathErrorf(path, format string, a ...any) error {
	return &pathError{path, fmt.Sprintf(format, a...)}
}

// lineOf is the line of the deepest node of path (keys and [i] indices)
// found in n.
func lineOf(n *yaml.Node, path string) int {
	line := n.Line
	for _, part := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			if n = mappingValue(n, key); n == nil {
				return line
			}
			line = n.Line
		}
		for rest != "" {
			var i int
			if _, err := fmt.Sscanf(rest, "%d]", &i); err != nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return line
			}
			n, line = n.Content[i], n.Content[i].Line
			_, rest, _ = strings.Cut(rest, "[")
		}
	}
	return line
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// check validates the values decoding cannot: finite, non-negative
// figures, a kernel name once each, curves in increasing warps.
func (p *Profile) check() error {
	if p.SMs <= 0 {
		return pathErrorf("sms", "must be positive, got %d", p.SMs)
	}
	for _, v := range []struct {
		x    float64
		name string
	}{{p.BackToBackNs, "back_to_back_ns"}, {p.MinBlockNs, "min_block_ns"}, {p.BlockDispatchNs, "block_dispatch_ns"}, {p.DefaultWarpSlope, "default_warp_slope"}} {
		if !finiteNonNeg(v.x) {
			return pathErrorf(v.name, "must be finite and not negative, got %g", v.x)
		}
	}
	seen := map[string]bool{}
	for i := range p.Kernels {
		k := &p.Kernels[i]
		at := fmt.Sprintf("kernels[%d]", i)
		if err := k.check(at); err != nil {
			return err
		}
		if seen[k.Kernel] {
			return pathErrorf(at+".kernel", "kernel %s is profiled twice", k.Kernel)
		}
		seen[k.Kernel] = true
	}
	return nil
}

func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }

func (k *KernelProfile) check(at string) error {
	if mod, name, ok := strings.Cut(k.Kernel, "."); !ok || mod == "" || name == "" {
		return pathErrorf(at+".kernel", "must be module.name, got %q", k.Kernel)
	}
	m := &k.Model
	for _, v := range []struct {
		x    float64
		name string
	}{{m.Ns, "ns"}, {m.NsPerCycle, "ns_per_cycle"}, {m.NsPerFlop, "ns_per_flop"}, {m.NsPerByte, "ns_per_byte"}, {m.NsPerByteBeyondL2, "ns_per_byte_beyond_l2"}, {m.ColdNsPerByte, "cold_ns_per_byte"}} {
		if !finiteNonNeg(v.x) {
			return pathErrorf(at+".model."+v.name, "must be finite and not negative, got %g", v.x)
		}
	}
	if !(m.GPUShare >= 0 && m.GPUShare <= 1) {
		return pathErrorf(at+".model.gpu_share", "must be between 0 and 1, got %g", m.GPUShare)
	}
	if m.Neighbors < 0 || (m.Neighbors > 0 && !(m.NeighborRadius > 0 && !math.IsInf(m.NeighborRadius, 1))) {
		return pathErrorf(at+".model.neighbors", "must not be negative, and with neighbors neighbor_radius must be positive and finite, got %d and %g", m.Neighbors, m.NeighborRadius)
	}
	for i, s := range m.NeighborScales {
		if !finiteNonNeg(s) {
			return pathErrorf(fmt.Sprintf("%s.model.neighbor_scales[%d]", at, i), "must be finite and not negative, got %g", s)
		}
	}
	for i, c := range m.CoResidency {
		where := fmt.Sprintf("%s.model.coresidency[%d]", at, i)
		if c.Warps <= 0 || !(c.Factor > 0) || math.IsInf(c.Factor, 1) {
			return pathErrorf(where, "warps and factor must be positive and finite, got %d and %g", c.Warps, c.Factor)
		}
		if i > 0 && c.Warps <= m.CoResidency[i-1].Warps {
			return pathErrorf(where, "warps must increase, got %d after %d", c.Warps, m.CoResidency[i-1].Warps)
		}
	}
	type signedKey struct {
		pointKey
		scalars string
	}
	seen := map[signedKey]int{}
	for i := range k.Points {
		pt := &k.Points[i]
		if err := pt.check(); err != nil {
			return pathErrorf(fmt.Sprintf("%s.points[%d]", at, i), "%v", err)
		}
		key := signedKey{pt.key(kernelNameOf(k.Kernel)), pt.Scalars}
		if j, ok := seen[key]; ok {
			return pathErrorf(fmt.Sprintf("%s.points[%d]", at, i), "measures the same launch as points[%d]", j)
		}
		seen[key] = i
	}
	return nil
}

func (p *ProfilePoint) check() error {
	if p.Grid <= 0 || p.Threads <= 0 || p.PerSM <= 0 || p.Launches <= 0 || p.Shared < 0 {
		return fmt.Errorf("grid, threads, per_sm and launches must be positive and shared not negative, got %d, %d, %d, %d, %d",
			p.Grid, p.Threads, p.PerSM, p.Launches, p.Shared)
	}
	if len(p.Ns) == 0 {
		return fmt.Errorf("ns lists no sample")
	}
	for _, v := range append([]float64{p.Cycles, p.Flops, p.Bytes}, p.Ns...) {
		if !finiteNonNeg(v) {
			return fmt.Errorf("work and samples must be finite and not negative, got %g", v)
		}
	}
	return checkScalars(p.Scalars)
}

// Marshal writes p as YAML that ParseProfile reads back, one point per
// line.
func (p *Profile) Marshal() ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(p); err != nil {
		return nil, err
	}
	flowLeaves(&n)
	return MarshalNode(&n)
}

// MarshalNode writes a YAML node the way configs and profiles are written
// (two-space indent), comments included.
func MarshalNode(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// flowLeaves writes every mapping or sequence that holds only scalars (a
// point, a curve entry, a sample list) on one line.
func flowLeaves(n *yaml.Node) {
	leaf := n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode
	for _, c := range n.Content {
		flowLeaves(c)
		if c.Kind != yaml.ScalarNode && (c.Kind != yaml.SequenceNode || c.Style != yaml.FlowStyle) {
			leaf = false
		}
	}
	if leaf && len(n.Content) > 0 {
		n.Style = yaml.FlowStyle
	}
}

// LoadProfile loads an embedded profile by name ("h100", from
// configs/profiles) or a file by path (ending in .yaml or .yml; a relative
// path is taken from dir when dir is not empty).
func LoadProfile(nameOrPath, dir string) (*Profile, error) {
	data, source, err := readProfile(nameOrPath, dir)
	if err != nil {
		return nil, err
	}
	return ParseProfile(data, source)
}

// readProfile reads what LoadProfile parses, and names its source.
func readProfile(nameOrPath, dir string) (data []byte, source string, err error) {
	if strings.HasSuffix(nameOrPath, ".yaml") || strings.HasSuffix(nameOrPath, ".yml") {
		path := nameOrPath
		if dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("profile: %w", err)
		}
		return data, path, nil
	}
	data, err = configs.FS.ReadFile("profiles/" + nameOrPath + ".yaml")
	if err != nil {
		return nil, "", fmt.Errorf("profile %q: no such embedded profile and not a .yaml path", nameOrPath)
	}
	return data, "configs/profiles/" + nameOrPath + ".yaml", nil
}

// configProfiles holds the profiles that configs loaded, by source and
// contents, so that a profile is parsed once per process: parsing the
// calibrated H100 profile (125 KB of YAML) was most of the CPU time of
// creating a simulated device, which experiments and tests do hundreds of
// times. Every config that loads the same file shares its Profile, which is
// therefore read-only (Config.Profile).
var configProfiles sync.Map // profileKey -> *Profile

type profileKey struct{ source, data string }

// sharedProfile is LoadProfile through configProfiles.
func sharedProfile(nameOrPath, dir string) (*Profile, error) {
	data, source, err := readProfile(nameOrPath, dir)
	if err != nil {
		return nil, err
	}
	key := profileKey{source, string(data)}
	if p, ok := configProfiles.Load(key); ok {
		return p.(*Profile), nil
	}
	p, err := ParseProfile(data, source)
	if err != nil {
		return nil, err
	}
	shared, _ := configProfiles.LoadOrStore(key, p)
	return shared.(*Profile), nil
}

// profileIndex is a profile ready for the block scheduler: kernels by
// module and name, measured points by launch.
type profileIndex struct {
	slope     float64
	sms       float64
	l2        float64
	cold      bool // some kernel has a cold term: track L2 residency (l2Cache)
	prof      *Profile
	kernels   map[kernelName]*BlockModel
	points    map[pointKey]*pointSet
	neighbors map[kernelName][]Neighbor
	// span is the bytes of the largest launch each kernel's points moved
	// (grid x Work.Bytes): a model fitted only on launches within the L2
	// has no device-memory rate in its warm terms (coldShare). A model
	// without points (written by hand) has none.
	span map[kernelName]float64
	// demand is each kernel's DemandRange: the device-memory demands its
	// model's times were fitted over (memload.go).
	demand map[kernelName][2]float64
}

type kernelName struct{ module, name string }

// kernelNameOf splits a profile's module.name.
func kernelNameOf(key string) kernelName {
	mod, name, _ := strings.Cut(key, ".")
	return kernelName{mod, name}
}

// newProfileIndex indexes p for a simulator with the residency rate
// model at threshold retime (0: off), which its points' lone times follow.
func newProfileIndex(p *Profile, retime float64) *profileIndex {
	if p == nil {
		return nil
	}
	x := &profileIndex{slope: p.DefaultWarpSlope, sms: float64(p.SMs), l2: float64(p.EffectiveL2Bytes),
		prof: p, kernels: map[kernelName]*BlockModel{}, points: pointsOf(p, retime), neighbors: neighborsOf(p, retime),
		span: map[kernelName]float64{}, demand: map[kernelName][2]float64{}}
	for i := range p.Kernels {
		k := &p.Kernels[i]
		name := kernelNameOf(k.Kernel)
		x.kernels[name] = &k.Model
		lo, hi := DemandRange(p, k)
		x.demand[name] = [2]float64{lo, hi}
		for _, pt := range k.Points {
			x.span[name] = max(x.span[name], float64(pt.Grid)*pt.Bytes)
		}
		x.cold = x.cold || k.Model.ColdNsPerByte > 0
	}
	return x
}

// ColdShare is the share of a cold launch's extra time (its cold term)
// that a launch moving launchBytes (blocks x Work.Bytes) pays: all of it
// up to the effective L2, none from the L2's size on (its bytes come from
// device memory even warm, as its measured point already shows), linearly
// between; without both sizes, all of it up to whichever is known.
// Measured on the H100 (--cold-l2): launches over 50 MB run as fast warm
// as cold, those under the effective L2 up to 2.5x slower cold.
func (p *Profile) ColdShare(launchBytes float64) float64 {
	eff, l2 := float64(p.EffectiveL2Bytes), float64(p.L2Bytes)
	switch {
	case eff <= 0 && l2 <= 0, launchBytes <= eff:
		return 1
	case l2 <= eff:
		if eff > 0 {
			return 0
		}
		return max(0, min(1, (l2-launchBytes)/l2))
	}
	return max(0, min(1, (l2-launchBytes)/(l2-eff)))
}

// coldShare is the share of its cold term (BlockModel.ColdNsPerByte x
// bytes) a launch of k moving launchBytes pays: Profile.ColdShare of its
// bytes not resident in L2 (miss), plus, for a launch larger than any
// point its model was fitted on, what the back-to-back hits its warm terms
// assume and it no longer gets cost: ColdShare at its largest point less
// ColdShare at this launch. A model fitted within the L2 and a launch
// beyond it thus pay the whole term: the L2's rate extrapolated to a
// launch that streams from device memory (heldout6-kesco M1 x1.5).
func (x *profileIndex) coldShare(k *device.Kernel, launchBytes, miss float64) float64 {
	here := x.prof.ColdShare(launchBytes)
	span, ok := x.span[kernelName{k.Module, k.Name}]
	lost := 0.0
	if ok && launchBytes > span {
		lost = max(0, x.prof.ColdShare(span)-here)
	}
	return miss*here + lost
}

// beyondL2 reports whether a launch of blocks blocks of Work w moves more
// bytes than the L2 holds for it (the profile's effective L2).
func (x *profileIndex) beyondL2(blocks int, w *device.Work) bool {
	return x.l2 > 0 && float64(blocks)*w.Bytes > x.l2
}

// model is k's block model, or nil when the profile has none.
func (x *profileIndex) model(k *device.Kernel) *BlockModel {
	if x == nil || k == nil {
		return nil
	}
	return x.kernels[kernelName{k.Module, k.Name}]
}

// loadProfile loads the profile c names (relative paths from dir) into
// c.Profile.
func (c *Config) loadProfile(dir string) error {
	if c.ProfileName == "" {
		return nil
	}
	p, err := sharedProfile(c.ProfileName, dir)
	if err != nil {
		return fmt.Errorf("device config %q: %w", c.Name, err)
	}
	if err := p.Fits(&c.Info); err != nil {
		return fmt.Errorf("device config %q: profile %s: %w", c.Name, c.ProfileName, err)
	}
	c.Profile = p
	return nil
}

// Fits reports whether the profile can time kernels on a device like in.
func (p *Profile) Fits(in *device.Info) error {
	if p.SMs != in.SMs {
		return fmt.Errorf("measured on %s with %d SMs; the device has %d", p.Device, p.SMs, in.SMs)
	}
	return nil
}

// checkFractions validates the optional achieved fractions of peak.
func (c *Config) checkFractions() error {
	for _, f := range []struct {
		v    float64
		name string
	}{{c.SM.FlopsFraction, "sm.achieved_flops_fraction"}, {c.SM.BandwidthFraction, "sm.achieved_bandwidth_fraction"}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("device %q: %s must be between 0 and 1 (0: the peak), got %g", c.Name, f.name, f.v)
		}
	}
	return nil
}

// fraction is an achieved fraction of peak: 0 (not set) means 1.
func fraction(f float64) float64 {
	if f == 0 {
		return 1
	}
	return f
}

// useProfile indexes the profile the device times kernels from: the
// option's, else the config's.
func (d *Device) useProfile() error {
	p := d.cfg.Profile
	if d.opts.profile != nil || d.opts.noProf {
		p = d.opts.profile
	}
	if p == nil {
		return nil
	}
	if err := p.Fits(&d.info); err != nil {
		return fmt.Errorf("sim: device %q: profile: %w", d.cfg.Name, err)
	}
	d.prof = newProfileIndex(p, d.cfg.SM.RetimeThreshold)
	if d.prof.cold {
		d.l2.capacity = float64(p.EffectiveL2Bytes)
		if d.l2.capacity <= 0 {
			d.l2.capacity = float64(p.L2Bytes)
		}
		d.prof.cold = d.l2.capacity > 0
	}
	return nil
}
