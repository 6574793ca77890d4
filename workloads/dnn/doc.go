// Package dnn builds the batch-1 DNN inference workloads of the ACS and
// AutoGraph papers on workloads/nn's real kernels, each checkable against
// its CPU reference (Program.Check).
//
// Static graphs (Static, one inference per step, the graph identical every
// step):
//   - inception-v3: Szegedy et al. 2016, the torchvision layout (stem, 3x
//     InceptionA, InceptionB, 4x InceptionC with 1x7/7x1 factorized
//     convolutions, InceptionD, 2x InceptionE), 299x299.
//   - resnext-50: Xie et al. 2017, 32x4d, stages 3-4-6-3 of bottlenecks with
//     32-group 3x3 convolutions and projection shortcuts, 224x224.
//   - nasnet-mobile (alias nasnet-a): Zoph et al. 2018, NASNet-A cells as in
//     TensorFlow's nasnet_utils (normal and reduction cells of separable
//     convolutions, pools and identities combined by adds; factorized
//     reductions), N=4, F=44, two stem reduction cells, 224x224.
//   - amoebanet: Real et al. 2019, AmoebaNet-A's cells in the same
//     framework, N=4, F=50 (the paper's mobile size).
//   - squeezenet: Iandola et al. 2016, v1.1 (fire modules: squeeze 1x1,
//     parallel expand 1x1 and 3x3, concatenated), 224x224.
//   - randwire: Xie et al. 2019, RandWire-WS small regime (C=78,
//     Watts-Strogatz K=4 P=0.75, 32 nodes per stage, three random stages;
//     node = weighted-sum aggregation, ReLU, separable 3x3 convolution;
//     graph seeded), 224x224.
//   - bert: Devlin et al. 2019, BERT-base encoder layers (hidden 768, 12
//     heads, FFN 3072, GELU, post-layer-norm), sequence length 128.
//
// Dynamic networks (Dynamic, one step per input, 32x32 inputs):
//   - instanas: InstaNAS (Cheng et al. 2018)-like: a MobileNetV2 backbone of
//     17 cells, each with 5 candidate inverted-residual modules; a small
//     controller CNN on the input outputs one probability per module, and
//     the modules above 0.5 (at least one per cell) run and are summed. The
//     controller also runs on the GPU; the host computes its output with the
//     CPU reference to build the step, so steps differ per input.
//   - routing: Dynamic Routing (Li et al. 2020)-like: 16 layers over 4
//     scales; every cell computes a soft gate (max(0, tanh)) for its
//     up/keep/down paths and only paths with a positive gate run (decided on
//     the host from the CPU reference, the gate values themselves weighting
//     the sums on the GPU).
//   - condconv: CondConv (Yang et al. 2019): an EfficientNet-B0-like
//     network whose convolutions each mix 4 expert kernels with per-input
//     routing weights (sigmoid of a linear map of the block input's global
//     average), computed and mixed on the GPU.
//
// Scale. Every model takes a scale divisor (1 = the papers' sizes):
// channel counts are divided by it and input resolutions too (down to each
// model's minimum; dynamic networks keep their 32x32 inputs), giving reduced
// networks that the CPU reference evaluates in milliseconds, for tests and
// quick simulator runs.
package dnn
