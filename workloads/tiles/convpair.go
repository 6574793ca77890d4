package tiles

import (
	"fmt"
	"math"

	"github.com/gpusched/gpusched/workloads"
)

// ConvPairParams shape two consecutive 3x3 convolutions (each followed by
// ReLU) of a CNN stage, as cuSync evaluates them on ResNet-38 and VGG-19:
// channels in = channels out = Channels at Size x Size pixels, Batch images.
// Layer picks a stage of Model's table when Channels and Size are 0.
type ConvPairParams struct {
	Model     string `yaml:"model"` // resnet38 or vgg19
	Layer     int    `yaml:"layer"` // index into the model's stages
	Channels  int    `yaml:"channels"`
	Size      int    `yaml:"size"`
	Batch     int    `yaml:"batch"`
	Tile      string `yaml:"tile"` // "auto" or BMxBN
	Steps     int    `yaml:"steps"`
	CheckRows int    `yaml:"check_rows"` // output pixels compared with the CPU reference
	NoData    bool   `yaml:"no_data"`    // leave buffers uninitialized (simulator only; Check then fails)
}

// ConvPairDefaults is ResNet-38's first stage (64 channels, 56 x 56) at batch 8.
func ConvPairDefaults() ConvPairParams {
	return ConvPairParams{Model: "resnet38", Batch: 8, Tile: "auto", Steps: 1, CheckRows: 16}
}

// ConvStage is one stage of a CNN: its 3x3 convolutions' channels and size.
type ConvStage struct{ Channels, Size int }

// ConvModels are the stages whose consecutive 3x3 convolutions cuSync
// synchronizes: ResNet-38's four stages (64 to 512 channels, 56 to 7
// pixels) and VGG-19's stages at 224 x 224 input from 56 pixels down.
var ConvModels = map[string][]ConvStage{
	"resnet38": {{64, 56}, {128, 28}, {256, 14}, {512, 7}},
	"vgg19":    {{256, 56}, {512, 28}, {512, 14}},
}

// AutoConvTile picks BM from the pixels per image batch and BN from the
// channels: a 7 x 7 stage at batch 1 has 49 output rows.
func AutoConvTile(pixels, channels int) Tile {
	switch {
	case channels <= 64:
		return Tile{64, 64}
	case pixels <= 64:
		return Tile{64, 128}
	}
	return Tile{128, 128}
}

func (p *ConvPairParams) resolve() (Tile, error) {
	if p.Channels == 0 && p.Size == 0 {
		st, ok := ConvModels[p.Model]
		if !ok {
			return Tile{}, fmt.Errorf("model %q: want resnet38 or vgg19, or give channels and size", p.Model)
		}
		if p.Layer < 0 || p.Layer >= len(st) {
			return Tile{}, fmt.Errorf("layer %d: %s has stages 0 to %d", p.Layer, p.Model, len(st)-1)
		}
		p.Channels, p.Size = st[p.Layer].Channels, st[p.Layer].Size
	}
	switch {
	case p.Channels < BK || p.Channels%BK != 0:
		return Tile{}, fmt.Errorf("channels must be a positive multiple of %d, got %d", BK, p.Channels)
	case p.Size < 1:
		return Tile{}, fmt.Errorf("size must be at least 1, got %d", p.Size)
	case p.Batch < 1:
		return Tile{}, fmt.Errorf("batch must be at least 1, got %d", p.Batch)
	case p.Steps < 1:
		return Tile{}, fmt.Errorf("steps must be at least 1, got %d", p.Steps)
	case p.CheckRows < 1:
		return Tile{}, fmt.Errorf("check_rows must be at least 1, got %d", p.CheckRows)
	}
	f := workloads.F
	act := workloads.Product(f("batch", p.Batch), f("size", p.Size), f("size", p.Size), f("channels", p.Channels))
	weights := workloads.Product(f("3x3", 9), f("channels", p.Channels), f("channels", p.Channels))
	if err := tensorPlan(p.Steps, act, weights, act, weights, act).Check(); err != nil {
		return Tile{}, err
	}
	if p.Tile == "" || p.Tile == "auto" {
		return AutoConvTile(p.Batch*p.Size*p.Size, p.Channels), nil
	}
	return ParseTile(p.Tile)
}

// ConvPair is a built pair of convolutions and its program.
type ConvPair struct {
	Params       ConvPairParams
	Conv1, Conv2 Stage
	Program      *workloads.Program
	x, w1, w2    tensor
}

// NewConvPair builds the program. Buffers: x (NHWC input), w1 and w2
// ([3][3][c][c] weights), y1 = relu(conv(x, w1)), y2 = relu(conv(y1, w2)).
func NewConvPair(p ConvPairParams, seed int64) (*ConvPair, error) {
	tile, err := p.resolve()
	if err != nil {
		return nil, err
	}
	c, s, b := p.Channels, p.Size, p.Batch
	c1, err := NewConv(tile, b, s, s, c, c, EpiReLU)
	if err != nil {
		return nil, err
	}
	c2 := c1
	cp := &ConvPair{Params: p, Conv1: c1, Conv2: c2}
	pix := b * s * s
	scale := float32(2 / math.Sqrt(float64(9*c)))
	cp.x = newTensor(seed, 11, pix*c, 1)
	cp.w1 = newTensor(seed, 12, 9*c*c, scale)
	cp.w2 = newTensor(seed, 13, 9*c*c, 2*scale) // ReLU halves the input's energy
	bytes := func(n int) int64 { return 2 * int64(n) }
	name := p.Model
	if name == "" {
		name = "conv"
	}
	prog := &workloads.Program{
		Name: fmt.Sprintf("%s-convpair(c=%d,%dx%d,b=%d,tile=%s)", name, c, s, s, b, tile),
		Buffers: []workloads.BufferSpec{
			{Name: "x", Bytes: bytes(pix * c), Init: cp.x.fill},
			{Name: "w1", Bytes: bytes(9 * c * c), Init: cp.w1.fill},
			{Name: "y1", Bytes: bytes(pix * c), Init: poison, Output: true},
			{Name: "w2", Bytes: bytes(9 * c * c), Init: cp.w2.fill},
			{Name: "y2", Bytes: bytes(pix * c), Init: poison, Output: true},
		},
	}
	for st := 0; st < p.Steps; st++ {
		op1, err := c1.Op(fmt.Sprintf("conv1[%d]", st), 0, 1, 2)
		if err != nil {
			return nil, err
		}
		op2, err := c2.Op(fmt.Sprintf("conv2[%d]", st), 2, 3, 4)
		if err != nil {
			return nil, err
		}
		prog.Steps = append(prog.Steps, workloads.Step{Ops: []workloads.Op{op1, op2}})
	}
	prog.Check = cp.Check
	if p.NoData {
		for i := range prog.Buffers {
			prog.Buffers[i].Init = nil
		}
	}
	cp.Program = prog
	return cp, nil
}

// Check compares sampled output pixels of both convolutions with the CPU
// reference (the second from the GPU's own y1) and requires every element
// to be written and finite.
func (cp *ConvPair) Check(outputs map[string][]byte) error {
	s := cp.Conv1
	y1, err := outHalves(outputs, "y1", s.M*s.N)
	if err != nil {
		return err
	}
	y2, err := outHalves(outputs, "y2", s.M*s.N)
	if err != nil {
		return err
	}
	pixels := sampleRows(s.M, cp.Params.CheckRows)
	ref1, err := ConvPixels(cp.Conv1, cp.x.values(0, cp.x.n), cp.w1.values(0, cp.w1.n), pixels)
	if err != nil {
		return err
	}
	ref2, err := ConvPixels(cp.Conv2, y1, cp.w2.values(0, cp.w2.n), pixels)
	if err != nil {
		return err
	}
	var got1, got2 []float32
	for _, px := range pixels {
		got1 = append(got1, y1[px*s.N:(px+1)*s.N]...)
		got2 = append(got2, y2[px*s.N:(px+1)*s.N]...)
	}
	if err := compare("y1 (conv1)", got1, ref1); err != nil {
		return err
	}
	return compare("y2 (conv2)", got2, ref2)
}
