package rl

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/workloads"
)

// serialize writes prog in the harness's input format (testdata/harness.cc).
func serialize(t *testing.T, prog *workloads.Program) []byte {
	t.Helper()
	var b bytes.Buffer
	w := func(v any) { require.NoError(t, binary.Write(&b, binary.LittleEndian, v)) }
	w(uint32(len(prog.Buffers)))
	for _, spec := range prog.Buffers {
		data := make([]byte, spec.Bytes)
		if spec.Init != nil {
			spec.Init(data)
		}
		w(uint64(spec.Bytes))
		b.Write(data)
	}
	w(uint32(prog.NumOps()))
	for _, st := range prog.Steps {
		for _, op := range st.Ops {
			require.Equal(t, workloads.OpKernel, op.Kind)
			w(uint32(len(op.Kernel.Name)))
			b.WriteString(op.Kernel.Name)
			w(uint32(op.Grid.X))
			w(uint32(op.Block.X))
			w(uint32(len(op.Args)))
			for _, a := range op.Args {
				if a.Buf < 0 {
					w(uint8(0))
					w(uint32(a.Size))
					w(a.Bits)
				} else {
					w(uint8(1))
					w(uint32(a.Buf))
					w(uint64(a.Off))
				}
			}
		}
	}
	return b.Bytes()
}

// TestKernelsMatchReferenceOnCPU compiles rl.cu as host C++ (no FMA
// contraction, IEEE single precision: what the kernels' __fmul_rn,
// __fdiv_rn and __fsqrt_rn compute on a GPU), runs every kernel of a
// program thread by thread, and checks the results against the Go
// reference: through Program.Check, and bit for bit.
func TestKernelsMatchReferenceOnCPU(t *testing.T) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skip("no C++ compiler to build the host harness")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "harness")
	src, _ := filepath.Abs("testdata")
	kern, _ := filepath.Abs("../kernels")
	out, err := exec.Command(cxx, "-std=c++17", "-O1", "-ffp-contract=off", "-include", filepath.Join(src, "host_shim.h"),
		"-I", kern, filepath.Join(src, "harness.cc"), "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, env := range Environments() {
		t.Run(env, func(t *testing.T) {
			p := DefaultParams()
			p.Env, p.Envs, p.EnvsPerGroup, p.Steps = env, 32, 8, 4
			prog, ref, err := generate(p, 5)
			require.NoError(t, err)
			cmd := exec.Command(bin)
			cmd.Stdin = bytes.NewReader(serialize(t, prog))
			cmd.Stderr = os.Stderr
			raw, err := cmd.Output()
			require.NoError(t, err)
			outputs := map[string][]byte{}
			off := int64(0)
			for _, spec := range prog.Buffers {
				if spec.Output {
					outputs[spec.Name] = raw[off : off+spec.Bytes]
				}
				off += spec.Bytes
			}
			require.Equal(t, int64(len(raw)), off)
			require.NoError(t, prog.Check(outputs))
			for name, want := range map[string][]float32{"pos": ref.pos, "vel": ref.vel, "obs": ref.obs} {
				got := outputs[name]
				mismatches := 0
				for i, w := range want {
					if binary.LittleEndian.Uint32(got[4*i:]) != math.Float32bits(w) {
						mismatches++
					}
				}
				assert.Zero(t, mismatches, "%s: values that differ in any bit from the Go reference", name)
			}
		})
	}
}
