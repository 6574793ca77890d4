package jobs

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

var inf = float32(math.Inf(1))

func TestSobelRefHandComputed(t *testing.T) {
	tests := []struct {
		name string
		img  []float32
		want float32 // the centre pixel of a 3x3 image
	}{
		{"flat", []float32{7, 7, 7, 7, 7, 7, 7, 7, 7}, 0},
		{"horizontal edge", []float32{0, 0, 0, 0, 0, 0, 1, 1, 1}, 4},
		{"vertical edge", []float32{0, 0, 1, 0, 0, 1, 0, 0, 1}, 4},
		{"3-4-5", []float32{0, 0, 0, 0, 0, 3, 0, 4, 0}, 10}, // gx = 6, gy = 8
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SobelRef(tt.img, 3, 3)
			want := make([]float32, 9)
			want[4] = tt.want
			assert.Equal(t, want, got, "border pixels are 0")
		})
	}
}

func TestSSSPRefHandComputed(t *testing.T) {
	// Edges 0->1 (5), 0->2 (1), 2->1 (2), 1->3 (1), in CSR by destination.
	rowptr := []int32{0, 0, 2, 3, 4}
	col := []int32{0, 2, 0, 1}
	wt := []float32{5, 2, 1, 1}
	tests := []struct {
		rounds int
		want   []float32
	}{
		{1, []float32{0, 5, 1, inf}},
		{2, []float32{0, 3, 1, 6}}, // Jacobi: 3's distance uses round 1's 5
		{3, []float32{0, 3, 1, 4}},
		{8, []float32{0, 3, 1, 4}}, // converged
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.rounds), func(t *testing.T) {
			assert.Equal(t, tt.want, SSSPRef(rowptr, col, wt, 0, tt.rounds))
		})
	}
}

func TestGEMMRefHandComputed(t *testing.T) {
	got := GEMMRef([]float32{1, 2, 3, 4}, []float32{5, 6, 7, 8}, 2)
	assert.Equal(t, []float32{19, 22, 43, 50}, got)
}

func TestKNNRefHandComputed(t *testing.T) {
	// 1-D points 5, 1, 3, 1 and queries 2 and 6.
	idx, dist := KNNRef([]float32{5, 1, 3, 1}, []float32{2, 6}, 4, 2, 1, 3)
	// Query 2: distances 9, 1, 1, 1: the three ties in index order.
	// Query 6: distances 1, 25, 9, 25: 0, 2, then 1 before 3.
	assert.Equal(t, []int32{1, 2, 3, 0, 2, 1}, idx)
	assert.Equal(t, []float32{1, 1, 1, 1, 9, 25}, dist)

	// 2-D: the point (3, 4) is at squared distance 25 from the origin.
	idx, dist = KNNRef([]float32{3, 4, 1, 1}, []float32{0, 0}, 2, 1, 2, 2)
	assert.Equal(t, []int32{1, 0}, idx)
	assert.Equal(t, []float32{2, 25}, dist)
}

func TestBPRefHandComputed(t *testing.T) {
	// One example x = (1, 2), one hidden unit with weights (0.5, -0.25):
	// s = 0, h = 0.5, h(1-h) = 0.25, and with delta = 1, G = x * 0.25.
	h, g := BPRef([]float32{1, 2}, []float32{0.5, -0.25}, []float32{1}, 1, 2, 1)
	assert.Equal(t, []float32{0.5}, h)
	assert.Equal(t, []float32{0.25, 0.5}, g)

	// Two examples accumulate: x = (1), (3); weights 0 so h = 0.5; deltas
	// 1 and -2: G = 0.25 * (1*1 + 3*-2) = -1.25.
	h, g = BPRef([]float32{1, 3}, []float32{0}, []float32{1, -2}, 2, 1, 1)
	assert.Equal(t, []float32{0.5, 0.5}, h)
	assert.Equal(t, []float32{-1.25}, g)
}

func TestHotspotRefHandComputed(t *testing.T) {
	// One cell: its neighbours are itself, so only power and the ambient
	// term act: 100 + 0.5 * (0 + (80 - 100) * 1) = 90.
	one := HotspotCoeffs{StepDivCap: 0.5, Rx1: 1, Ry1: 1, Rz1: 1, Amb: 80}
	assert.Equal(t, []float32{90}, HotspotRef([]float32{0}, []float32{100}, 1, 1, 1, one))
	// With power 2, two steps: 100 + 0.5 * (2 - 20) = 91, then
	// 91 + 0.5 * (2 - 11) = 86.5.
	assert.Equal(t, []float32{86.5}, HotspotRef([]float32{2}, []float32{100}, 1, 1, 2, HotspotCoeffs{0.5, 1, 1, 1, 80}))

	// Two cells in a row exchange heat through Rx only: each moves a
	// quarter of the difference.
	row := HotspotCoeffs{StepDivCap: 0.25, Rx1: 1, Amb: 80}
	assert.Equal(t, []float32{95, 85}, HotspotRef([]float32{0, 0}, []float32{100, 80}, 1, 2, 1, row))
}

func TestHotspotCoeffsMatchRodinia(t *testing.T) {
	// Rodinia's 512 x 512 grid: Rx = Ry = 1/(2 K t) = 10, Rz = t/(K gh gw).
	c := hotspotCoeffs(512, 512)
	assert.InDelta(t, 0.1, c.Rx1, 1e-6)
	assert.InDelta(t, 0.1, c.Ry1, 1e-6)
	gh := 0.016 / 512
	assert.InDelta(t, 100*gh*gh/0.0005, float64(c.Rz1), 1e-9)
	assert.Equal(t, float32(80), c.Amb)
}

// small builds each workload at a test size.
var small = []struct {
	name  string
	build func(seed int64) (*Workload, error)
}{
	{"sobel", func(s int64) (*Workload, error) { return Sobel(SobelParams{Jobs: 5, Size: 32}, s) }},
	{"sssp", func(s int64) (*Workload, error) {
		return SSSP(SSSPParams{Jobs: 5, Vertices: 300, Degree: 4, Iterations: 6}, s)
	}},
	{"bp", func(s int64) (*Workload, error) { return BP(BPParams{Jobs: 5, Batch: 4, Inputs: 20, Hidden: 70}, s) }},
	{"gemm", func(s int64) (*Workload, error) { return GEMM(GEMMParams{Jobs: 5, Size: 32}, s) }},
	{"knn", func(s int64) (*Workload, error) {
		return KNN(KNNParams{Jobs: 5, Points: 500, Queries: 3, Dims: 4, K: 5}, s)
	}},
	{"hotspot", func(s int64) (*Workload, error) {
		return Hotspot(HotspotParams{Jobs: 5, Size: 20, Iterations: 4}, s)
	}},
}

func TestProgramsHaveThePipelineLayout(t *testing.T) {
	for _, tt := range small {
		t.Run(tt.name, func(t *testing.T) {
			w, err := tt.build(1)
			require.NoError(t, err)
			p := w.Program
			require.NoError(t, p.Validate())
			require.Len(t, p.Steps, w.Jobs)
			assert.Positive(t, w.UnitsPerJob)
			assert.NotEmpty(t, w.Unit)
			require.Len(t, p.Host, 2)
			assert.True(t, p.Host[hostIn].Pinned)
			assert.True(t, p.Host[hostOut].Pinned && p.Host[hostOut].Output)
			owner := map[int]int{} // device buffer -> the job that touches it
			shape := p.Steps[0].Ops
			for j, s := range p.Steps {
				ops := s.Ops
				require.Len(t, ops, len(shape), "job %d has the shape of job 0", j)
				first, last := ops[0], ops[len(ops)-1]
				require.Equal(t, workloads.OpCopy, first.Kind)
				assert.Equal(t, device.HostToDevice, first.Copy.Kind)
				assert.Equal(t, int64(j)*(p.Host[hostIn].Bytes/int64(w.Jobs)), first.Copy.HostOff)
				require.Equal(t, workloads.OpCopy, last.Kind)
				assert.Equal(t, device.DeviceToHost, last.Copy.Kind)
				assert.Equal(t, int64(j)*w.OutSlot, last.Copy.HostOff)
				for k, op := range ops {
					assert.Equal(t, shape[k].Kind, op.Kind)
					touch := func(b int) {
						if o, ok := owner[b]; ok {
							assert.Equal(t, j, o, "buffer %s shared between jobs", p.Buffers[b].Name)
						}
						owner[b] = j
						assert.Nil(t, p.Buffers[b].Init, "job buffers have no initial contents")
					}
					if op.Kind == workloads.OpKernel {
						assert.Same(t, shape[k].Kernel, op.Kernel)
						assert.Equal(t, shape[k].Grid, op.Grid)
						assert.Equal(t, shape[k].Block, op.Block)
						for _, a := range op.Args {
							if a.Buf >= 0 {
								touch(a.Buf)
							}
						}
					} else {
						assert.Equal(t, shape[k].Copy.Kind, op.Copy.Kind)
						assert.Equal(t, shape[k].Copy.Bytes, op.Copy.Bytes)
						if op.Copy.Kind == device.HostToDevice {
							touch(op.Copy.Dst)
						} else {
							touch(op.Copy.Src)
						}
					}
				}
			}
		})
	}
}

func TestInputsAreSeededAndDifferPerJob(t *testing.T) {
	for _, tt := range small {
		t.Run(tt.name, func(t *testing.T) {
			input := func(seed int64) []byte {
				w, err := tt.build(seed)
				require.NoError(t, err)
				data := make([]byte, w.Program.Host[hostIn].Bytes)
				w.Program.Host[hostIn].Init(data)
				return data
			}
			a, b, c := input(7), input(7), input(8)
			assert.Equal(t, a, b, "same seed, same inputs")
			assert.NotEqual(t, a, c, "another seed, other inputs")
			w, _ := tt.build(7)
			slot := len(a) / w.Jobs
			assert.NotEqual(t, a[:slot], a[slot:2*slot], "jobs get different inputs")
		})
	}
}

func TestCheckAcceptsReferencesAndNamesTheWrongJob(t *testing.T) {
	for _, tt := range small {
		t.Run(tt.name, func(t *testing.T) {
			w, err := tt.build(3)
			require.NoError(t, err)
			out := make([]byte, w.Program.Host[hostOut].Bytes)
			for j := 0; j < w.Jobs; j++ {
				ref := w.Reference(j)
				copy(out[int64(j)*w.OutSlot:], ref)
			}
			require.NoError(t, w.Program.Check(map[string][]byte{"out": out}))
			assert.False(t, bytes.Equal(w.Reference(0), w.Reference(1)), "jobs have different results")

			// Corrupt one value of job 3: Check must name job 3.
			bad := append([]byte(nil), out...)
			at := 3*w.OutSlot + 4*3
			bad[at+3] ^= 0x40
			err = w.Program.Check(map[string][]byte{"out": bad})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "job 3")

			err = w.Program.Check(map[string][]byte{"out": make([]byte, len(out))})
			assert.Error(t, err, "an all-zero output is not a result")
			assert.ErrorContains(t, w.Program.Check(map[string][]byte{}), "missing")
		})
	}
}

func TestReferencesOnRealInputsAreNontrivial(t *testing.T) {
	w, err := SSSP(SSSPParams{Jobs: 4, Vertices: 300, Degree: 4, Iterations: 6}, 1)
	require.NoError(t, err)
	d := f32s(w.Reference(0), 0, 300)
	finite := 0
	for _, v := range d {
		if !math.IsInf(float64(v), 1) {
			finite++
		}
	}
	assert.Equal(t, float32(0), d[0], "the source")
	assert.Greater(t, finite, 50, "relaxation reaches much of the graph")
	assert.Less(t, finite, 300, "but not all of it within 6 rounds or with no in-edges")
}

func TestBadParametersAreErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"too few jobs", func() error { _, e := Sobel(SobelParams{Jobs: 3, Size: 32}, 1); return e }(), "jobs is 3"},
		{"too many jobs", func() error { _, e := GEMM(GEMMParams{Jobs: 5000, Size: 32}, 1); return e }(), "jobs is 5000"},
		{"sobel size", func() error { _, e := Sobel(SobelParams{Jobs: 4, Size: 30}, 1); return e }(), "size is 30"},
		{"gemm size", func() error { _, e := GEMM(GEMMParams{Jobs: 4, Size: 0}, 1); return e }(), "size is 0"},
		{"sssp odd iterations", func() error {
			_, e := SSSP(SSSPParams{Jobs: 4, Vertices: 10, Degree: 2, Iterations: 3}, 1)
			return e
		}(), "iterations is 3"},
		{"sssp degree", func() error {
			_, e := SSSP(SSSPParams{Jobs: 4, Vertices: 10, Degree: 0, Iterations: 2}, 1)
			return e
		}(), "degree is 0"},
		{"knn k", func() error {
			_, e := KNN(KNNParams{Jobs: 4, Points: 10, Queries: 1, Dims: 2, K: 9}, 1)
			return e
		}(), "k is 9"},
		{"bp batch", func() error { _, e := BP(BPParams{Jobs: 4, Batch: 0, Inputs: 2, Hidden: 2}, 1); return e }(), "batch is 0"},
		{"hotspot size", func() error {
			_, e := Hotspot(HotspotParams{Jobs: 4, Size: 1, Iterations: 2}, 1)
			return e
		}(), "size is 1"},
		// Issue 23: sizes within each parameter's range whose product is
		// not; refused before any buffer is laid out.
		{"knn scratch", func() error {
			_, e := KNN(KNNParams{Jobs: 4, Points: 1 << 20, Queries: 65535, Dims: 1, K: 1}, 1)
			return e
		}(), "bytes of device memory, above the limit of 137438953472 (workloads.MaxDeviceBytes)"},
		{"sobel memory", func() error { _, e := Sobel(SobelParams{Jobs: 4096, Size: 4096}, 1); return e }(),
			"(input bytes = 67108864 + output bytes = 67108864) x jobs 4096 = 549755813888 bytes of device memory, above the limit of 137438953472 (workloads.MaxDeviceBytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Error(t, tt.err)
			assert.Contains(t, tt.err.Error(), tt.want)
		})
	}
}

func TestDefaultsBuild(t *testing.T) {
	for name, build := range map[string]func() (*Workload, error){
		"sobel":   func() (*Workload, error) { return Sobel(DefaultSobel(), 1) },
		"sssp":    func() (*Workload, error) { return SSSP(DefaultSSSP(), 1) },
		"bp":      func() (*Workload, error) { return BP(DefaultBP(), 1) },
		"gemm":    func() (*Workload, error) { return GEMM(DefaultGEMM(), 1) },
		"knn":     func() (*Workload, error) { return KNN(DefaultKNN(), 1) },
		"hotspot": func() (*Workload, error) { return Hotspot(DefaultHotspot(), 1) },
	} {
		w, err := build()
		require.NoError(t, err, name)
		assert.Equal(t, 256, w.Jobs, name)
	}
}
