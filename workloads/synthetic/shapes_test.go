package synthetic

import (
	"crypto/sha256"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// fingerprint hashes everything a program is: buffers, their initial
// contents, every operation's grid, arguments and work.
func fingerprint(prog *workloads.Program) string {
	h := sha256.New()
	for _, b := range prog.Buffers {
		_, _ = fmt.Fprintf(h, "%s %d %v|", b.Name, b.Bytes, b.Output) // a hash's Write never fails
		if b.Init != nil {
			raw := make([]byte, b.Bytes)
			b.Init(raw)
			h.Write(raw)
		}
	}
	for _, st := range prog.Steps {
		for _, o := range st.Ops {
			_, _ = fmt.Fprintf(h, "%s %d %v %v %+v|", o.Name, o.Kind, o.Grid, o.Args, o.Work)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

// The optional parameters leave the plain DAGs as they were: these
// fingerprints were taken before widths, max_iters, copies and downloads
// existed, so committed results keep meaning the same programs.
func TestPlainProgramsUnchanged(t *testing.T) {
	a, err := Generate(Defaults(), 7)
	require.NoError(t, err)
	q := Defaults()
	q.Layers, q.Width, q.FanIn, q.Skip, q.Iters, q.Steps = 5, 3, 3, 0.5, 4096, 2
	b, err := Generate(q, 11)
	require.NoError(t, err)
	assert.Equal(t, "07b1485e2d17d7e6", fingerprint(a))
	assert.Equal(t, "4ca19b759fe7d7c4", fingerprint(b))
}

// outputsOf is what a correct device returns: the reference's output
// buffers, device and host.
func outputsOf(t *testing.T, prog *workloads.Program) map[string][]byte {
	t.Helper()
	dev, host, err := reference(prog)
	require.NoError(t, err)
	out := map[string][]byte{}
	for i, b := range prog.Buffers {
		if b.Output {
			raw := make([]byte, b.Bytes)
			putFloats(raw, dev[i])
			out[b.Name] = raw
		}
	}
	for i, b := range prog.Host {
		if b.Output {
			raw := make([]byte, b.Bytes)
			putFloats(raw, host[i])
			out[b.Name] = raw
		}
	}
	return out
}

func TestWidthsMakeForksAndJoins(t *testing.T) {
	p := Defaults()
	p.Layers, p.Width, p.Widths, p.FanIn, p.Steps, p.MaxBlocks = 4, 2, []int{1, 6, 1, 3}, 4, 2, 16
	prog, err := Generate(p, 5)
	require.NoError(t, err)
	require.NoError(t, prog.Validate())
	assert.Equal(t, 2*(1+6+1+3), prog.NumOps())
	// The join (layer 3, one node) reads only the six-wide layer 2.
	layer2 := map[int]bool{}
	for i, b := range prog.Buffers {
		if len(b.Name) > 3 && b.Name[:3] == "n2." {
			layer2[i] = true
		}
	}
	join := prog.Steps[0].Ops[1+6]
	assert.Equal(t, "s0.n3.0", join.Name)
	for k := 0; k < 4; k++ {
		assert.True(t, layer2[join.Args[2*k].Buf], "input %d of the join", k)
	}
	require.NoError(t, prog.Check(outputsOf(t, prog)))

	p.Widths = []int{1, 2}
	_, err = Generate(p, 5)
	assert.ErrorContains(t, err, "widths lists 2 layers, layers is 4")
	p.Widths = []int{1, 0, 1, 1}
	_, err = Generate(p, 5)
	assert.ErrorContains(t, err, "widths[1]")
}

func TestMaxItersMixesLengths(t *testing.T) {
	p := Defaults()
	p.Iters, p.MaxIters, p.Steps, p.MaxBlocks = 16, 4096, 1, 8
	prog, err := Generate(p, 3)
	require.NoError(t, err)
	seen := map[int32]bool{}
	for _, o := range prog.Steps[0].Ops {
		it := int32(o.Args[11].Bits)
		assert.GreaterOrEqual(t, it, int32(16))
		assert.LessOrEqual(t, it, int32(4096))
		assert.Equal(t, Work(p.Threads, 2, int(it)), o.Work)
		seen[it] = true
	}
	assert.Greater(t, len(seen), 20, "64 nodes draw many lengths")
	require.NoError(t, prog.Check(outputsOf(t, prog)))
	p.MaxIters = 8
	_, err = Generate(p, 3)
	assert.ErrorContains(t, err, "max_iters")
}

func TestCopiesAndDownloads(t *testing.T) {
	p := Defaults()
	p.Copies, p.CopyBytes, p.Downloads, p.Steps, p.MaxBlocks = 0.5, 1<<16, true, 2, 16
	prog, err := Generate(p, 9)
	require.NoError(t, err)
	require.NoError(t, prog.Validate())
	var uploads, downloads int
	for _, o := range prog.Steps[1].Ops {
		if o.Kind != workloads.OpCopy {
			continue
		}
		switch o.Copy.Kind {
		case device.HostToDevice:
			uploads++
			assert.Equal(t, int64(1<<16), o.Copy.Bytes)
			assert.NotEqual(t, "n8", prog.Buffers[o.Copy.Dst].Name[:2], "the last layer is kernels")
		case device.DeviceToHost:
			downloads++
			assert.Equal(t, prog.Buffers[o.Copy.Src].Bytes, o.Copy.Bytes)
		}
	}
	assert.Greater(t, uploads, 10, "about half of 56 nodes")
	assert.Equal(t, p.Width, downloads, "the last layer, every step")
	// Step 1's downloads come after its last layer: the last ops.
	last := prog.Steps[1].Ops[len(prog.Steps[1].Ops)-1]
	assert.Equal(t, device.DeviceToHost, last.Copy.Kind)

	out := outputsOf(t, prog)
	require.NoError(t, prog.Check(out))
	// The downloads hold the last layer's final values.
	assert.Equal(t, out["n8.0"], out["out0"])
	out["out3"][5] ^= 1
	assert.ErrorContains(t, prog.Check(out), "output out3[1]")
	// Uploads carry their host data into the DAG.
	dev, host, err := reference(prog)
	require.NoError(t, err)
	for _, o := range prog.Steps[0].Ops {
		if o.Kind == workloads.OpCopy && o.Copy.Kind == device.HostToDevice {
			assert.Equal(t, host[o.Copy.Host], dev[o.Copy.Dst])
			break
		}
	}
	for _, bad := range []Params{{Copies: 1.5}, {Copies: math.NaN()}, {CopyBytes: 6}} {
		q := Defaults()
		q.Copies, q.CopyBytes = bad.Copies, bad.CopyBytes
		_, err := Generate(q, 1)
		assert.Error(t, err)
	}
}

func TestReferenceSplitsLargeNodes(t *testing.T) {
	p := Defaults()
	p.Layers, p.Width, p.Steps, p.MinBlocks, p.MaxBlocks, p.Iters = 1, 1, 1, 256, 256, 64
	prog, err := Generate(p, 2)
	require.NoError(t, err)
	dev, err := Reference(prog)
	require.NoError(t, err)
	o := prog.Steps[0].Ops[0]
	in := [4][]float32{dev[o.Args[0].Buf], dev[o.Args[2].Buf], dev[o.Args[4].Buf], dev[o.Args[6].Buf]}
	out := dev[o.Args[9].Buf]
	require.Len(t, out, 256*128)
	for _, i := range []int{0, 1, 12345, len(out) - 1} {
		assert.Equal(t, math.Float32bits(Node(in, 2, i, 64)), math.Float32bits(out[i]), "element %d", i)
	}
}

func TestDrawIsBoundedAndVaried(t *testing.T) {
	chains, wide, uneven, copies := 0, 0, 0, 0
	for seed := int64(1); seed <= 200; seed++ {
		p := Draw(seed, 0)
		require.NoError(t, p.check(), "seed %d: %+v", seed, p)
		assert.Equal(t, p, Draw(seed, 0), "the same seed draws the same shape")
		nodes := 0
		for l := 1; l <= p.Layers; l++ {
			nodes += p.width(l)
		}
		assert.LessOrEqual(t, nodes*p.Steps, drawMaxOps, "seed %d", seed)
		assert.LessOrEqual(t, float64(nodes*p.Steps)*float64(p.MaxBlocks*p.Threads)*float64(max(p.Iters, p.MaxIters)+1), drawMaxWork, "seed %d", seed)
		switch {
		case p.Width == 1 && len(p.Widths) == 0 && p.Layers >= 8:
			chains++
		case p.Width >= 16 && len(p.Widths) == 0:
			wide++
		}
		if len(p.Widths) > 0 {
			uneven++
		}
		if p.Copies > 0 {
			copies++
		}
	}
	assert.Positive(t, chains)
	assert.Greater(t, wide, 10)
	assert.Greater(t, uneven, 50)
	assert.Greater(t, copies, 30)
	assert.NotEqual(t, Draw(1, 0), Draw(1, 1), "another index, another shape")
	prog, err := Generate(Draw(42, 3), 42)
	require.NoError(t, err)
	require.NoError(t, prog.Validate())
}
