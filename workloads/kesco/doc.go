// Package kesco builds the multi-task benchmarks of KeSCo (Lin et al.,
// "KeSCo: Compile-time kernel scheduling for multi-task programs", ICCD
// 2023) and HuntKTm (TACO 2025), which come from GrCUDA's suite
// (Parravicini et al., IPDPS 2021): eight small kernel DAGs whose kernels
// are launched with deliberately few blocks, so that a single stream leaves
// most of the GPU idle and a whole-graph stream assignment can fill it.
//
//	VEC   two squares, then a reduction of their difference       width 2
//	BS    ten independent Black-Scholes pricings                    width 10
//	ML    ridge regression chain and naive Bayes chain, argmax      width 2
//	HITS  hub and authority SpMV chains with normalization          width 2
//	IMG   three blurs, Sobel, min/max stretch, unsharpen, combine   width 3
//	DL    two conv-pool-conv branches, concatenation, dense layer   width 2
//	M1    8 bias+GeLU, 4 bias+residual, 4 bias+GeLU, reduction      width 8
//	M2    6 bias+SiLU, 6 bias+gated ReLU, 2 bias+residual           width 6
//
// Every kernel is real CUDA (workloads/kernels/kesco.cu, module "kesco"),
// operating on seeded inputs; each program's Check recomputes its outputs
// on the CPU (ref.go) and compares within tolerances suited to float32.
// Operations carry their flops and device-memory bytes per block for the
// simulator. Params.Scale sizes the data: 1 is meant to run for tens of
// milliseconds serially on a data-centre GPU; tests use small scales.
//
// Mix draws KeSCo's multi-task programs: 16 or 32 tasks from the large set
// (M1, M2, BS, IMG) and the small set (VEC, ML, DL) at a ratio such as 3:1,
// one task per step with its own buffers, so the tasks are independent and
// the multi-process mode can give each to its own host thread.
package kesco
