package tilesync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// gemmLaunch is one GPT-3 T = 768 GEMM of 128x128 tiles (two blocks per
// H100 SM, bound by registers: 256 threads x 128).
func gemmLaunch(t *testing.T) device.Launch {
	t.Helper()
	st, err := tiles.FromOp(&gpt3MLP(t, 768).Steps[0].Ops[0])
	require.NoError(t, err)
	k, err := st.Kernel()
	require.NoError(t, err)
	return device.Launch{Kernel: k, Grid: st.Grid(), Block: device.D1(tiles.Threads)}
}

func TestCapBlocks(t *testing.T) {
	info := h100(t)
	l0 := gemmLaunch(t)
	n0, limiter := info.Occupancy(&l0)
	require.Equal(t, 2, n0, "the 128x128 GEMM holds two blocks per H100 SM")
	require.Equal(t, "registers", limiter)
	for _, tc := range []struct {
		n      int
		padded bool
	}{{1, true}, {2, false}, {3, false}} {
		l := l0
		require.NoError(t, capBlocks(info, &l, tc.n))
		got, limiter := info.Occupancy(&l)
		if !tc.padded {
			assert.Equal(t, 0, l.SharedMem, "cap %d: the kernel already holds no more", tc.n)
			assert.Equal(t, n0, got)
			continue
		}
		assert.Equal(t, tc.n, got, "cap %d", tc.n)
		assert.Equal(t, "shared memory", limiter)
		// The smallest padding that does it: one byte less fits n+1.
		l.SharedMem--
		more, _ := info.Occupancy(&l)
		assert.Equal(t, tc.n+1, more, "cap %d: padding is the least that holds the cap", tc.n)
	}

	small := *info
	small.Name = "small"
	small.MaxSharedPerBlock = 48 << 10
	l := l0
	err := capBlocks(&small, &l, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "over small's 49152-byte maximum")
	assert.Equal(t, 0, l.SharedMem, "a failed cap leaves the launch as it was")
}

func TestIsolate(t *testing.T) {
	info := h100(t)
	prod, cons := gemmLaunch(t), gemmLaunch(t)
	require.False(t, alone(info, &prod, &cons), "unpadded, a producer block shares its SM")
	require.NoError(t, isolate(info, &prod, &cons))
	assert.True(t, alone(info, &prod, &cons))
	n, _ := info.Occupancy(&prod)
	assert.Equal(t, 1, n)
	// The least padding: a byte less and a consumer block fits beside it.
	prod.SharedMem--
	assert.False(t, alone(info, &prod, &cons))

	// A consumer capped at one block per SM is larger, so the producer
	// needs less to keep it out, but still enough to keep a second
	// producer block out.
	prod, cons = gemmLaunch(t), gemmLaunch(t)
	o := Options{BlocksPerSM: 1, ProducerAlone: true}
	require.NoError(t, o.shapePair(info, &prod, &cons))
	assert.True(t, alone(info, &prod, &cons))
	assert.Greater(t, 2*info.Resources(&prod).Shared, info.SharedPerSM)
}

// TestShapingOnSimulator checks the padding against hand-counted rounds on
// the simulator's H100 (132 SMs; on it a tile takes as long alone on its SM
// as beside another: 8 warps under sm.saturation_warps = 16). GPT-3 at
// T = 768: GEMM1 288 tiles of K = 12288 (one round: a), GEMM2 576 of
// K = 6144 (b = a/2).
//
//   - stream order, two per SM (264 slots): 2 + 3 rounds = 2a + 3b = 7b;
//   - stream order, one per SM (132): 3 + 5 rounds = 11b, so 11/7 as long;
//   - RowSync with the producer alone: the producer still takes 3 rounds
//     (6b), ending where stream order's 1-per-SM producer ends. Its third
//     round holds 24 SMs; the consumer's rows 0-4 (480 tiles) are ready after
//     its second, at 4b, and fill the other 108 SMs two by two: 216 tiles
//     by 5b, 432 by 6b; then 48 + 96 (row 5) tiles on 264 slots: 7b.
//     (TestIsolate checks that no block fits beside a producer block; on
//     this simulator, where sharing an SM costs a tile nothing, consumer
//     blocks beside the producer's would spin until the same rows complete
//     and end the pair at the same 7b.)
func TestShapingOnSimulator(t *testing.T) {
	prog := gpt3MLP(t, 768)
	run := func(o Options) (float64, map[string]float64) {
		s, err := New(o)
		require.NoError(t, err)
		span, races := runOnSim(t, prog, s)
		assert.Empty(t, races, "%s", s.Name())
		return float64(span.Microseconds()), s.Stats()
	}
	with := func(f func(*Options)) Options { o := Defaults(); f(&o); return o }

	stream, _ := run(with(func(o *Options) { o.Policy = "stream" }))
	b := stream / 7
	stream1, _ := run(with(func(o *Options) { o.Policy = "stream"; o.BlocksPerSM = 1 }))
	assert.InEpsilon(t, 11*b, stream1, 0.01, "one block per SM: 3 + 5 rounds")
	alone, st := run(with(func(o *Options) { o.Policy = "row"; o.ProducerAlone = true; o.Phases = true }))
	assert.InEpsilon(t, 6*b, st["end_us 00 gemm1[0]"], 0.01, "the producer alone takes 3 rounds")
	assert.InEpsilon(t, 7*b, alone, 0.01, "the consumer fills the 108 other SMs, then all 264 slots")
}

func TestShapingOptionErrors(t *testing.T) {
	o := Defaults()
	o.BlocksPerSM = -1
	_, err := New(o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "blocks_per_sm -1")

	o = Defaults()
	o.Policy, o.ProducerAlone = "stream", true
	_, err = New(o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "producer_alone: policy stream")

	o = Defaults()
	o.Policy, o.BlocksPerSM = "row", 33
	s, err := New(o)
	require.NoError(t, err)
	assert.Contains(t, s.Name(), ",blocks_per_sm=33)")
	err = prepareOnSim(t, gpt3MLP(t, 768), s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "blocks_per_sm 33: NVIDIA H100 SXM5 80GB holds at most 32 blocks per SM")
}

// gpt3MLP is GPT-3's MLP at T tokens on 128x128 tiles, one step, without
// data (at T = 768: 1.09 + 2.18 waves on an H100).
func gpt3MLP(t *testing.T, tokens int) *workloads.Program {
	t.Helper()
	m, err := tiles.NewMLP(tiles.MLPParams{Model: "gpt3", Tokens: tokens, Tile: "auto", Steps: 1, CheckRows: 1, NoData: true}, 1)
	require.NoError(t, err)
	return m.Program
}

// prepareOnSim binds prog on the simulated H100 and returns Prepare's error.
func prepareOnSim(t *testing.T, prog *workloads.Program, s *Scheduler) error {
	t.Helper()
	dev, err := sim.NewNamed("h100-datasheet")
	require.NoError(t, err)
	var perr error
	require.NoError(t, dev.Run(func(h device.Host) error {
		hh := infoHost{h, dev.Info()}
		inst, err := workloads.Bind(hh, prog)
		if err != nil {
			return err
		}
		perr = s.Prepare(hh, inst)
		return nil
	}))
	return perr
}
