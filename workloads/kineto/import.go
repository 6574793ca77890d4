package kineto

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gpusched/gpusched/workloads/file"
)

// Options say what to import and how.
type Options struct {
	// Iteration is the ProfilerStep to import; negative: the last one.
	Iteration int
	// Range, if set, imports what was launched inside the first annotation
	// or operator of that name instead.
	Range string
	// Device holds the recorded GPU's figures; nil takes them from the
	// trace's deviceProperties, with ClockHz (which the trace lacks) and
	// the per-architecture limits of its compute capability.
	Device  *file.Device
	ClockHz int64
	// Figures, if set and Device is nil, gives the figures of the trace's
	// GPU from its name and SM count (a device config that models it).
	Figures func(name string, sms int) (*file.Device, error)
	// Name is the workload's name (default: the trace file's base name).
	Name string
	// TracePath and ETPath are recorded in the file's source section.
	TracePath, ETPath string
}

// Report says what the import found and how it ordered it.
type Report struct {
	Window                      string
	Kernels, Copies, Memsets    int
	GraphKernels, GraphLaunches int
	Streams                     int
	FromET                      int // operations whose accesses came from the execution trace
	StreamOrdered               int // operations ordered by their stream (no execution-trace accesses)
	Buffers, Edges              int
	Unlaunched                  int // GPU operations whose launch call is not in the trace (skipped)
	Warnings                    []string
}

func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d kernels, %d copies, %d memsets on %d streams", r.Window, r.Kernels, r.Copies, r.Memsets, r.Streams)
	if r.GraphLaunches > 0 {
		fmt.Fprintf(&b, " (%d kernels from %d graph launches)", r.GraphKernels, r.GraphLaunches)
	}
	fmt.Fprintf(&b, "; %d ordered by data from the execution trace, %d by stream order; %d buffers, %d explicit edges",
		r.FromET, r.StreamOrdered, r.Buffers, r.Edges)
	for _, w := range r.Warnings {
		b.WriteString("\nwarning: " + w)
	}
	return b.String()
}

// Import turns a Kineto trace (and, if et is not nil, the execution trace
// of the same run) into a workload file.
func Import(traceData, etData []byte, opt Options) (*file.File, *Report, error) {
	t, err := parseTrace(traceData)
	if err != nil {
		return nil, nil, err
	}
	dev, props, err := t.device()
	if err != nil {
		return nil, nil, err
	}
	rep := &Report{}
	d, err := deviceFigures(props, opt, rep)
	if err != nil {
		return nil, nil, err
	}
	w, err := t.pickWindow(opt.Iteration, opt.Range)
	if err != nil {
		return nil, nil, err
	}
	ops, unlaunched := t.selectOps(w, dev)
	rep.Window, rep.Unlaunched = w.name, unlaunched
	if len(ops) == 0 {
		return nil, nil, fmt.Errorf("no GPU operation was launched in %s", w.name)
	}
	im := newImporter(t, ops, rep)
	if etData != nil {
		nodes, err := parseET(etData)
		if err != nil {
			return nil, nil, err
		}
		im.useET(nodes, w)
	}
	im.order()
	f := im.emit(d, opt, w)
	if err := f.Check(); err != nil {
		return nil, nil, fmt.Errorf("the imported workload does not check (a bug in the importer, or a trace it misreads): %w", err)
	}
	return f, rep, nil
}

// deviceFigures are the recorded GPU's: given, or from the trace.
func deviceFigures(p *deviceProps, opt Options, rep *Report) (file.Device, error) {
	if opt.Device == nil && opt.Figures != nil && p != nil {
		d, err := opt.Figures(p.Name, p.NumSms)
		if err != nil {
			return file.Device{}, err
		}
		opt.Device = d
	}
	if opt.Device != nil {
		d := *opt.Device
		if p != nil && p.NumSms != d.SMs {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("the trace's %s has %d SMs, the device figures given %d", p.Name, p.NumSms, d.SMs))
		}
		return d, nil
	}
	if p == nil {
		return file.Device{}, fmt.Errorf("the trace has no deviceProperties for its GPU; give the device's figures")
	}
	if opt.ClockHz <= 0 {
		return file.Device{}, fmt.Errorf("the trace does not give %s's SM clock; give it (or a device config with it)", p.Name)
	}
	cc := p.ComputeMajor*10 + p.ComputeMinor
	// Per compute capability (CUDA C Programming Guide, technical
	// specifications): resident blocks per SM, and the 1 KB of shared
	// memory the system reserves per block from cc 8.0 on.
	blocks := map[int]int{70: 32, 72: 32, 75: 16, 80: 32, 86: 16, 87: 16, 89: 24, 90: 32, 100: 32, 120: 32}[cc]
	if blocks == 0 {
		return file.Device{}, fmt.Errorf("%s has compute capability %d.%d, whose limits the importer does not know; give the device's figures", p.Name, p.ComputeMajor, p.ComputeMinor)
	}
	reserved := 0
	if cc >= 80 {
		reserved = 1024
	}
	return file.Device{Name: p.Name, SMs: p.NumSms, ClockHz: opt.ClockHz, MaxThreadsPerSM: p.MaxThreadsPerMultiprocessor,
		MaxBlocksPerSM: blocks, RegistersPerSM: p.RegsPerMultiprocessor, RegAllocUnit: 256,
		SharedPerSM: p.SharedMemPerMultiprocessor, SharedReserved: reserved, MaxSharedPerBlock: p.SharedMemPerBlockOptin,
		MaxThreadsPerBlock: p.MaxThreadsPerBlock, MaxRegsPerThread: 255, WarpSize: p.WarpSize}, nil
}

var templateOrArgs = regexp.MustCompile(`[<(]`)

// shortName is a kernel symbol without its return type, namespaces,
// template arguments and parameters: "void at::native::vectorized_elementwise_kernel<4, ...>(...)"
// becomes "vectorized_elementwise_kernel".
func shortName(symbol string) string {
	s := strings.TrimSpace(symbol)
	s = strings.TrimPrefix(s, "void ")
	s = strings.ReplaceAll(s, "(anonymous namespace)::", "")
	if loc := templateOrArgs.FindStringIndex(s); loc != nil {
		s = s[:loc[0]]
	}
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	s = strings.TrimSpace(s)
	if s == "" {
		s = "kernel"
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

func baseName(path string) string {
	b := filepath.Base(path)
	for _, ext := range []string{".gz", ".json", ".trace", ".pt"} {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}
