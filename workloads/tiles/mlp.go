package tiles

import (
	"fmt"
	"math"

	"github.com/gpusched/gpusched/workloads"
)

// MLPParams shape a transformer MLP block as one GPU of an 8-way
// model-parallel layer runs it (cuSync, section V): GPT-3 (H = 12288,
// GEMM1 [T x H] x [H x 6144] + GeLU, GEMM2 [T x 6144] x [6144 x H]) or
// LLaMA-65B (H = 8192, GEMM1 [T x H] x [H x 2d] computing gate and up side
// by side, GEMM2 [T x d] x [d x H] reading silu(gate) * up, d = 2816).
type MLPParams struct {
	Model  string `yaml:"model"`  // gpt3 or llama
	Tokens int    `yaml:"tokens"` // T = batch x sequence
	Hidden int    `yaml:"hidden"` // H; 0 = the model's
	FF     int    `yaml:"ff"`     // GPT-3: GEMM1's width; LLaMA: d; 0 = the model's
	Tile   string `yaml:"tile"`   // "auto" or BMxBN, for both GEMMs
	// Tile2 is GEMM2's tile when it differs from GEMM1's ("": the same);
	// a pair needs one BM, so only its BN may differ.
	Tile2 string `yaml:"tile2"`
	Steps int    `yaml:"steps"` // repetitions of the block (same inputs)
	// CheckRows is how many rows of T Check compares with the CPU
	// reference (every element is still checked for being written).
	CheckRows int `yaml:"check_rows"`
	// NoData leaves every buffer uninitialized: for the simulator, which
	// moves no data, so that sweeps over full-size models do not generate
	// hundreds of megabytes of inputs per run. Check then fails.
	NoData bool `yaml:"no_data"`
}

// MLPDefaults is GPT-3 at T = 512.
func MLPDefaults() MLPParams {
	return MLPParams{Model: "gpt3", Tokens: 512, Tile: "auto", Steps: 1, CheckRows: 4}
}

// Model sizes per GPU (8-way tensor parallelism).
const (
	GPT3Hidden  = 12288
	GPT3FF      = 6144 // 4H / 8
	LLaMAHidden = 8192
	LLaMAFF     = 2816 // d per GPU, as cuSync evaluates LLaMA-65B
)

// AutoTile picks the tile for T rows: BM no taller than T needs (small T
// wastes less of each tile), BN 128. Both GEMMs of a pair use the same BM,
// so a consumer row tile depends on exactly one producer row tile.
func AutoTile(rows int) Tile {
	switch {
	case rows <= 32:
		return Tile{32, 128}
	case rows <= 64:
		return Tile{64, 128}
	}
	return Tile{128, 128}
}

func (p *MLPParams) resolve() (Tile, error) {
	switch p.Model {
	case "gpt3":
		if p.Hidden == 0 {
			p.Hidden = GPT3Hidden
		}
		if p.FF == 0 {
			p.FF = GPT3FF
		}
	case "llama":
		if p.Hidden == 0 {
			p.Hidden = LLaMAHidden
		}
		if p.FF == 0 {
			p.FF = LLaMAFF
		}
	default:
		return Tile{}, fmt.Errorf("model %q: want gpt3 or llama", p.Model)
	}
	switch {
	case p.Tokens < 1:
		return Tile{}, fmt.Errorf("tokens must be at least 1, got %d", p.Tokens)
	case p.Hidden < 1 || p.FF < 1:
		return Tile{}, fmt.Errorf("hidden %d and ff %d must be positive", p.Hidden, p.FF)
	case p.Steps < 1:
		return Tile{}, fmt.Errorf("steps must be at least 1, got %d", p.Steps)
	case p.CheckRows < 1:
		return Tile{}, fmt.Errorf("check_rows must be at least 1, got %d", p.CheckRows)
	}
	f := workloads.F
	// GEMM1's width: ff, or for LLaMA 2 x ff, kept as two factors so that
	// the product checks the doubling for overflow too.
	n1 := []workloads.Factor{f("ff", p.FF)}
	if p.Model == "llama" {
		n1 = []workloads.Factor{f("2", 2), f("ff", p.FF)}
	}
	times := func(a workloads.Factor, b []workloads.Factor) workloads.Size {
		return workloads.Product(append([]workloads.Factor{a}, b...)...)
	}
	if err := tensorPlan(p.Steps,
		workloads.Product(f("tokens", p.Tokens), f("hidden", p.Hidden)), times(f("hidden", p.Hidden), n1),
		times(f("tokens", p.Tokens), n1), workloads.Product(f("ff", p.FF), f("hidden", p.Hidden)),
		workloads.Product(f("tokens", p.Tokens), f("hidden", p.Hidden))).Check(); err != nil {
		return Tile{}, err
	}
	if p.Tile == "" || p.Tile == "auto" {
		return AutoTile(p.Tokens), nil
	}
	return ParseTile(p.Tile)
}

// tensorPlan is a program of steps pairs of kernels over half-precision
// tensors of the given elements, every one initialized on the host.
func tensorPlan(steps int, elems ...workloads.Size) workloads.Plan {
	var bytes workloads.Size
	for i, e := range elems {
		b := e.Times(workloads.F("bytes per half", 2))
		if i == 0 {
			bytes = b
		} else {
			bytes = bytes.Plus(b)
		}
	}
	return workloads.Plan{Ops: workloads.Product(workloads.F("steps", steps), workloads.F("kernels per step", 2)), DeviceBytes: bytes, HostBytes: bytes}
}

// MLP is a built MLP block: its two stages and the program.
type MLP struct {
	Params         MLPParams
	GEMM1, GEMM2   Stage
	Program        *workloads.Program
	x, w1, w2      tensor
	bufX1, bufY    string
	gemm1N, gemm2K int
}

// mlpName names the program, with GEMM2's tile where it differs.
func mlpName(model string, tokens int, tile, tile2 Tile) string {
	if tile2 != tile {
		return fmt.Sprintf("%s-mlp(T=%d,tile=%s,tile2=%s)", model, tokens, tile, tile2)
	}
	return fmt.Sprintf("%s-mlp(T=%d,tile=%s)", model, tokens, tile)
}

// NewMLP builds the MLP program. Buffers: x [T x H], w1 [H x N1], x1
// [T x N1] (GPT-3: GeLU(x w1), N1 = ff; LLaMA: x [w_gate | w_up], N1 = 2d),
// w2 [ff x H], y [T x H]. Each step is GEMM1 then GEMM2; x1 and y are
// outputs, poisoned with NaN before the run.
func NewMLP(p MLPParams, seed int64) (*MLP, error) {
	tile, err := p.resolve()
	if err != nil {
		return nil, err
	}
	n1, amode, epi := p.FF, APlain, EpiGeLU
	if p.Model == "llama" {
		n1, amode, epi = 2*p.FF, ASwiGLU, EpiNone
	}
	g1, err := NewGEMM(tile, p.Tokens, n1, p.Hidden, APlain, epi)
	if err != nil {
		return nil, fmt.Errorf("GEMM1: %w", err)
	}
	tile2 := tile
	if p.Tile2 != "" {
		if tile2, err = ParseTile(p.Tile2); err != nil {
			return nil, fmt.Errorf("tile2: %w", err)
		}
		if tile2.BM != tile.BM {
			return nil, fmt.Errorf("tile2 %s: GEMM2's tile must be as tall as GEMM1's (%s), so that a consumer row tile reads one producer row tile", tile2, tile)
		}
	}
	g2, err := NewGEMM(tile2, p.Tokens, p.Hidden, p.FF, amode, EpiNone)
	if err != nil {
		return nil, fmt.Errorf("GEMM2: %w", err)
	}
	m := &MLP{Params: p, GEMM1: g1, GEMM2: g2, gemm1N: n1, gemm2K: p.FF, bufX1: "x1", bufY: "y"}
	m.x = newTensor(seed, 1, p.Tokens*p.Hidden, 1)
	m.w1 = newTensor(seed, 2, p.Hidden*n1, float32(2/math.Sqrt(float64(p.Hidden))))
	m.w2 = newTensor(seed, 3, p.FF*p.Hidden, float32(2/math.Sqrt(float64(p.FF))))
	half := func(n int) int64 { return 2 * int64(n) }
	prog := &workloads.Program{
		Name: mlpName(p.Model, p.Tokens, tile, tile2),
		Buffers: []workloads.BufferSpec{
			{Name: "x", Bytes: half(p.Tokens * p.Hidden), Init: m.x.fill},
			{Name: "w1", Bytes: half(p.Hidden * n1), Init: m.w1.fill},
			{Name: m.bufX1, Bytes: half(p.Tokens * n1), Init: poison, Output: true},
			{Name: "w2", Bytes: half(p.FF * p.Hidden), Init: m.w2.fill},
			{Name: m.bufY, Bytes: half(p.Tokens * p.Hidden), Init: poison, Output: true},
		},
	}
	for s := 0; s < p.Steps; s++ {
		op1, err := g1.Op(fmt.Sprintf("gemm1[%d]", s), 0, 1, 2)
		if err != nil {
			return nil, err
		}
		op2, err := g2.Op(fmt.Sprintf("gemm2[%d]", s), 2, 3, 4)
		if err != nil {
			return nil, err
		}
		prog.Steps = append(prog.Steps, workloads.Step{Ops: []workloads.Op{op1, op2}})
	}
	prog.Check = m.Check
	if p.NoData {
		for i := range prog.Buffers {
			prog.Buffers[i].Init = nil
		}
	}
	m.Program = prog
	return m, nil
}

// Check compares sampled rows with the CPU reference: x1 from the inputs,
// and y from the GPU's own x1 (so each kernel is checked on its own), and
// requires every element of both outputs to be written and finite.
func (m *MLP) Check(outputs map[string][]byte) error {
	p := m.Params
	x1, err := outHalves(outputs, m.bufX1, p.Tokens*m.gemm1N)
	if err != nil {
		return err
	}
	y, err := outHalves(outputs, m.bufY, p.Tokens*p.Hidden)
	if err != nil {
		return err
	}
	w1 := m.w1.values(0, m.w1.n)
	w2 := m.w2.values(0, m.w2.n)
	var got1, want1, got2, want2 []float32
	for _, r := range sampleRows(p.Tokens, p.CheckRows) {
		ref1, err := GEMMRow(m.GEMM1, m.x.values(r*p.Hidden, (r+1)*p.Hidden), w1)
		if err != nil {
			return err
		}
		row1 := x1[r*m.gemm1N : (r+1)*m.gemm1N]
		ref2, err := GEMMRow(m.GEMM2, row1, w2)
		if err != nil {
			return err
		}
		got1, want1 = append(got1, row1...), append(want1, ref1...)
		got2, want2 = append(got2, y[r*p.Hidden:(r+1)*p.Hidden]...), append(want2, ref2...)
	}
	if err := compare("x1 (GEMM1)", got1, want1); err != nil {
		return err
	}
	return compare("y (GEMM2)", got2, want2)
}
