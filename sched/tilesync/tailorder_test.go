package tilesync

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/tiles"
)

// pairOf is the tile pair of prog's first two operations under policy.
func pairOf(t *testing.T, prog *workloads.Program, policy Policy) *Pair {
	t.Helper()
	prod, err := tiles.FromOp(&prog.Steps[0].Ops[0])
	require.NoError(t, err)
	cons, err := tiles.FromOp(&prog.Steps[0].Ops[1])
	require.NoError(t, err)
	p, err := NewPair(policy, prod, cons)
	require.NoError(t, err)
	return p
}

func TestTailRowsOrderGPT3(t *testing.T) {
	identity := func(n int) []int32 {
		o := make([]int32, n)
		for i := range o {
			o[i] = int32(i)
		}
		return o
	}
	// 264 slots for either kernel (132 SMs x 2). T = 768: GEMM1 6 x 48
	// tiles, its last 24 (row 5, columns 24-47) the tail; GEMM2 6 x 96.
	// T = 1024: 8 x 48, tail 384 - 264 = 120 tiles from row 5 column 24
	// to row 7; GEMM2 8 x 96.
	for _, tc := range []struct {
		name           string
		tokens, round  int
		lateRows       []int
		at             int
		rowOrderResult bool // the order is the row order itself
	}{
		{"T=768 round 1", 768, 1, []int{5}, 0, false},
		{"T=768 round 2", 768, 2, []int{5}, 240, false},
		{"T=768 round 3", 768, 3, []int{5}, 480, true}, // rows 0-4 fill two rounds of 240
		{"T=768 round 9", 768, 9, []int{5}, 480, true},
		{"T=1024 round 1", 1024, 1, []int{5, 6, 7}, 0, false},
		{"T=1024 round 2", 1024, 2, []int{5, 6, 7}, 144, false}, // 264 - 120 slots beside the tail
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pairOf(t, gpt3MLP(t, tc.tokens), TileSync)
			order, late, at := tailRowsOrder(p, 264, 264, tc.round)
			n := p.Cons.NumTiles()
			require.Len(t, order, n)
			assert.ElementsMatch(t, identity(n), order, "a permutation of the consumer's tiles")
			assert.Equal(t, 96*len(tc.lateRows), late)
			assert.Equal(t, tc.at, at)
			for i := at; i < at+late; i++ {
				assert.Contains(t, tc.lateRows, int(order[i])/96, "position %d holds a tail row's tile", i)
			}
			assert.True(t, slices.IsSorted(order[:at]) && slices.IsSorted(order[at+late:]), "the others keep the row order")
			assert.Equal(t, tc.rowOrderResult, slices.Equal(identity(n), order))
		})
	}

	// No tail: the producer fits a wave (T = 512: 4 x 48 = 192 tiles) or
	// fills its last one exactly (T = 768 on 144 or 288 slots).
	for _, c := range []struct{ tokens, slots int }{{512, 264}, {768, 144}, {768, 288}} {
		order, late, _ := tailRowsOrder(pairOf(t, gpt3MLP(t, c.tokens), TileSync), c.slots, 264, 1)
		assert.Nil(t, order, "T=%d on %d slots", c.tokens, c.slots)
		assert.Zero(t, late)
	}
}

// TestTailRowsOrderConvHalo: a convolution's consumer row tile reads the
// producer row tiles within one image row of its pixels (the halo), so
// the tiles moved are exactly those whose halo reaches a tail row.
func TestTailRowsOrderConvHalo(t *testing.T) {
	c, err := tiles.NewConvPair(tiles.ConvPairParams{Model: "vgg19", Layer: 1, Batch: 11, Tile: "auto", Steps: 1, CheckRows: 1, NoData: true}, 1)
	require.NoError(t, err)
	p := pairOf(t, c.Program, Conv2DTileSync)
	slots := 264
	rows, tail := tailRows(p.Prod, slots)
	require.Positive(t, tail)
	order, late, at := tailRowsOrder(p, slots, slots, 1)
	require.Zero(t, at)
	tn := p.Cons.TilesN()
	reaches := func(tile int32) bool {
		lo, hi := p.WaitRows(int(tile) / tn)
		for r := lo; r <= hi; r++ {
			if rows[r] {
				return true
			}
		}
		return false
	}
	for i, tile := range order {
		assert.Equal(t, i < late, reaches(tile), "position %d, tile %d", i, tile)
	}
	// The halo moves more rows than the tail itself writes.
	assert.Greater(t, late, len(rows)*tn)
}

// TestTailRowsOnSimulator: with the tail rows first, the pair is race-free
// and completes (their blocks spin beside the producer's tail without
// holding a slot it needs: its blocks, at higher priority, were all placed
// first), and the order reaches the simulator's model: it changes the
// schedule.
func TestTailRowsOnSimulator(t *testing.T) {
	prog := gpt3MLP(t, 768)
	spans := map[int]float64{}
	for _, round := range []int{0, 1, 3} {
		o := Defaults()
		o.Policy, o.TailRowsAt = "fine", round
		s, err := New(o)
		require.NoError(t, err)
		span, races := runOnSim(t, prog, s)
		assert.Empty(t, races)
		spans[round] = float64(span.Microseconds())
		if round > 0 {
			assert.Contains(t, s.Name(), ",tail_rows_at=")
			require.Len(t, s.Choices(), 1)
			assert.Contains(t, s.Choices()[0], "tail rows: 96 consumer tiles at position")
		}
	}
	assert.Equal(t, spans[0], spans[3], "round 3 is the row order at T = 768")
	assert.NotEqual(t, spans[0], spans[1], "the order reaches the simulator")
}

func TestTailRowsOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		o    func(*Options)
		want string
	}{
		{func(o *Options) { o.TailRowsAt = -1 }, "tail_rows_at -1"},
		{func(o *Options) { o.Policy, o.TailRowsAt, o.TileOrder = "fine", 1, "off" }, "needs the custom tile order"},
		{func(o *Options) { o.Policy, o.TailRowsAt = "stream", 1 }, "tail_rows_at: policy stream"},
	} {
		o := Defaults()
		tc.o(&o)
		_, err := New(o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}
