// Command gen compiles workloads/kernels/*.cu into fat binaries and writes
// zz_<module>.go, the Go descriptors of their kernels (one file per module).
//
// For each module <name>.cu it runs
//
//	nvcc -fatbin <gencodes> -o <name>.fatbin <name>.cu
//
// (SASS for sm_80 and sm_90, PTX for compute_80 so newer GPUs JIT it), then
// nvcc --resource-usage for sm_90, whose ptxas report gives every entry
// function's registers per thread and static shared memory. Every entry must
// be extern "C" (an unmangled name), or gen fails naming it.
//
// With -check it compiles into a temporary directory instead and verifies
// that the committed images and zz_*.go files are what the sources give:
// source hashes, descriptors and, when the local nvcc is the release that
// built the committed images, the image bytes themselves. Output is
// deterministic: modules and kernels are sorted, and nothing depends on time
// or on the directory the sources sit in (nvcc is run on relative names from
// inside the directory), nor on address-space randomization (nvcc runs with
// it turned off; see runFixedLayout).
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// gencodes are the targets of every image: machine code for Ampere (sm_80)
// and Hopper (sm_90), and compute_80 PTX that any later GPU's driver JITs.
var gencodes = []string{
	"-gencode", "arch=compute_80,code=sm_80",
	"-gencode", "arch=compute_90,code=sm_90",
	"-gencode", "arch=compute_80,code=compute_80",
}

// resourceArch is the architecture whose resource usage the descriptors
// record (the H100/H200 the project measures on).
const resourceArch = "sm_90"

type kernel struct {
	Name         string
	Regs         int
	StaticShared int
}

type module struct {
	Name         string
	Source       string
	SourceSHA256 string
	ImageSHA256  string
	Image        []byte
	Kernels      []kernel
	Extra        []string // nvcc flags from the module's directives
}

func main() {
	dir := flag.String("dir", ".", "directory holding the .cu sources")
	check := flag.Bool("check", false, "verify committed images and descriptors instead of writing them")
	nvccFlag := flag.String("nvcc", "", "nvcc to use (default: $NVCC, then nvcc on PATH, then /usr/local/cuda/bin/nvcc)")
	flag.Parse()
	if err := run(*dir, *check, *nvccFlag); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func findNVCC(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if env := os.Getenv("NVCC"); env != "" {
		return env, nil
	}
	if p, err := exec.LookPath("nvcc"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/local/cuda/bin/nvcc"); err == nil {
		return "/usr/local/cuda/bin/nvcc", nil
	}
	return "", errors.New("nvcc not found (run `make cuda-deps`, or set NVCC)")
}

func run(dir string, check bool, nvccFlag string) (err error) {
	nvcc, err := findNVCC(nvccFlag)
	if err != nil {
		return err
	}
	version, err := nvccVersion(nvcc)
	if err != nil {
		return err
	}
	sources, err := filepath.Glob(filepath.Join(dir, "*.cu"))
	if err != nil {
		return err
	}
	if len(sources) == 0 {
		return fmt.Errorf("no .cu files in %s", dir)
	}
	sort.Strings(sources)

	outDir := dir
	if check {
		if outDir, err = os.MkdirTemp("", "gpusched-kernels-check-"); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, os.RemoveAll(outDir)) }()
	}
	var mods []module
	for _, src := range sources {
		m, err := compile(nvcc, src, outDir)
		if err != nil {
			return err
		}
		mods = append(mods, m)
	}
	if check {
		return verify(dir, version, mods)
	}
	for _, m := range mods {
		code, err := render(version, m)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, genName(m.Name)), code, 0o644); err != nil {
			return err
		}
	}
	return removeOrphans(dir, mods)
}

func nvccVersion(nvcc string) (string, error) {
	out, err := exec.Command(nvcc, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v: %s", nvcc, err, out)
	}
	// "Cuda compilation tools, release 11.8, V11.8.89"
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Cuda compilation tools") {
			return strings.TrimSpace(line), nil
		}
	}
	return "", fmt.Errorf("%s --version: no release line in %q", nvcc, out)
}

// compile builds src's image into outDir and reads its kernels' resources.
// nvcc runs inside a scratch copy of the source so that nothing in its
// output depends on where the checkout lives.
// allowedFlags are the nvcc options a module may ask for with a line
// "// gpusched:nvcc FLAG ..." in its source: options that change how
// arithmetic is compiled, never targets or outputs.
var allowedFlags = map[string]bool{"-fmad=false": true, "-fmad=true": true, "-prec-div=true": true, "-prec-sqrt=true": true, "-ftz=false": true}

// moduleFlags reads a module's "// gpusched:nvcc" directives. nn.cu asks for
// -fmad=false so that its float32 arithmetic rounds every multiply and add
// as the Go reference does, instead of contracting them into FMAs.
func moduleFlags(base string, text []byte) ([]string, error) {
	var flags []string
	for i, line := range strings.Split(string(text), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "// gpusched:nvcc ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if !allowedFlags[f] {
				return nil, fmt.Errorf("%s:%d: nvcc flag %q is not allowed in a module directive", base, i+1, f)
			}
			flags = append(flags, f)
		}
	}
	return flags, nil
}

// compile builds src's module: its fat binary, and its kernels' resources
// from a cubin for resourceArch.
func compile(nvcc, src, outDir string) (module, error) {
	return compileModule(nvcc, src, outDir, true)
}

// compileModule is compile; without resources it builds the fat binary
// alone (Kernels nil), which is all TestCompileIsReproducible compares.
func compileModule(nvcc, src, outDir string, resources bool) (_ module, err error) {
	base := filepath.Base(src)
	name := strings.TrimSuffix(base, ".cu")
	if !regexp.MustCompile(`^[a-z][a-z0-9_]*$`).MatchString(name) {
		return module{}, fmt.Errorf("%s: module names must be lower-case identifiers ([a-z][a-z0-9_]*)", base)
	}
	text, err := os.ReadFile(src)
	if err != nil {
		return module{}, err
	}
	work, err := scratchDir()
	if err != nil {
		return module{}, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(work)) }()
	if err := os.WriteFile(filepath.Join(work, base), text, 0o644); err != nil {
		return module{}, err
	}
	nvccIn := func(args ...string) ([]byte, error) {
		cmd := exec.Command(nvcc, args...)
		cmd.Dir = work
		out, err := runFixedLayout(cmd)
		if err != nil {
			return out, fmt.Errorf("nvcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out, nil
	}
	extra, err := moduleFlags(base, text)
	if err != nil {
		return module{}, err
	}
	fatbin := name + ".fatbin"
	args := append(append(append([]string{"-fatbin"}, extra...), gencodes...), "-o", fatbin, base)
	if _, err := nvccIn(args...); err != nil {
		return module{}, err
	}
	var kernels []kernel
	if resources {
		report, err := nvccIn(append(append([]string{"-cubin"}, extra...), "-arch="+resourceArch, "--resource-usage", "-o", name+".cubin", base)...)
		if err != nil {
			return module{}, err
		}
		if kernels, err = parseResources(base, report); err != nil {
			return module{}, err
		}
	}
	image, err := os.ReadFile(filepath.Join(work, fatbin))
	if err != nil {
		return module{}, err
	}
	if err := os.WriteFile(filepath.Join(outDir, fatbin), image, 0o644); err != nil {
		return module{}, err
	}
	return module{
		Name: name, Source: base,
		SourceSHA256: sum(text), ImageSHA256: sum(image),
		Image: image, Kernels: kernels, Extra: extra,
	}, nil
}

var (
	entryRE = regexp.MustCompile(`Compiling entry function '([^']+)' for '` + resourceArch + `'`)
	usedRE  = regexp.MustCompile(`Used (\d+) registers`)
	smemRE  = regexp.MustCompile(`(\d+) bytes smem`)
)

// parseResources reads ptxas's --resource-usage report:
//
//	ptxas info    : Compiling entry function 'synth_rw' for 'sm_90'
//	ptxas info    : Function properties for synth_rw
//	    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//	ptxas info    : Used 10 registers, 1024 bytes smem, 376 bytes cmem[0]
func parseResources(source string, report []byte) ([]kernel, error) {
	var out []kernel
	var cur *kernel
	sc := bufio.NewScanner(bytes.NewReader(report))
	for sc.Scan() {
		line := sc.Text()
		if m := entryRE.FindStringSubmatch(line); m != nil {
			name := m[1]
			if strings.HasPrefix(name, "_Z") {
				return nil, fmt.Errorf("%s: kernel %s is not extern \"C\" (its name is C++-mangled); declare it extern \"C\" __global__", source, name)
			}
			out = append(out, kernel{Name: name, Regs: -1})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue
		}
		if m := usedRE.FindStringSubmatch(line); m != nil {
			cur.Regs, _ = strconv.Atoi(m[1])
			if s := smemRE.FindStringSubmatch(line); s != nil {
				cur.StaticShared, _ = strconv.Atoi(s[1])
			}
			cur = nil
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no __global__ functions found in nvcc's resource report", source)
	}
	for _, k := range out {
		if k.Regs < 0 {
			return nil, fmt.Errorf("%s: no register count for kernel %s in nvcc's resource report", source, k.Name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// genName is the generated Go file of module name.
func genName(name string) string { return "zz_" + name + ".go" }

// render writes module m's Go file: its embedded image and descriptors,
// registered at init. One file per module lets helpers add modules
// independently, without editing a shared file.
func render(version string, m module) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by `go run ./workloads/kernels/gen` (make kernels); DO NOT EDIT.\n\n")
	b.WriteString("package kernels\n\nimport (\n\t_ \"embed\"\n\n\t\"github.com/gpusched/gpusched/device\"\n)\n\n")
	fmt.Fprintf(&b, "//go:embed %s.fatbin\nvar image_%s []byte\n\n", m.Name, m.Name)
	b.WriteString("func init() {\n\tregister(Module{\n")
	fmt.Fprintf(&b, "\t\tName: %q,\n\t\tSource: %q,\n\t\tCompiler: %q,\n\t\tFlags: %q,\n\t\tSourceSHA256: %q,\n\t\tImageSHA256: %q,\n\t\tImage: image_%s,\n\t\tKernels: []*device.Kernel{\n",
		m.Name, m.Source, version, strings.Join(append(append([]string{"-fatbin"}, m.Extra...), gencodes...), " "), m.SourceSHA256, m.ImageSHA256, m.Name)
	for _, k := range m.Kernels {
		fmt.Fprintf(&b, "\t\t\t{Module: %q, Name: %q, Regs: %d, StaticShared: %d},\n", m.Name, k.Name, k.Regs, k.StaticShared)
	}
	b.WriteString("\t\t},\n\t})\n}\n")
	return format.Source(b.Bytes())
}

// removeOrphans deletes images and generated files whose source is gone.
func removeOrphans(dir string, mods []module) error {
	have := map[string]bool{}
	for _, m := range mods {
		have[m.Name+".fatbin"] = true
		have[genName(m.Name)] = true
	}
	for _, pattern := range []string{"*.fatbin", "zz_*.go"} {
		files, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return err
		}
		for _, f := range files {
			if !have[filepath.Base(f)] {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

var (
	compilerRE = regexp.MustCompile(`Compiler:\s*"([^"]*)"`)
	hashRE     = regexp.MustCompile(`(Source|Image)SHA256:\s*"([0-9a-f]{64})"`)
)

// verify compares freshly compiled modules with what is committed in dir.
// Source hashes must always match. Images and generated files must match
// byte for byte when this nvcc is the release that built them; another
// release may allocate registers differently, so then only the hashes are
// compared, and the output says so.
func verify(dir, version string, fresh []module) error {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	have := map[string]bool{}
	for _, m := range fresh {
		have[m.Name] = true
	}
	for _, pattern := range []string{"*.fatbin", "zz_*.go"} {
		files, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, f := range files {
			base := filepath.Base(f)
			name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(base, ".fatbin"), "zz_"), ".go")
			if !have[name] {
				bad("%s has no source %s.cu", base, name)
			}
		}
	}
	var recompared, hashed []string
	for _, m := range fresh {
		code, err := os.ReadFile(filepath.Join(dir, genName(m.Name)))
		if err != nil {
			bad("%s: no generated %s (%v)", m.Source, genName(m.Name), err)
			continue
		}
		image, err := os.ReadFile(filepath.Join(dir, m.Name+".fatbin"))
		if err != nil {
			bad("%s: no image (%v)", m.Source, err)
			continue
		}
		hashes := map[string]string{}
		for _, h := range hashRE.FindAllSubmatch(code, -1) {
			hashes[string(h[1])] = string(h[2])
		}
		if hashes["Source"] != m.SourceSHA256 {
			bad("%s changed since its image was built", m.Source)
		}
		if hashes["Image"] != sum(image) {
			bad("%s.fatbin is not the image %s records", m.Name, genName(m.Name))
		}
		c := compilerRE.FindSubmatch(code)
		if c == nil {
			bad("%s records no Compiler", genName(m.Name))
			continue
		}
		if string(c[1]) != version {
			hashed = append(hashed, fmt.Sprintf("%s (built by %q)", m.Name, c[1]))
			continue
		}
		recompared = append(recompared, m.Name)
		if !bytes.Equal(image, m.Image) {
			bad("%s.fatbin differs from what %s compiles to", m.Name, m.Source)
		}
		want, err := render(version, m)
		if err != nil {
			return err
		}
		if !bytes.Equal(want, code) {
			bad("%s differs from what %s generates", genName(m.Name), m.Source)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("committed kernel images do not match their sources (run `make kernels` and commit the .cu, .fatbin and zz_*.go together):\n  %s",
			strings.Join(problems, "\n  "))
	}
	if len(recompared) > 0 {
		fmt.Printf("kernels: recompiled with %s; images and descriptors match byte for byte: %s\n", version, strings.Join(recompared, ", "))
	}
	if len(hashed) > 0 {
		fmt.Printf("kernels: source hashes match, images not recompared (this nvcc is %q): %s\n", version, strings.Join(hashed, ", "))
	}
	return nil
}

// scratchDir makes the directory nvcc runs in: always /tmp/gpusched-nvcc-
// and eight hex digits, so that its path has the same length on every
// machine. nvcc 11.8's PTX depends on the length of the source's absolute
// path (cicc's --orig_src_path_name; with address randomization off, a
// longer name shifts its heap and renumbers PTX registers), so a scratch
// directory whose name varies in length (os.MkdirTemp's, or $TMPDIR's) would
// make the same source compile to different images.
func scratchDir() (string, error) {
	for range 100 {
		dir := fmt.Sprintf("/tmp/gpusched-nvcc-%08x", rand.Uint32())
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", errors.New("no free scratch directory /tmp/gpusched-nvcc-XXXXXXXX after 100 tries")
}
