package tilesync

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/tiles"
)

func gemm(t *testing.T, tile tiles.Tile, m, n, k int, amode tiles.AMode) tiles.Stage {
	s, err := tiles.NewGEMM(tile, m, n, k, amode, tiles.EpiNone)
	require.NoError(t, err)
	return s
}

func conv(t *testing.T, tile tiles.Tile, b, hw, c int) tiles.Stage {
	s, err := tiles.NewConv(tile, b, hw, hw, c, c, tiles.EpiReLU)
	require.NoError(t, err)
	return s
}

func TestPairMappings(t *testing.T) {
	t128 := tiles.Tile{BM: 128, BN: 128}
	// Producer 256 x 512 (2 x 4 tiles), consumer reads its 512 columns.
	prod := gemm(t, t128, 256, 512, 64, tiles.APlain)
	cons := gemm(t, t128, 256, 128, 512, tiles.APlain)

	row, err := NewPair(RowSync, prod, cons)
	require.NoError(t, err)
	assert.Equal(t, 2, row.Counters)
	assert.Equal(t, 4, row.PerCounter, "a row counter counts the row's 4 tiles")
	assert.Equal(t, 1, row.PostIndex(1, 3))
	assert.Equal(t, []int{0}, row.WaitGroups(nil), "one wait per consumer tile")

	tile, err := NewPair(TileSync, prod, cons)
	require.NoError(t, err)
	assert.Equal(t, 8, tile.Counters)
	assert.Equal(t, 1, tile.PerCounter)
	assert.Equal(t, 7, tile.PostIndex(1, 3))
	assert.Equal(t, []int{0, 1, 2, 3}, tile.WaitGroups(nil), "one wait per producer tile of the row")
	lo, hi := tile.WaitRows(1)
	assert.Equal(t, [2]int{1, 1}, [2]int{lo, hi})

	// LLaMA: gate|up producer of 2 x 256 columns (4 tiles), SwiGLU consumer.
	gu := gemm(t, t128, 256, 512, 64, tiles.APlain)
	sw := gemm(t, t128, 256, 128, 256, tiles.ASwiGLU)
	str, err := NewPair(StridedSync, gu, sw)
	require.NoError(t, err)
	assert.Equal(t, 2, str.PerCounter, "gate and up tiles both count")
	assert.Equal(t, 4, str.Counters)
	assert.Equal(t, str.PostIndex(1, 0), str.PostIndex(1, 2), "gate tile 0 and up tile 0 share a counter")
	assert.Equal(t, 3, str.PostIndex(1, 3))
	assert.Equal(t, []int{0, 1}, str.WaitGroups(nil))

	// Conv: 1 image 16x16 = 256 pixels in 64-pixel tiles, 64 channels.
	t64 := tiles.Tile{BM: 64, BN: 64}
	c1, c2 := conv(t, t64, 1, 16, 64), conv(t, t64, 1, 16, 64)
	cv, err := NewPair(Conv2DTileSync, c1, c2)
	require.NoError(t, err)
	assert.Equal(t, 4, cv.Counters)
	// Tile 1 holds pixels 64..127; its halo reaches 64-17 = 47 and 127+17 = 144.
	lo, hi = cv.WaitRows(1)
	assert.Equal(t, [2]int{0, 2}, [2]int{lo, hi})
	lo, hi = cv.WaitRows(0)
	assert.Equal(t, [2]int{0, 1}, [2]int{lo, hi})
	lo, hi = cv.WaitRows(3)
	assert.Equal(t, [2]int{2, 3}, [2]int{lo, hi})
}

func TestNewPairRejects(t *testing.T) {
	t128, t64 := tiles.Tile{BM: 128, BN: 128}, tiles.Tile{BM: 64, BN: 128}
	prod := gemm(t, t128, 256, 512, 64, tiles.APlain)
	for _, c := range []struct {
		name   string
		policy Policy
		cons   tiles.Stage
		want   string
	}{
		{"row tiles differ", RowSync, gemm(t, t64, 256, 128, 512, tiles.APlain), "one producer row tile"},
		{"wrong width", RowSync, gemm(t, t128, 256, 128, 256, tiles.APlain), "producer writes 512"},
		{"tile on swiglu", TileSync, gemm(t, t128, 256, 128, 256, tiles.ASwiGLU), "gate and the up tile"},
		{"strided on plain", StridedSync, gemm(t, t128, 256, 128, 512, tiles.APlain), "plain gemm"},
		{"conv2d on gemm", Conv2DTileSync, gemm(t, t128, 256, 128, 512, tiles.APlain), "convolution pairs"},
		{"stream", StreamSync, gemm(t, t128, 256, 128, 512, tiles.APlain), "no tile synchronization"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPair(c.policy, prod, c.cons)
			assert.ErrorContains(t, err, c.want)
		})
	}
	assert.Equal(t, StridedSync, Finest(prod, gemm(t, t128, 256, 128, 256, tiles.ASwiGLU)))
	assert.Equal(t, TileSync, Finest(prod, gemm(t, t128, 256, 128, 512, tiles.APlain)))
	_, err := ParsePolicy("rows")
	assert.ErrorContains(t, err, `policy "rows"`)
	_, err = New(Options{Policy: "row", WaitKernel: "maybe", TileOrder: "auto", IndependentFirst: "auto"})
	assert.ErrorContains(t, err, `wait_kernel "maybe"`)
}

func h100(t *testing.T) *device.Info {
	cfg, err := sim.LoadConfig("h100")
	require.NoError(t, err)
	return &cfg.Info
}

func TestChooseRule(t *testing.T) {
	in := h100(t)
	mlp := func(model string, tokens int) (tiles.Stage, tiles.Stage) {
		m, err := tiles.NewMLP(tiles.MLPParams{Model: model, Tokens: tokens, Tile: "auto", Steps: 1, CheckRows: 1}, 1)
		require.NoError(t, err)
		return m.GEMM1, m.GEMM2
	}
	type tc struct {
		name        string
		model       string
		tokens      int
		policy      Policy
		wait, order bool
	}
	for _, c := range []tc{
		{"gpt3 T=1: one wave", "gpt3", 1, TileSync, false, false},
		{"gpt3 T=512: producer in one wave, pair in two", "gpt3", 512, StreamSync, true, false},
		{"gpt3 T=2048: 5 rows a wave", "gpt3", 2048, RowSync, true, true},
		{"llama T=16: one wave", "llama", 16, StridedSync, false, false},
		{"llama T=1024", "llama", 1024, RowSync, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, q := mlp(c.model, c.tokens)
			ch, err := Choose(in, p, q)
			require.NoError(t, err)
			assert.Equal(t, c.policy, ch.Policy, ch.Why)
			assert.Equal(t, c.wait, ch.WaitKernel, ch.Why)
			assert.Equal(t, c.order, ch.TileOrder, ch.Why)
			assert.True(t, ch.IndependentFirst)
		})
	}
	// A producer row wider than a wave: 2 rows of 512 column tiles, each
	// more than the 264 resident slots.
	wide := gemm(t, tiles.Tile{BM: 128, BN: 128}, 256, 65536, 64, tiles.APlain)
	wc := gemm(t, tiles.Tile{BM: 128, BN: 128}, 256, 128, 65536, tiles.APlain)
	ch, err := Choose(in, wide, wc)
	require.NoError(t, err)
	assert.Equal(t, TileSync, ch.Policy, ch.Why)
	assert.Equal(t, 2, mustOcc(t, in, wide), "112 registers x 256 threads: 2 blocks per H100 SM")
}

func mustOcc(t *testing.T, in *device.Info, s tiles.Stage) int {
	n, err := Occupancy(in, s)
	require.NoError(t, err)
	return n
}

func TestBlockSyncModel(t *testing.T) {
	t128 := tiles.Tile{BM: 128, BN: 128}
	prod := gemm(t, t128, 256, 512, 64, tiles.APlain)
	cons := gemm(t, t128, 256, 256, 512, tiles.APlain)
	buf := device.Buffer{Addr: 4096, Size: 64}
	pair, err := NewPair(TileSync, prod, cons)
	require.NoError(t, err)
	ps := &ProducerSync{Pair: pair, Counters: buf, Flag: true}
	assert.Equal(t, []device.Counter{{Buf: buf, Index: 0}}, ps.Posts(0, nil))
	assert.Equal(t, []device.Counter{{Buf: buf, Index: pair.flagIndex()}}, ps.StartPosts(0, nil), "block 0 raises the start flag as it starts")
	assert.Empty(t, ps.StartPosts(1, nil))
	assert.Equal(t, []device.Counter{{Buf: buf, Index: 6}}, ps.Posts(6, nil))
	assert.Empty(t, ps.Waits(6, nil))
	// Reversed order table: block 0 computes the last tile.
	ps.Order = []int32{7, 6, 5, 4, 3, 2, 1, 0}
	assert.Equal(t, 7, ps.Posts(0, nil)[0].Index)

	cs := &ConsumerSync{Pair: pair, Counters: buf, Iter: 3}
	w := cs.Waits(2, nil) // consumer tile 2 = row 1 (2 tiles per row)
	require.Len(t, w, 4)
	for i, cw := range w {
		assert.Equal(t, 4+i, cw.Counter.Index, "row 1's four producer tiles")
		assert.Equal(t, uint32(3), cw.Target, "run 3 of a 1-tile counter")
	}
	row, err := NewPair(RowSync, prod, cons)
	require.NoError(t, err)
	cs = &ConsumerSync{Pair: row, Counters: buf, Iter: 2}
	assert.Equal(t, []device.CounterWait{{Counter: device.Counter{Buf: buf, Index: 1}, Target: 8}}, cs.Waits(3, nil))
	wk := &WaitKernelSync{Pair: row, Counters: buf, Iter: 5}
	assert.Equal(t, []device.CounterWait{{Counter: device.Counter{Buf: buf, Index: 2}, Target: 5}}, wk.Waits(0, nil))
}

// infoHost gives the scheduler the device description, as device.InfoHost.
type infoHost struct {
	device.Host
	info device.Info
}

func (h infoHost) DeviceInfo() device.Info { return h.info }

// runOnSim binds prog on a fresh H100 simulator and times one Run of s.
func runOnSim(t *testing.T, prog *workloads.Program, s *Scheduler) (time.Duration, []device.Race) {
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	var span time.Duration
	err = dev.Run(func(h device.Host) error {
		hh := infoHost{h, dev.Info()}
		inst, err := workloads.Bind(hh, prog)
		if err != nil {
			return err
		}
		if err := s.Prepare(hh, inst); err != nil {
			return err
		}
		for rep := 0; rep < 2; rep++ { // the second run checks the iteration numbers
			if err := h.Synchronize(); err != nil {
				return err
			}
			t0 := h.Now()
			if err := s.Run(hh, inst); err != nil {
				return err
			}
			span = h.Now() - t0
		}
		return s.Cleanup(hh)
	})
	require.NoError(t, err)
	return span, dev.Races()
}

func TestSchedulerOnSimulator(t *testing.T) {
	// GPT-3's MLP at T = 1024 with 128x128 tiles on 264 resident slots:
	// GEMM1 8 x 48 = 384 tiles (1.45 waves, K = 12288), GEMM2 8 x 96 = 768
	// (2.9 waves, K = 6144). Stream sync takes 2 + 3 rounds; with tile sync
	// the consumers of finished rows fill the producer's half-empty second
	// round: about 1.17x by wave counting.
	m, err := tiles.NewMLP(tiles.MLPParams{Model: "gpt3", Tokens: 1024, Tile: "auto", Steps: 1, CheckRows: 1, NoData: true}, 1)
	require.NoError(t, err)
	base, err := New(Options{Policy: "stream", WaitKernel: "auto", TileOrder: "auto", IndependentFirst: "auto"})
	require.NoError(t, err)
	assert.Equal(t, "stream-sync", base.Name())
	tBase, races := runOnSim(t, m.Program, base)
	assert.Empty(t, races, "stream order never overlaps dependent kernels")

	for _, pol := range []string{"auto", "row", "tile", "fine"} {
		t.Run(pol, func(t *testing.T) {
			s, err := New(Options{Policy: pol, WaitKernel: "auto", TileOrder: "auto", IndependentFirst: "auto"})
			require.NoError(t, err)
			span, _ := runOnSim(t, m.Program, s)
			require.Len(t, s.Choices(), 1)
			sp := float64(tBase) / float64(span)
			t.Logf("%s: %v vs stream-sync %v (%.3fx): %s", s.Name(), span, tBase, sp, s.Choices()[0])
			assert.Greater(t, sp, 1.10, "the consumer fills the producer's partial wave")
		})
	}
}

func TestAutoFallsBackToStreamOrder(t *testing.T) {
	m, err := tiles.NewMLP(tiles.MLPParams{Model: "gpt3", Tokens: 512, Tile: "auto", Steps: 1, CheckRows: 1, NoData: true}, 1)
	require.NoError(t, err)
	base, err := New(Options{Policy: "stream", WaitKernel: "auto", TileOrder: "auto", IndependentFirst: "auto"})
	require.NoError(t, err)
	tb, _ := runOnSim(t, m.Program, base)
	s, err := New(Defaults())
	require.NoError(t, err)
	ts, races := runOnSim(t, m.Program, s)
	require.Len(t, s.Choices(), 1)
	assert.Contains(t, s.Choices()[0], "stream (")
	assert.Equal(t, tb, ts, "the same commands on the same stream")
	assert.Empty(t, races)
}

func TestLLaMAAndConvOnSimulator(t *testing.T) {
	// LLaMA T = 1024: GEMM1 8 x 44 tiles (1.33 waves), GEMM2 8 x 64 (1.94).
	l, err := tiles.NewMLP(tiles.MLPParams{Model: "llama", Tokens: 1024, Tile: "auto", Steps: 1, CheckRows: 1, NoData: true}, 1)
	require.NoError(t, err)
	// 64 channels at 56 x 56, batch 11: 539 64x64 tiles each, 1.02 waves
	// of 528 slots: 2 + 2 rounds with stream sync, 3 with tile sync.
	c, err := tiles.NewConvPair(tiles.ConvPairParams{Channels: 64, Size: 56, Batch: 11, Tile: "auto", Steps: 1, CheckRows: 1, NoData: true}, 1)
	require.NoError(t, err)
	for _, tc := range []struct {
		prog   *workloads.Program
		policy string
		min    float64
	}{{l.Program, "strided", 1.05}, {l.Program, "row", 1.05}, {c.Program, "conv2d", 1.05}, {c.Program, "row", 1.05}} {
		t.Run(tc.prog.Name+"/"+tc.policy, func(t *testing.T) {
			base, err := New(Options{Policy: "stream", WaitKernel: "auto", TileOrder: "auto", IndependentFirst: "auto"})
			require.NoError(t, err)
			tb, _ := runOnSim(t, tc.prog, base)
			s, err := New(Options{Policy: tc.policy, WaitKernel: "on", TileOrder: "on", IndependentFirst: "on"})
			require.NoError(t, err)
			ts, _ := runOnSim(t, tc.prog, s)
			sp := float64(tb) / float64(ts)
			t.Logf("%s: %v vs %v (%.3fx)", s.Name(), ts, tb, sp)
			assert.Greater(t, sp, tc.min)
		})
	}
}

// TestDeadlockWithoutWaitKernel issues the consumer before the producer, as
// happens on hardware when the consumer's launch reaches the GPU first.
// Its blocks take every SM and spin; the producer can never place a block:
// the simulator must report the deadlock, naming the spinning kernel. With
// cuSync's wait kernel ahead of the consumer on its stream, the same issue
// order completes.
func TestDeadlockWithoutWaitKernel(t *testing.T) {
	t128 := tiles.Tile{BM: 128, BN: 128}
	// Consumer 1024 x 12288: 8 x 96 = 768 tiles > 264 resident slots.
	prod := gemm(t, t128, 1024, 1024, 1024, tiles.APlain)
	cons := gemm(t, t128, 1024, 12288, 1024, tiles.APlain)
	pair, err := NewPair(RowSync, prod, cons)
	require.NoError(t, err)
	run := func(withWait bool) error {
		dev, err := sim.NewNamed("h100")
		require.NoError(t, err)
		info := dev.Info()
		return dev.Run(func(h device.Host) error { return ConsumerFirst(h, &info, pair, withWait, 50*time.Microsecond) })
	}
	err = run(false)
	var dl *device.DeadlockError
	require.True(t, errors.As(err, &dl), "want a DeadlockError, got %v", err)
	assert.Contains(t, dl.Error(), "kernel consumer tiles_gemm_128x128 (stream", "the report names the spinning kernel")
	assert.Contains(t, dl.Error(), "264 blocks spin holding their SMs", "every resident slot spins")
	t.Log(dl.Error())

	require.NoError(t, run(true), "the wait kernel holds the consumer back until the producer has started")

	// A consumer that fits beside the producer cannot starve it: no wait
	// kernel needed (the rule's one-wave case).
	small := gemm(t, t128, 1024, 1024, 1024, tiles.APlain)
	pair2, err := NewPair(RowSync, prod, small)
	require.NoError(t, err)
	dev, err := sim.NewNamed("h100")
	require.NoError(t, err)
	info := dev.Info()
	require.NoError(t, dev.Run(func(h device.Host) error { return ConsumerFirst(h, &info, pair2, false, 50*time.Microsecond) }))
}
