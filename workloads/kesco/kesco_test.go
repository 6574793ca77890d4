package kesco

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched/graph"
	"github.com/gpusched/gpusched/workloads"
)

// testScale shrinks every benchmark to a few thousand elements.
const testScale = 1.0 / 4096

func TestReferencesHandComputed(t *testing.T) {
	f := func(v ...float32) []float32 { return v }
	assert.Equal(t, f(4, 9, 0.25), refSquare(f(2, -3, 0.5)))
	assert.InDelta(t, -1.0, refDiffSum(f(1, 2), f(3, 1)), 1e-12)
	// Hull's textbook example: S = K = 100, r = 5%, sigma = 20%, T = 1.
	assert.InDelta(t, 10.4506, refBlackScholes(f(100), 100, 0.05, 0.2, 1)[0], 1e-3)
	// Deep in the money: about S - K e^{-rT}.
	assert.InDelta(t, 300-100*math.Exp(-0.05), refBlackScholes(f(300), 100, 0.05, 0.2, 1)[0], 1e-3)
	// Row [1 2 3]: mean 2, variance 2/3.
	z := refRowZScore(f(1, 2, 3), 1, 3)
	assert.InDeltaSlice(t, []float64{-1.2247, 0, 1.2247}, f64(z), 1e-3)
	// [1 2; 3 4] x [1 0; 0 1] + [10 20].
	assert.Equal(t, f(11, 22, 13, 24), refMatmulBias(f(1, 2, 3, 4), f(1, 0, 0, 1), f(10, 20), 2, 2, 2))
	sm := refSoftmaxRows(f(0, math.Float32frombits(0x3f317218)), 1, 2) // [0, ln 2]
	assert.InDeltaSlice(t, []float64{1.0 / 3, 2.0 / 3}, f64(sm), 1e-6)
	sum, label := refArgmaxSum(f(0.1, 0.5, 0.3, 0.3), f(0.2, 0.1, 0.1, 0.1), 2, 2)
	assert.InDeltaSlice(t, []float64{0.3, 0.6, 0.4, 0.4}, f64(sum), 1e-6)
	assert.Equal(t, []int32{1, 0}, label, "ties go to the first index")
	// 0 -> 1, 0 -> 2, 2 -> 0 with weight 2 on 2 -> 0.
	m := csr{n: 3, rowptr: []int32{0, 2, 2, 3}, col: []int32{1, 2, 0}, val: f(1, 1, 2)}
	assert.Equal(t, f(5, 0, 2), refSpmv(m, f(1, 2, 3)))
	mt := m.transpose()
	assert.Equal(t, []int32{0, 1, 2, 3}, mt.rowptr)
	assert.Equal(t, []int32{2, 0, 0}, mt.col)
	assert.Equal(t, f(2, 1, 1), mt.val)
	assert.Equal(t, f(0.25, 0.75), refNormalize(f(1, 3)))
	// A 3x3 box filter on a 2x2 image clamps at the border.
	box := f(1, 1, 1, 1, 1, 1, 1, 1, 1)
	for i := range box {
		box[i] /= 9
	}
	// Pixel (0,0) sees 4 copies of a, 2 of b, 2 of c, 1 of d.
	bl := refBlur(f(9, 0, 0, 0), box, 2, 2, 1)
	assert.InDelta(t, 4.0, bl[0], 1e-6)
	assert.InDelta(t, 1.0, bl[3], 1e-6)
	// A vertical step edge: gx = 4 at interior columns next to it.
	img := f(0, 0, 1, 0, 0, 1, 0, 0, 1)
	sob := refSobel(img, 3, 3)
	assert.InDelta(t, 4.0, sob[4], 1e-6)
	assert.InDelta(t, 0.0, sob[3], 1e-6, "clamped border: both sides of x=0 read flat columns")
	assert.InDelta(t, 4.0, sob[5], 1e-6, "clamped border: x=2 reads itself on the right")
	assert.Equal(t, f(0, 0.5, 1), refExtend(f(2, 3, 4)))
	assert.Equal(t, f(1, 0, 0.5), refUnsharpen(f(0.8, 0.1, 0.5), f(0.2, 0.4, 0.5), 0.5))
	assert.Equal(t, f(1, 6), refCombine(f(1, 2), f(3, 6), f(1, 0)))
	// 3x3 conv of a 1-channel 2x2 all-ones image with all-ones weights:
	// each output sees the 4 pixels; bias -1; ReLU.
	conv := refConv3x3ReLU(f(1, 1, 1, 1), f(1, 1, 1, 1, 1, 1, 1, 1, 1), f(-1), 1, 1, 2, 2)
	assert.Equal(t, f(3, 3, 3, 3), conv)
	assert.Equal(t, f(0), refConv3x3ReLU(f(1, 1, 1, 1), f(1, 1, 1, 1, 1, 1, 1, 1, 1), f(-5), 1, 1, 2, 2)[:1])
	assert.Equal(t, f(4, 8), refMaxPool2(f(1, 2, 3, 4, 5, 6, 7, 8), 2, 2, 2))
	assert.Equal(t, f(5, 1), refDense(f(1, 2), f(1, 2, 0, 0), f(0, 1), 2, 2))
	assert.InDelta(t, 0.841192, refBiasGeLU(f(0.5), f(0.5))[0], 1e-5)
	assert.InDelta(t, 0.731059, refBiasSiLU(f(1), f(0))[0], 1e-6)
	assert.Equal(t, f(0, 3), refBiasGatedReLU(f(-1, 1), f(5, 2), f(0, 0.5)))
	assert.Equal(t, f(4.5, 6.5), refBiasResidual(f(0.5), f(1, 2), f(3, 4)))
	assert.Equal(t, f(10), refSum4(f(1), f(2), f(3), f(4)))
}

func f64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func TestBenchmarksShapes(t *testing.T) {
	tests := []struct {
		name       string
		ops, width int
	}{
		{"VEC", 4, 2}, {"BS", 10, 10}, {"ML", 6, 2}, {"HITS", 6 * hitsIters, 2},
		{"IMG", 10, 3}, {"DL", 8, 2}, {"M1", 17, 8}, {"M2", 14, 6},
	}
	require.Len(t, tests, len(Names))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.name, Params{Scale: testScale}, 1)
			require.NoError(t, err)
			require.Len(t, p.Steps, 1)
			assert.Equal(t, tc.ops, p.NumOps())
			d := dagOf(t, p)
			wd, err := d.Width()
			require.NoError(t, err)
			assert.Equal(t, tc.width, wd)
			for _, op := range p.Steps[0].Ops {
				assert.Greater(t, op.Work.Bytes+op.Work.Flops, 0.0, op.Name)
				assert.LessOrEqual(t, op.Grid.X, max(DefaultBlocks, dlDense), op.Name)
			}
		})
	}
}

// dagOf binds p on a recording host (addresses only) and builds its DAG.
func dagOf(t *testing.T, p *workloads.Program) *graph.DAG {
	t.Helper()
	in, err := workloads.Bind(addrHost{next: new(uint64)}, p)
	require.NoError(t, err)
	d, err := graph.FromInstance(in, 0, in.N())
	require.NoError(t, err)
	return d
}

func TestBenchmarksComputeTheirReferences(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			p, err := New(name, Params{Scale: testScale}, 7)
			require.NoError(t, err)
			out, err := cpuRun(p)
			require.NoError(t, err)
			require.NoError(t, p.Check(out))
			// A corrupted element of any output is caught.
			for k := range out {
				bad := map[string][]byte{}
				for k2, v := range out {
					bad[k2] = append([]byte(nil), v...)
				}
				bad[k][len(bad[k])-2] ^= 0x40 // flip a high mantissa/exponent bit of the last element
				require.Error(t, p.Check(bad), "corrupting %s", k)
			}
			delete(out, name)
			for k := range out {
				delete(out, k)
				require.ErrorContains(t, p.Check(out), "missing")
				break
			}
		})
	}
}

func TestDeterministicAndSeeded(t *testing.T) {
	a, err := New("M1", Params{Scale: testScale}, 3)
	require.NoError(t, err)
	b, err := New("M1", Params{Scale: testScale}, 3)
	require.NoError(t, err)
	c, err := New("M1", Params{Scale: testScale}, 4)
	require.NoError(t, err)
	oa, _ := cpuRun(a)
	ob, _ := cpuRun(b)
	oc, _ := cpuRun(c)
	assert.Equal(t, oa, ob)
	assert.NotEqual(t, oa, oc)
}

func TestParamErrors(t *testing.T) {
	_, err := New("VECTOR", Params{Scale: 1}, 1)
	require.ErrorContains(t, err, `unknown benchmark "VECTOR"`)
	_, err = New("VEC", Params{}, 1)
	require.ErrorContains(t, err, "scale must be a number in (0, 64] (kesco.MaxScale), got 0")
	// Issue 23: NaN, infinite and huge scales, and a ratio whose sum
	// overflowed.
	for _, s := range []float64{math.NaN(), math.Inf(1), 1e300} {
		_, err = New("M1", Params{Scale: s}, 1)
		require.ErrorContains(t, err, "(kesco.MaxScale)")
	}
	_, err = Mix(MixParams{Tasks: 4, Large: math.MaxInt, Small: 1, Scale: 1}, 1)
	require.ErrorContains(t, err, "must be of non-negative numbers up to 1048576")
	_, err = Mix(MixParams{Tasks: 4, Large: 1, Small: 1, Scale: math.NaN()}, 1)
	require.ErrorContains(t, err, "kesco mix: scale must be")
	_, err = New("VEC", Params{Scale: 1, Blocks: -2}, 1)
	require.ErrorContains(t, err, "blocks must not be negative")
	_, err = Mix(MixParams{Tasks: 0, Large: 1, Small: 1, Scale: 1}, 1)
	require.ErrorContains(t, err, "tasks must be in")
	_, err = Mix(MixParams{Tasks: 4, Scale: 1}, 1)
	require.ErrorContains(t, err, "ratio 0:0 must be")
}

func TestMix(t *testing.T) {
	p, err := Mix(MixParams{Tasks: 16, Large: 3, Small: 1, Scale: testScale}, 5)
	require.NoError(t, err)
	require.Len(t, p.Steps, 16)
	large := 0
	for _, st := range p.Steps {
		name := st.Ops[0].Name[4:] // "tNN.<bench>.<op>"
		for _, l := range LargeSet {
			if len(name) > len(l) && name[:len(l)+1] == toLowerDot(l) {
				large++
			}
		}
	}
	assert.Equal(t, 12, large, "3:1 of 16 tasks is 12 large")
	// Tasks are independent: the DAG has no edge between steps.
	d := dagOf(t, p)
	stepOf := make([]int, 0, p.NumOps())
	for s, st := range p.Steps {
		for range st.Ops {
			stepOf = append(stepOf, s)
		}
	}
	for u, ss := range d.Succ {
		for _, v := range ss {
			assert.Equal(t, stepOf[u], stepOf[v], "edge %d -> %d crosses tasks", u, v)
		}
	}
	out, err := cpuRun(p)
	require.NoError(t, err)
	require.NoError(t, p.Check(out))
	for k := range out {
		out[k][0] ^= 0xff
		out[k][1] ^= 0xff
		out[k][2] ^= 0x7f
		break
	}
	require.ErrorContains(t, p.Check(out), "task t")

	again, err := Mix(MixParams{Tasks: 16, Large: 3, Small: 1, Scale: testScale}, 5)
	require.NoError(t, err)
	for i := range p.Steps {
		assert.Equal(t, p.Steps[i].Ops[0].Name, again.Steps[i].Ops[0].Name)
	}
}

func toLowerDot(s string) string {
	b := []byte(s + ".")
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// addrHost hands out non-overlapping addresses and ignores everything else:
// enough for Bind and DAG building.
type addrHost struct {
	device.Host
	next *uint64
}

func (h addrHost) Malloc(n int64) (device.Buffer, error) {
	if *h.next == 0 {
		*h.next = 1 << 20
	}
	b := device.Buffer{Addr: *h.next, Size: n}
	*h.next += uint64(n) + 256
	return b, nil
}
func (h addrHost) AllocHost(n int64, pinned bool) (*device.HostMem, error) {
	return &device.HostMem{Data: make([]byte, n), Pinned: pinned}, nil
}
func (h addrHost) FreeHost(*device.HostMem) error                        { return nil }
func (h addrHost) Free(device.Buffer) error                              { return nil }
func (h addrHost) NewStream(device.StreamOptions) (device.Stream, error) { return nil, nil }
func (h addrHost) Destroy(device.Resource) error                         { return nil }
func (h addrHost) Copy(device.Stream, *device.Copy) error                { return nil }
func (h addrHost) StreamSynchronize(device.Stream) error                 { return nil }
