package file

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Format is the value of a workload file's format field.
const Format = "gpusched-workload/1"

// File is a workload file as written: YAML, or JSON (which the YAML decoder
// reads as well). Field names are the YAML keys.
type File struct {
	Format string  `yaml:"format"`
	Name   string  `yaml:"name"`
	Source *Source `yaml:"source,omitempty"`
	// Device is the GPU the durations were measured on: its figures decide
	// each kernel's blocks per SM and waves, hence the replay's padding and
	// per-block time.
	Device  Device   `yaml:"device"`
	Buffers []Buffer `yaml:"buffers,omitempty"`
	Steps   []Step   `yaml:"steps"`
}

// Source says where a file came from; it is kept for the reader and not
// interpreted.
type Source struct {
	Tool      string `yaml:"tool,omitempty"`
	Trace     string `yaml:"trace,omitempty"`
	ET        string `yaml:"et,omitempty"`
	Iteration int    `yaml:"iteration,omitempty"`
	Note      string `yaml:"note,omitempty"`
}

// Device holds the figures of the recorded GPU that occupancy and waves need
// (the names are those of configs/devices/*.yaml's info section), and the
// throughputs that time a kernel given only a work estimate.
type Device struct {
	Name               string  `yaml:"name"`
	SMs                int     `yaml:"sms"`
	ClockHz            int64   `yaml:"clock_hz"`
	MaxThreadsPerSM    int     `yaml:"max_threads_per_sm"`
	MaxBlocksPerSM     int     `yaml:"max_blocks_per_sm"`
	RegistersPerSM     int     `yaml:"registers_per_sm"`
	RegAllocUnit       int     `yaml:"reg_alloc_unit"`
	SharedPerSM        int     `yaml:"shared_per_sm"`
	SharedReserved     int     `yaml:"shared_reserved_per_block"`
	MaxSharedPerBlock  int     `yaml:"max_shared_per_block"`
	MaxThreadsPerBlock int     `yaml:"max_threads_per_block"`
	MaxRegsPerThread   int     `yaml:"max_regs_per_thread"`
	WarpSize           int     `yaml:"warp_size"`
	MemBandwidth       float64 `yaml:"mem_bandwidth,omitempty"` // bytes/s, for work-only kernels
	Flops              float64 `yaml:"flops,omitempty"`         // floating-point operations/s, for work-only kernels
}

// Buffer is a device allocation the operations read and write.
type Buffer struct {
	Name  string `yaml:"name"`
	Bytes int64  `yaml:"bytes"`
}

// Step is a group of operations issued together (one iteration).
type Step struct {
	Name string `yaml:"name,omitempty"`
	Ops  []Op   `yaml:"ops"`
}

// Op is one operation: exactly one of Kernel, Copy and Memset names it.
type Op struct {
	Kernel string `yaml:"kernel,omitempty"`
	Copy   string `yaml:"copy,omitempty"`
	Memset string `yaml:"memset,omitempty"`
	// Label is free text kept with the operation (the framework operator
	// that launched it, say).
	Label string `yaml:"label,omitempty"`

	// Kernels.
	Grid          Dim   `yaml:"grid,omitempty,flow"`
	Block         Dim   `yaml:"block,omitempty,flow"`
	Registers     int   `yaml:"registers,omitempty"`
	StaticShared  int   `yaml:"static_shared,omitempty"`
	DynamicShared int   `yaml:"dynamic_shared,omitempty"`
	Work          *Work `yaml:"work,omitempty,flow"`

	// Kernels and memsets: the recorded duration on Device, nanoseconds.
	DurationNS int64 `yaml:"duration_ns,omitempty"`

	// Copies: HtoD, DtoH or DtoD; Pageable host memory (default pinned).
	Direction string `yaml:"direction,omitempty"`
	Pageable  bool   `yaml:"pageable,omitempty"`
	// Copies and memsets: the bytes moved or set (default: the size of the
	// device range).
	Bytes int64 `yaml:"bytes,omitempty"`

	Reads  []Access `yaml:"reads,omitempty,flow"`
	Writes []Access `yaml:"writes,omitempty,flow"`
	// After names operations this one must follow besides those its buffer
	// accesses order it after.
	After []string `yaml:"after,omitempty,flow"`
	// Stream is the stream the operation ran on when it was recorded.
	Stream *int `yaml:"stream,omitempty"`

	line int
}

// Name is the operation's name, whatever its kind.
func (o *Op) Name() string { return o.Kernel + o.Copy + o.Memset }

// Kind is "kernel", "copy" or "memset" (or "" if none is set, which Check
// rejects).
func (o *Op) Kind() string {
	switch {
	case o.Kernel != "":
		return "kernel"
	case o.Copy != "":
		return "copy"
	case o.Memset != "":
		return "memset"
	}
	return ""
}

// Line is the operation's line in the file it was parsed from (0 if built
// in memory).
func (o *Op) Line() int { return o.line }

// Work is a kernel's total work, for the simulator's throughput model (and,
// without a duration, for the replay's time on the recorded device).
type Work struct {
	Flops float64 `yaml:"flops,omitempty"`
	Bytes float64 `yaml:"bytes,omitempty"`
}

// Dim is a grid or block shape: a number (x) or a list of one to three.
type Dim struct{ X, Y, Z int }

// Count is X*Y*Z.
func (d Dim) Count() int { return d.X * d.Y * d.Z }

func (d Dim) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// IsZero reports an unset shape (for omitempty).
func (d Dim) IsZero() bool { return d == Dim{} }

// UnmarshalYAML reads 7, [7], [7, 2] or [7, 2, 1].
func (d *Dim) UnmarshalYAML(n *yaml.Node) error {
	var vals []int
	switch n.Kind {
	case yaml.ScalarNode:
		v, err := strconv.Atoi(n.Value)
		if err != nil {
			return lineErrorf(n.Line, "a shape must be an integer or a list of one to three integers, got %q", n.Value)
		}
		vals = []int{v}
	case yaml.SequenceNode:
		if len(n.Content) < 1 || len(n.Content) > 3 {
			return lineErrorf(n.Line, "a shape lists one to three integers, got %d", len(n.Content))
		}
		for _, c := range n.Content {
			v, err := strconv.Atoi(c.Value)
			if c.Kind != yaml.ScalarNode || err != nil {
				return lineErrorf(c.Line, "a shape's entries must be integers, got %q", c.Value)
			}
			vals = append(vals, v)
		}
	default:
		return lineErrorf(n.Line, "a shape must be an integer or a list of one to three integers")
	}
	*d = Dim{1, 1, 1}
	d.X = vals[0]
	if len(vals) > 1 {
		d.Y = vals[1]
	}
	if len(vals) > 2 {
		d.Z = vals[2]
	}
	return nil
}

// MarshalYAML writes the shortest list.
func (d Dim) MarshalYAML() (any, error) {
	switch {
	case d.Z != 1:
		return []int{d.X, d.Y, d.Z}, nil
	case d.Y != 1:
		return []int{d.X, d.Y}, nil
	}
	return []int{d.X}, nil
}

// Access is a byte range of a buffer: the whole buffer ("x"), or
// {buffer: x, offset: 0, bytes: 64} (bytes 0 or absent: to the end).
type Access struct {
	Buffer string
	Offset int64
	Bytes  int64
}

// UnmarshalYAML reads a buffer name or a mapping of buffer, offset and bytes.
func (a *Access) UnmarshalYAML(n *yaml.Node) error {
	*a = Access{}
	switch n.Kind {
	case yaml.ScalarNode:
		a.Buffer = n.Value
		return nil
	case yaml.MappingNode:
	default:
		return lineErrorf(n.Line, "an access is a buffer name or {buffer: NAME, offset: N, bytes: N}")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var err error
		switch k.Value {
		case "buffer":
			a.Buffer = v.Value
		case "offset":
			a.Offset, err = strconv.ParseInt(v.Value, 10, 64)
		case "bytes":
			a.Bytes, err = strconv.ParseInt(v.Value, 10, 64)
		default:
			return lineErrorf(k.Line, "unknown field %q in an access (known fields: buffer, bytes, offset)", k.Value)
		}
		if err != nil || v.Kind != yaml.ScalarNode {
			return lineErrorf(v.Line, "field %q of an access must be an integer, got %q", k.Value, v.Value)
		}
	}
	if a.Buffer == "" {
		return lineErrorf(n.Line, "an access needs a buffer name")
	}
	return nil
}

// MarshalYAML writes the name alone for a whole-buffer access.
func (a Access) MarshalYAML() (any, error) {
	if a.Offset == 0 && a.Bytes == 0 {
		return a.Buffer, nil
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	add := func(k, v string) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
	}
	add("buffer", a.Buffer)
	if a.Offset != 0 {
		add("offset", strconv.FormatInt(a.Offset, 10))
	}
	if a.Bytes != 0 {
		add("bytes", strconv.FormatInt(a.Bytes, 10))
	}
	return m, nil
}

// LineError is a problem at a line of a workload file.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line <= 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

func lineErrorf(line int, format string, a ...any) error {
	return &LineError{Line: line, Msg: fmt.Sprintf(format, a...)}
}

// Parse decodes a workload file strictly: an unknown field anywhere is an
// error with its line, as is a value of the wrong type. name is used in
// errors. It checks the result (Check) before returning it.
func Parse(data []byte, name string) (*File, error) {
	f, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

func decode(data []byte) (*File, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	f := &File{}
	if err := dec.Decode(f); err != nil {
		return nil, cleanYAMLError(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, cleanYAMLError(err)
	}
	f.setLines(&root)
	return f, nil
}

// setLines records each operation's line from the parsed node tree.
func (f *File) setLines(root *yaml.Node) {
	steps := child(mapping(root), "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode {
		return
	}
	for si, s := range steps.Content {
		if si >= len(f.Steps) {
			return
		}
		ops := child(s, "ops")
		if ops == nil || ops.Kind != yaml.SequenceNode {
			continue
		}
		for oi, o := range ops.Content {
			if oi < len(f.Steps[si].Ops) {
				f.Steps[si].Ops[oi].line = o.Line
			}
		}
	}
}

func mapping(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return n
}

func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// cleanYAMLError turns yaml.v3's messages into LineErrors that speak of the
// file's fields rather than Go types.
func cleanYAMLError(err error) error {
	if le, ok := err.(*LineError); ok {
		return le
	}
	te, ok := err.(*yaml.TypeError)
	if !ok || len(te.Errors) == 0 {
		return err
	}
	first := te.Errors[0]
	var line int
	if _, scanErr := fmt.Sscanf(first, "line %d:", &line); scanErr != nil {
		return fmt.Errorf("%s", strings.Join(te.Errors, "; "))
	}
	_, msg, _ := strings.Cut(first, ": ")
	if field, typ, ok := strings.Cut(strings.TrimPrefix(msg, "field "), " not found in type "); ok && strings.HasPrefix(msg, "field ") {
		section := strings.TrimPrefix(typ, "file.")
		msg = fmt.Sprintf("unknown field %q in %s (known fields: %s)", field, strings.ToLower(section), knownFields(section))
	}
	return &LineError{Line: line, Msg: msg}
}

// knownFields lists the YAML keys of the named section's type.
func knownFields(section string) string {
	types := map[string]reflect.Type{
		"file": reflect.TypeOf(File{}), "source": reflect.TypeOf(Source{}), "device": reflect.TypeOf(Device{}),
		"buffer": reflect.TypeOf(Buffer{}), "step": reflect.TypeOf(Step{}), "op": reflect.TypeOf(Op{}), "work": reflect.TypeOf(Work{}),
	}
	t, ok := types[strings.ToLower(section)]
	if !ok {
		return "?"
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// Load reads and parses a workload file (gzip-compressed or not).
func Load(path string) (*File, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// ReadFile reads a file, uncompressing it if it is gzip-compressed.
func ReadFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return data, nil
}
