package experiments

import (
	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/sched/tilesync"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/tiles"
)

func init() {
	RegisterWorkload("tiles-mlp", "cuSync: GPT-3 or LLaMA-65B MLP per GPU, two tensor-core GEMMs (params: model gpt3|llama, tokens, hidden, ff, tile, tile2 (GEMM2's tile, same BM), steps, check_rows, no_data)",
		func(params *yaml.Node, seed int64) (*workloads.Program, error) {
			p := tiles.MLPDefaults()
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			m, err := tiles.NewMLP(p, seed)
			if err != nil {
				return nil, err
			}
			return m.Program, nil
		})
	RegisterWorkload("tiles-convpair", "cuSync: two 3x3 implicit-GEMM convolutions of a ResNet-38 or VGG-19 stage (params: model resnet38|vgg19, layer, channels, size, batch, tile, steps, check_rows, no_data)",
		func(params *yaml.Node, seed int64) (*workloads.Program, error) {
			p := tiles.ConvPairDefaults()
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			c, err := tiles.NewConvPair(p, seed)
			if err != nil {
				return nil, err
			}
			return c.Program, nil
		})
	RegisterScheduler("stream-sync", "cuSync's baseline: the tile kernels in program order on one stream, no tile synchronization",
		func(params *yaml.Node) (sched.Scheduler, error) {
			var p struct{}
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			o := tilesync.Defaults()
			o.Policy = "stream"
			return tilesync.New(o)
		})
	RegisterScheduler("tilesync", "cuSync: producer and consumer on two prioritized streams with per-tile counters (params: policy auto|row|tile|strided|conv2d, wait_kernel, tile_order, independent_first: auto|on|off, min_gain, poll_sleep_ns, phases: true records timing events at each operation's end and reports their median times in the row's stats; blocks_per_sm n caps every tile kernel at n resident blocks per SM and producer_alone: true keeps every other block off a producer block's SM, both by padding dynamic shared memory; tail_rows_at r starts the consumer tiles that read the producer's last partial wave in consumer round r instead of last; probe post|wait|all issues a synchronizing policy's kernels in stream order with only the posts, only the polls (counters complete) or everything; auto needs a host implementing device.InfoHost)",
		func(params *yaml.Node) (sched.Scheduler, error) {
			o := tilesync.Defaults()
			if err := DecodeParams(params, &o); err != nil {
				return nil, err
			}
			return tilesync.New(o)
		})
}
