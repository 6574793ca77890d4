package tiles

import (
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/kernels"
)

// Module is the kernel module of this package (workloads/kernels/tiles.cu).
const Module = "tiles"

// Threads is the block size of every tile kernel: 8 warps, laid out 2 x 4
// over the tile.
const Threads = 256

// BK is the reduction depth of one pipeline stage.
const BK = 32

// Kind says which computation a stage's kernel does.
type Kind uint8

const (
	GEMM Kind = iota // C = A * B
	Conv             // Y = conv3x3(X, W), as the implicit GEMM [n*h*w x 9*cin] x [9*cin x cout]
)

func (k Kind) String() string {
	if k == Conv {
		return "conv"
	}
	return "gemm"
}

// Epilogue is the activation a kernel applies to its fp32 accumulators.
type Epilogue int32

const (
	EpiNone Epilogue = 0
	EpiGeLU Epilogue = 1 // x * Phi(x), with the error function (exact GeLU)
	EpiReLU Epilogue = 2
)

// AMode is how a GEMM reads its A operand.
type AMode int32

const (
	APlain AMode = 0
	// ASwiGLU reads A[i][k] = silu(P[i][k]) * P[i][k+K] from a [M x 2K]
	// matrix P holding LLaMA's gate and up projections side by side: one
	// producer GEMM computes both halves, so SwiGLU is fused into the
	// consumer's operand load (a producer tile holds only gate or only up
	// columns, which is why LLaMA needs StridedSync).
	ASwiGLU AMode = 1
)

// Tile is a thread-block tile, BM rows by BN columns of the output. The
// kernels are compiled for the shapes in Tiles.
type Tile struct{ BM, BN int }

// Tiles lists the compiled tile shapes (128x64 for GEMMs only: a GEMM2
// tile half as wide as its producer's, for more, shorter consumer tiles).
var Tiles = []Tile{{128, 128}, {128, 64}, {64, 128}, {32, 128}, {64, 64}}

func (t Tile) String() string { return fmt.Sprintf("%dx%d", t.BM, t.BN) }

// ParseTile reads "BMxBN" and checks that kernels exist for it.
func ParseTile(s string) (Tile, error) {
	var t Tile
	if _, err := fmt.Sscanf(s, "%dx%d", &t.BM, &t.BN); err != nil || t.String() != s {
		return Tile{}, fmt.Errorf("tile %q: want BMxBN, one of %v", s, Tiles)
	}
	for _, c := range Tiles {
		if c == t {
			return t, nil
		}
	}
	return Tile{}, fmt.Errorf("tile %s is not compiled; the tile kernels come in %v", s, Tiles)
}

// Stage is one tile-kernel launch: its computation, sizes and tile. The
// GEMM view (M, N, K) is filled for convolutions too.
type Stage struct {
	Kind  Kind
	Tile  Tile
	M     int // output rows (convolution: pixels n*h*w)
	N     int // output columns (convolution: output channels)
	K     int // reduction depth (convolution: 9*cin)
	LDA   int // row stride of A in elements (GEMM)
	AMode AMode
	Epi   Epilogue
	// Convolution geometry.
	Batch, H, W, Cin int
}

// NewGEMM describes C[m x n] = epi(A[m x k] * B[k x n]). With ASwiGLU, A is
// read from a [m x 2k] gate|up matrix.
func NewGEMM(t Tile, m, n, k int, amode AMode, epi Epilogue) (Stage, error) {
	lda := k
	if amode == ASwiGLU {
		lda = 2 * k
	}
	s := Stage{Kind: GEMM, Tile: t, M: m, N: n, K: k, LDA: lda, AMode: amode, Epi: epi}
	return s, s.Validate()
}

// NewConv describes a 3x3, stride-1, padding-1 convolution of an NHWC
// batch x h x w x cin input to cout channels.
func NewConv(t Tile, batch, h, w, cin, cout int, epi Epilogue) (Stage, error) {
	s := Stage{Kind: Conv, Tile: t, M: batch * h * w, N: cout, K: 9 * cin, LDA: cin, Epi: epi,
		Batch: batch, H: h, W: w, Cin: cin}
	return s, s.Validate()
}

// Validate checks what the kernel assumes: 16-byte rows, whole reduction
// stages, a compiled tile.
func (s Stage) Validate() error {
	if _, err := ParseTile(s.Tile.String()); err != nil {
		return err
	}
	if s.M <= 0 || s.N <= 0 || s.K <= 0 {
		return fmt.Errorf("%s stage %dx%dx%d: sizes must be positive", s.Kind, s.M, s.N, s.K)
	}
	if s.N%8 != 0 {
		return fmt.Errorf("%s stage: N = %d must be a multiple of 8 (16-byte rows)", s.Kind, s.N)
	}
	switch s.Kind {
	case GEMM:
		if s.K%BK != 0 {
			return fmt.Errorf("gemm stage: K = %d must be a multiple of %d", s.K, BK)
		}
		if s.AMode != APlain && s.AMode != ASwiGLU {
			return fmt.Errorf("gemm stage: unknown A mode %d", s.AMode)
		}
	case Conv:
		if s.Tile == (Tile{128, 64}) {
			return fmt.Errorf("conv stage: tile %s is compiled for GEMMs only", s.Tile)
		}
		if s.Cin%BK != 0 {
			return fmt.Errorf("conv stage: cin = %d must be a multiple of %d", s.Cin, BK)
		}
		if s.Batch <= 0 || s.H <= 0 || s.W <= 0 {
			return fmt.Errorf("conv stage: batch %d, h %d, w %d must be positive", s.Batch, s.H, s.W)
		}
	default:
		return fmt.Errorf("unknown stage kind %d", s.Kind)
	}
	if s.Epi < EpiNone || s.Epi > EpiReLU {
		return fmt.Errorf("%s stage: unknown epilogue %d", s.Kind, s.Epi)
	}
	return nil
}

// TilesM and TilesN are the grid: row tiles and column tiles.
func (s Stage) TilesM() int { return (s.M + s.Tile.BM - 1) / s.Tile.BM }
func (s Stage) TilesN() int { return (s.N + s.Tile.BN - 1) / s.Tile.BN }

// NumTiles is the number of blocks.
func (s Stage) NumTiles() int { return s.TilesM() * s.TilesN() }

// Grid is the launch grid: x over column tiles (fastest, so the hardware's
// dispatch order is row-major over tiles), y over row tiles.
func (s Stage) Grid() device.Dim3 { return device.D2(s.TilesN(), s.TilesM()) }

// KernelName is the kernel's function name in module tiles.
func (s Stage) KernelName() string {
	return fmt.Sprintf("tiles_%s_%dx%d", s.Kind, s.Tile.BM, s.Tile.BN)
}

// Kernel is the compiled kernel's descriptor.
func (s Stage) Kernel() (*device.Kernel, error) { return kernels.Lookup(Module, s.KernelName()) }

// WaitKernel is cuSync's one-thread wait kernel.
func WaitKernel() (*device.Kernel, error) { return kernels.Lookup(Module, "tiles_wait") }

// FLOPs is the arithmetic of the whole launch as the tensor cores do it
// (partial edge tiles compute zero-filled rows, so every tile costs a full
// BM x BN x K product).
func (s Stage) FLOPs() float64 {
	return 2 * float64(s.Tile.BM*s.Tile.BN) * float64(s.K) * float64(s.NumTiles())
}

// UniqueBytes is what the launch must move through device memory at least:
// each operand read once, the output written once.
func (s Stage) UniqueBytes() float64 {
	a := float64(s.M) * float64(s.K)
	switch {
	case s.Kind == Conv:
		a = float64(s.M) * float64(s.Cin)
	case s.AMode == ASwiGLU:
		a = float64(s.M) * float64(2*s.K)
	}
	return 2 * (a + float64(s.K)*float64(s.N) + float64(s.M)*float64(s.N))
}

// TensorFlopsPerCycle is the estimated rate of the tile kernels per SM on
// sm_80/sm_90 tensor cores (fp16 operands, fp32 accumulation): wmma
// fragments loaded from shared memory with a two-stage cp.async pipeline
// reach about a quarter of Hopper's dense fp16 peak (4096 flops per cycle
// per SM with wgmma) and about half of Ampere's (2048). It is an estimate to
// be replaced by calibration against the GPU.
const TensorFlopsPerCycle = 1024

// SimFP32Flops is the FP32 rate per SM per cycle (128 lanes x 2 flops) that
// the simulator's SM model charges Work.Flops against (configs/devices:
// sm.flops_per_cycle on the H100, H200 and A100 configs). Tensor-core
// work is expressed in those units: a tile's tensor flops times
// SimFP32Flops / TensorFlopsPerCycle.
const SimFP32Flops = 256

// Work is one block's cost for the simulator: the tile's tensor-core
// arithmetic (in the simulator's FP32-equivalent flops, see
// TensorFlopsPerCycle), and its share of the launch's device-memory
// traffic. Operand re-reads across tiles hit the 50 MB L2 (a row of tiles
// shares its A slice, a column its B slice), so device memory sees each
// operand about once: charging every block its full A and B slices would
// make these compute-bound kernels look memory-bound.
func (s Stage) Work() device.Work {
	n := float64(s.NumTiles())
	return device.Work{
		Flops: s.FLOPs() / n * SimFP32Flops / TensorFlopsPerCycle,
		Bytes: s.UniqueBytes() / n,
	}
}

// Argument positions of the tile kernels (tiles.cu). Both kernels take
// A/X, B/W, C/Y, six int operation arguments, then the synchronization
// arguments; a stage built by Op passes null pointers and zeros there,
// which is plain stream-ordered execution. sched/tilesync fills them.
const (
	ArgA = iota
	ArgB
	ArgC
	ArgOp0 // first of six int arguments: GEMM M N K lda amode epi; conv n h w cin cout epi
)

const (
	ArgPost = ArgOp0 + 6 + iota
	ArgPostRowStride
	ArgPostColMod
	ArgPostColDiv
	ArgWait
	ArgWaitRowStride
	ArgWaitColMod
	ArgWaitColDiv
	ArgWaitTileK
	ArgWaitPer
	ArgIter
	ArgOrder
	ArgOrderCounter
	ArgStartFlag
	ArgFlags
	NumArgs
)

// FlagIndependentFirst makes a consumer load its independent operand (the
// weights) before it waits for the producer.
const FlagIndependentFirst = 1

// FlagSleepShift positions, in the flags word, a waiting block's longest
// sleep between polls in nanoseconds (bits 16 to 31; 0 polls without
// sleeping).
const FlagSleepShift = 16

// Op builds the program operation that runs s reading buffers a and b and
// writing buffer c, with no synchronization arguments set.
func (s Stage) Op(name string, a, b, c int) (workloads.Op, error) {
	if err := s.Validate(); err != nil {
		return workloads.Op{}, err
	}
	k, err := s.Kernel()
	if err != nil {
		return workloads.Op{}, err
	}
	args := make([]workloads.ArgSpec, NumArgs)
	args[ArgA] = workloads.BufArg(a, device.Read)
	args[ArgB] = workloads.BufArg(b, device.Read)
	args[ArgC] = workloads.BufArg(c, device.Write)
	var ops [6]int
	if s.Kind == GEMM {
		ops = [6]int{s.M, s.N, s.K, s.LDA, int(s.AMode), int(s.Epi)}
	} else {
		ops = [6]int{s.Batch, s.H, s.W, s.Cin, s.N, int(s.Epi)}
	}
	for i, v := range ops {
		args[ArgOp0+i] = workloads.Scalar32(int32(v))
	}
	for i := ArgPost; i < NumArgs; i++ {
		if isPointerArg(i) {
			args[i] = workloads.Scalar64(0) // null pointer
		} else {
			args[i] = workloads.Scalar32(0)
		}
	}
	return workloads.Op{Name: name, Kind: workloads.OpKernel, Kernel: k, Grid: s.Grid(),
		Block: device.D1(Threads), Args: args, Work: s.Work()}, nil
}

func isPointerArg(i int) bool {
	switch i {
	case ArgPost, ArgWait, ArgOrder, ArgOrderCounter, ArgStartFlag:
		return true
	}
	return false
}

// PlainArgs is a copy of a tile kernel's launch arguments with the
// synchronization arguments cleared as Op leaves them: the stream-ordered
// launch of the same operation, which is what kernel profiles measure.
func PlainArgs(args []device.Arg) []device.Arg {
	out := append([]device.Arg(nil), args...)
	for i := ArgPost; i < min(len(out), NumArgs); i++ {
		if isPointerArg(i) {
			out[i] = device.U64(0)
		} else {
			out[i] = device.I32(0)
		}
	}
	return out
}

// FromOp recovers the stage of a tile-kernel operation, or reports why op is
// not one. Schedulers use it to find producer/consumer pairs and their
// geometry without knowing which workload built them.
func FromOp(op *workloads.Op) (Stage, error) {
	if op.Kind != workloads.OpKernel || op.Kernel == nil || op.Kernel.Module != Module {
		return Stage{}, fmt.Errorf("op %s is not a %s kernel", op.Name, Module)
	}
	var kind, rest string
	name := strings.TrimPrefix(op.Kernel.Name, "tiles_")
	if i := strings.IndexByte(name, '_'); i > 0 {
		kind, rest = name[:i], name[i+1:]
	}
	t, err := ParseTile(rest)
	if err != nil || (kind != "gemm" && kind != "conv") {
		return Stage{}, fmt.Errorf("op %s: kernel %s is not a tile GEMM or convolution", op.Name, op.Kernel.Name)
	}
	if len(op.Args) != NumArgs {
		return Stage{}, fmt.Errorf("op %s: %d arguments, the tile kernels take %d", op.Name, len(op.Args), NumArgs)
	}
	var v [6]int
	for i := range v {
		a := op.Args[ArgOp0+i]
		if a.Buf >= 0 || a.Size != 4 {
			return Stage{}, fmt.Errorf("op %s: argument %d must be a 32-bit scalar", op.Name, ArgOp0+i)
		}
		v[i] = int(int32(uint32(a.Bits)))
	}
	if kind == "gemm" {
		s := Stage{Kind: GEMM, Tile: t, M: v[0], N: v[1], K: v[2], LDA: v[3], AMode: AMode(v[4]), Epi: Epilogue(v[5])}
		return s, s.Validate()
	}
	return NewConv(t, v[0], v[1], v[2], v[3], v[4], Epilogue(v[5]))
}
