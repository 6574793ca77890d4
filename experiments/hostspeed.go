package experiments

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// Host is the machine a GPU run's host side ran on and how fast it issued
// launches: rows bound by the host (many short kernels, each launched by
// the CPU) carry the host's speed, which differs between machines of the
// same GPU far more than the GPU's own. gpusched validate scales the
// simulator's host costs by it (LaunchNs).
type Host struct {
	CPU         string `json:"cpu,omitempty"`          // model name, from /proc/cpuinfo
	LogicalCPUs int    `json:"logical_cpus,omitempty"` // as the process sees them (its affinity)
	// LaunchBefore and LaunchAfter are the launch API cost (calibrate's
	// "launch API cost", the figure host.launch_ns is fitted from) timed
	// before the run's first GPU row and after its last.
	LaunchBefore *LaunchProbe `json:"launch_before,omitempty"`
	LaunchAfter  *LaunchProbe `json:"launch_after,omitempty"`
	// Errors are probes that failed (the rows are measured regardless).
	Errors []string `json:"errors,omitempty"`
}

// LaunchProbe is one timing of the launch API cost: per-launch ns, the
// median over rounds, and the rounds' spread ((largest - smallest) /
// median).
type LaunchProbe struct {
	Ns     float64   `json:"ns"`
	Spread float64   `json:"spread"`
	Rounds []float64 `json:"rounds"`
}

// HostProbe times the launch API cost on a device (calibrate's
// HostLaunchProbe, which gpusched passes in: experiments does not import
// calibrate).
type HostProbe func(dev device.Device) (LaunchProbe, error)

// LaunchNs is the host's launch API cost: the mean of the probes it has
// (false when it has none).
func (h *Host) LaunchNs() (float64, bool) {
	if h == nil {
		return 0, false
	}
	sum, n := 0.0, 0
	for _, p := range []*LaunchProbe{h.LaunchBefore, h.LaunchAfter} {
		if p != nil && p.Ns > 0 {
			sum += p.Ns
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// probeHost is this machine's CPU and, with probe, the launch cost on dev.
func probeHost(dev device.Device, probe HostProbe) *Host {
	h := &Host{CPU: cpuModel(), LogicalCPUs: runtime.NumCPU()}
	h.LaunchBefore = h.time(dev, probe, "before the first row")
	return h
}

// time runs probe on dev, noting a failure in h.
func (h *Host) time(dev device.Device, probe HostProbe, when string) *LaunchProbe {
	p, err := probe(dev)
	if err != nil {
		h.Errors = append(h.Errors, fmt.Sprintf("launch probe %s: %v", when, err))
		return nil
	}
	return &p
}

// finishHostProbe times the launch cost again after the last row.
func (h *Host) finishHostProbe(dev device.Device, probe HostProbe) {
	h.LaunchAfter = h.time(dev, probe, "after the last row")
}

// cpuModel is the first "model name" of /proc/cpuinfo ("" where there is
// none: another OS, or a CPU that does not say).
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// unscaledHostFields are the host costs a host's speed does not scale:
// ACS-HW's dependency queue (hardware that does not exist, never
// measured) and the park regimes (how long a waiting thread spins before
// it sleeps, and the OS's wake-up from that sleep: the kernel's timers and
// scheduler, not the CPU's speed at a call) and the cold call (the driver's
// data fetched again after the host's own work evicted it: the memory's
// latency, which a warm launch's cost does not measure; on two hosts of
// the same CPU model 8 MiB of writes cost the next launch 8.8 and 22.9 us,
// calibrate "per-run reset"). Every other host.*_ns field
// is a host CPU cost that calibrate measures on the host path (per-call
// API costs, graph building and launch, thread start, hand-offs, the
// wake-up from a synchronize) and scales with the launch cost.
var unscaledHostFields = map[string]bool{
	"dq_submit_ns": true, "dq_poll_ns": true,
	"park_after_ns": true, "parked_wake_ns": true, "parked_callback_wake_ns": true, "parked_wake_per_decade_ns": true,
	"sync_park_after_ns": true, "sync_parked_wake_ns": true,
	"cold_call_ns": true,
}

// scaleHostCosts multiplies every host CPU cost of cfg (its host.*_ns
// fields but unscaledHostFields) by f and returns the fields it scaled,
// in the config's order. The device's side (front_end, sm, memory) is
// left alone: a GPU is the same GPU on a faster host.
func scaleHostCosts(cfg *sim.Config, f float64) []string {
	v := reflect.ValueOf(&cfg.Host).Elem()
	var scaled []string
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		fv := v.Field(i)
		if !strings.HasSuffix(name, "_ns") || unscaledHostFields[name] || fv.Kind() != reflect.Float64 {
			continue
		}
		fv.SetFloat(fv.Float() * f)
		scaled = append(scaled, name)
	}
	return scaled
}

// hostSpeed is what a results file's host probe says of its host against
// a simulator config: the factor its host costs are scaled by.
type hostSpeed struct {
	probeNs, configNs float64
}

func (s hostSpeed) factor() float64 { return s.probeNs / s.configNs }

func (s hostSpeed) String() string {
	return fmt.Sprintf("host speed x%.3f (probe %s ns vs config %s ns)", s.factor(), thousands(s.probeNs), thousands(s.configNs))
}

// probedLaunchNs is the launch cost the host probes of r's provenance
// measured: their mean (false when none has one: a simulator run, or a
// GPU run before the probe existed).
func probedLaunchNs(r *Results) (float64, bool) {
	sum, n := 0.0, 0
	for i := range r.Provenance {
		if ns, ok := r.Provenance[i].Host.LaunchNs(); ok {
			sum += ns
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// hostSpeedConfig writes spec's config with its host costs scaled to a
// host whose launch cost is probeNs into dir, and returns the file's path
// and the scaling. A profile the config names by a relative path is named
// by its absolute path, so the copy finds it.
func hostSpeedConfig(spec string, probeNs float64, dir string) (string, hostSpeed, error) {
	cfg, err := sim.LoadConfig(spec)
	if err != nil {
		return "", hostSpeed{}, err
	}
	s := hostSpeed{probeNs: probeNs, configNs: cfg.Host.LaunchNs}
	if !(s.configNs > 0) {
		return "", s, fmt.Errorf("config %s: host.launch_ns is %g: no host speed to scale by", spec, s.configNs)
	}
	scaleHostCosts(cfg, s.factor())
	if p := cfg.ProfileName; isYAMLPath(p) && !filepath.IsAbs(p) && isYAMLPath(spec) {
		if cfg.ProfileName, err = filepath.Abs(filepath.Join(filepath.Dir(spec), p)); err != nil {
			return "", s, err
		}
	}
	cfg.Name = fmt.Sprintf("%s-host-x%.3f", cfg.Name, s.factor())
	data, err := cfg.Marshal()
	if err != nil {
		return "", s, fmt.Errorf("config %s: %w", spec, err)
	}
	path := filepath.Join(dir, cfg.Name+".yaml")
	return path, s, os.WriteFile(path, data, 0o644)
}

func isYAMLPath(p string) bool { return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") }

// thousands is v rounded to an integer with commas between thousands
// (4,816).
func thousands(v float64) string {
	s := strconv.FormatInt(int64(math.Round(math.Abs(v))), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if v < 0 && s != "0" {
		s = "-" + s
	}
	return s
}
