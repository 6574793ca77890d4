package tilesync

import (
	"errors"
	"math"
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
	cfg, err := sim.LoadConfig("h100-datasheet")
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
		minGain     float64
		policy      Policy
		wait, order bool
	}
	for _, c := range []tc{
		{"gpt3 T=1: one wave", "gpt3", 1, DefaultMinGain, StreamSync, false, false},
		{"gpt3 T=512: producer in one wave, pair in two", "gpt3", 512, DefaultMinGain, StreamSync, true, false},
		{"gpt3 T=768: 24 producer tiles in the last wave", "gpt3", 768, DefaultMinGain, RowSync, true, true},
		{"gpt3 T=2048: last wave nearly full", "gpt3", 2048, DefaultMinGain, StreamSync, true, true},
		{"gpt3 T=2048, min_gain 0", "gpt3", 2048, 0, RowSync, true, true},
		{"llama T=16: one wave", "llama", 16, DefaultMinGain, StreamSync, false, false},
		{"llama T=1024: gain 7.6%", "llama", 1024, DefaultMinGain, StreamSync, true, true},
		{"llama T=1024, min_gain 0.05", "llama", 1024, 0.05, RowSync, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, q := mlp(c.model, c.tokens)
			ch, err := Choose(in, p, q, c.minGain)
			require.NoError(t, err)
			assert.Equal(t, c.policy, ch.Policy, ch.Why)
			assert.Equal(t, c.wait, ch.WaitKernel, ch.Why)
			assert.Equal(t, c.order, ch.TileOrder, ch.Why)
			assert.True(t, ch.IndependentFirst)
		})
	}
	wide := gemm(t, tiles.Tile{BM: 128, BN: 128}, 256, 65536, 64, tiles.APlain)
	assert.Equal(t, 2, mustOcc(t, in, wide), "114 registers x 256 threads: 2 blocks per H100 SM")
	_, err := Choose(in, wide, wide, -0.5)
	assert.ErrorContains(t, err, "min_gain -0.5")
}

// TestDecideFromWaveCounts checks the rule's arithmetic on hand-computed
// wave counts (see WaveCounts for the model).
func TestDecideFromWaveCounts(t *testing.T) {
	// GPT-3 T = 768 on 132 SMs, 2 blocks each (264 slots), tile work in
	// units of a consumer tile (K = 6144; the producer's K = 12288 is 2):
	// producer 288 tiles = 1 full wave (2 x 2 = 4) + 24 alone on 24 SMs
	// (2): 6; consumer 576 = 2 full waves (2 x 2 x 1 = 4) + 48 alone (1):
	// 5. Stream time 11. The last producer wave leaves 132 - 24 = 108 SMs
	// idle for 2: 216; 264 / 48 = 5 rows are done, 480 consumer tiles
	// ready (480 >= 216). Gain = 216 / 132 / 11 = 0.1488.
	gpt768 := WaveCounts{SMs: 132, ProdPerSM: 2, ConsPerSM: 2, ProdTiles: 288, ConsTiles: 576,
		ProdRowTiles: 48, ConsRowTiles: 96, ProdTileWork: 2, ConsTileWork: 1}
	// T = 1024: 384 producer tiles, 120 in the last wave on 120 SMs: 12
	// idle SMs x 2 = 24. Stream: 4 + 2 + (768 = 2 full waves: 4, + 240 > 132
	// on up to 2 per SM: 2) = 12. Gain = 24 / 132 / 12 = 0.01515.
	gpt1024 := gpt768
	gpt1024.ProdTiles, gpt1024.ConsTiles = 384, 768
	// 4 SMs x 1 slot, producer rows of 3 tiles (1.33 rows a wave), 2 rows:
	// 1.5 waves, the last 2 tiles leave 2 SMs idle for 1: 2. One row done
	// by then: 4 ready consumer tiles of work 1. Stream: 1 + 1 + 8 / 4 = 4.
	// Gain = 2 / 4 / 4 = 0.125, rows too wide to wait for: the finest.
	narrow := WaveCounts{SMs: 4, ProdPerSM: 1, ConsPerSM: 1, ProdTiles: 6, ConsTiles: 8,
		ProdRowTiles: 3, ConsRowTiles: 4, ProdTileWork: 1, ConsTileWork: 1}
	// The same with a 3x3 halo of one row: no consumer row is ready.
	haloed := narrow
	haloed.ConsHaloRows = 1
	// Both fit one wave; the producer alone fits one wave.
	oneWave := WaveCounts{SMs: 132, ProdPerSM: 3, ConsPerSM: 3, ProdTiles: 48, ConsTiles: 96,
		ProdRowTiles: 48, ConsRowTiles: 96, ProdTileWork: 2, ConsTileWork: 1}
	prodOne := gpt768
	prodOne.ProdTiles, prodOne.ConsTiles = 192, 384
	for _, c := range []struct {
		name      string
		w         WaveCounts
		fine      Policy
		minGain   float64
		gain      float64
		policy    Policy
		wait, ord bool
	}{
		{"gpt3 T=768", gpt768, TileSync, DefaultMinGain, 216.0 / 132 / 11, RowSync, true, true},
		{"gpt3 T=1024", gpt1024, TileSync, DefaultMinGain, 24.0 / 132 / 12, StreamSync, true, true},
		{"gpt3 T=1024, min_gain 0.01", gpt1024, TileSync, 0.01, 24.0 / 132 / 12, RowSync, true, true},
		{"wide rows", narrow, StridedSync, DefaultMinGain, 0.125, StridedSync, true, true},
		{"wide rows, min_gain 0.2", narrow, StridedSync, 0.2, 0.125, StreamSync, true, true},
		{"halo not done", haloed, Conv2DTileSync, 0, 0, Conv2DTileSync, true, true},
		{"both in one wave", oneWave, TileSync, 0, 0, StreamSync, false, false},
		{"producer in one wave", prodOne, TileSync, 0, 0, StreamSync, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, err := Decide(c.w, c.fine, c.minGain)
			require.NoError(t, err)
			assert.InDelta(t, c.gain, ch.Gain, 1e-12, ch.Why)
			assert.Equal(t, c.policy, ch.Policy, ch.Why)
			assert.Equal(t, c.wait, ch.WaitKernel, ch.Why)
			assert.Equal(t, c.ord, ch.TileOrder, ch.Why)
		})
	}
	wp, wc := gpt768.Waves()
	assert.InDelta(t, 288.0/264, wp, 1e-12)
	assert.InDelta(t, 576.0/264, wc, 1e-12)
	assert.InDelta(t, 11.0, gpt768.StreamTime(), 1e-12)
	assert.InDelta(t, 216.0, gpt768.IdleSMTime(), 1e-12)
	assert.Equal(t, 480, gpt768.ReadyConsumerTiles())
}

func TestDecideRejectsBadInput(t *testing.T) {
	ok := WaveCounts{SMs: 4, ProdPerSM: 1, ConsPerSM: 1, ProdTiles: 6, ConsTiles: 8, ProdRowTiles: 3, ConsRowTiles: 4, ProdTileWork: 1, ConsTileWork: 1}
	for _, c := range []struct {
		name    string
		edit    func(w *WaveCounts)
		minGain float64
		want    string
	}{
		{"no SMs", func(w *WaveCounts) { w.SMs = 0 }, 0.1, "SMs 0"},
		{"no producer tiles", func(w *WaveCounts) { w.ProdTiles = 0 }, 0.1, "tiles 0, 8"},
		{"negative halo", func(w *WaveCounts) { w.ConsHaloRows = -1 }, 0.1, "halo rows -1"},
		{"NaN work", func(w *WaveCounts) { w.ConsTileWork = math.NaN() }, 0.1, "tile work 1, NaN"},
		{"min_gain 1", func(*WaveCounts) {}, 1, "min_gain 1: want a fraction"},
		{"min_gain NaN", func(*WaveCounts) {}, math.NaN(), "min_gain NaN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := ok
			c.edit(&w)
			_, err := Decide(w, TileSync, c.minGain)
			assert.ErrorContains(t, err, c.want)
		})
	}
	for _, c := range []struct {
		opt  func(o *Options)
		want string
	}{
		{func(o *Options) { o.MinGain = -0.1 }, "min_gain -0.1"},
		{func(o *Options) { o.MinGain = 1.5 }, "min_gain 1.5"},
		{func(o *Options) { o.PollSleepNS = -1 }, "poll_sleep_ns -1: want 0 (spin) to 65535"},
		{func(o *Options) { o.PollSleepNS = 70000 }, "poll_sleep_ns 70000"},
	} {
		o := Defaults()
		c.opt(&o)
		_, err := New(o)
		assert.ErrorContains(t, err, c.want)
	}
	o := Defaults()
	o.PollSleepNS = 0
	_, err := New(o)
	assert.NoError(t, err, "0 polls without sleeping")
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
	dev, err := sim.NewNamed("h100-datasheet")
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
	prog := gpt3MLP(t, 1024)
	base, err := New(Options{Policy: "stream", WaitKernel: "auto", TileOrder: "auto", IndependentFirst: "auto"})
	require.NoError(t, err)
	assert.Equal(t, "stream-sync", base.Name())
	tBase, races := runOnSim(t, prog, base)
	assert.Empty(t, races, "stream order never overlaps dependent kernels")

	for _, pol := range []string{"auto", "row", "tile", "fine"} {
		t.Run(pol, func(t *testing.T) {
			s, err := New(Options{Policy: pol, WaitKernel: "auto", TileOrder: "auto", IndependentFirst: "auto"})
			require.NoError(t, err)
			span, _ := runOnSim(t, prog, s)
			require.Len(t, s.Choices(), 1)
			sp := float64(tBase) / float64(span)
			t.Logf("%s: %v vs stream-sync %v (%.3fx): %s", s.Name(), span, tBase, sp, s.Choices()[0])
			assert.Greater(t, sp, 1.10, "the consumer fills the producer's partial wave")
		})
	}
}

func TestAutoFallsBackToStreamOrder(t *testing.T) {
	prog := gpt3MLP(t, 512)
	base, err := New(Options{Policy: "stream", WaitKernel: "auto", TileOrder: "auto", IndependentFirst: "auto"})
	require.NoError(t, err)
	tb, _ := runOnSim(t, prog, base)
	s, err := New(Defaults())
	require.NoError(t, err)
	ts, races := runOnSim(t, prog, s)
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

// TestNarrowConsumerTiles: GEMM2 on 128x64 tiles (tile2) under GEMM1's
// 128x128 pairs row by row as before: RowSync runs race-free on the
// simulator and beats stream order, whose consumer now has 2.91 waves.
func TestNarrowConsumerTiles(t *testing.T) {
	m, err := tiles.NewMLP(tiles.MLPParams{Model: "gpt3", Tokens: 768, Tile: "128x128", Tile2: "128x64", Steps: 1, CheckRows: 1, NoData: true}, 1)
	require.NoError(t, err)
	base := Defaults()
	base.Policy = "stream"
	b, err := New(base)
	require.NoError(t, err)
	tb, races := runOnSim(t, m.Program, b)
	assert.Empty(t, races)
	for _, pol := range []string{"row", "fine"} {
		o := Defaults()
		o.Policy = pol
		s, err := New(o)
		require.NoError(t, err)
		ts, races := runOnSim(t, m.Program, s)
		assert.Empty(t, races, pol)
		require.Len(t, s.Choices(), 1)
		assert.Contains(t, s.Choices()[0], "the rule would pick row", "%s: %s", pol, s.Choices()[0])
		assert.Greater(t, float64(tb)/float64(ts), 1.2, "%s: %v against %v", pol, ts, tb)
	}
}
