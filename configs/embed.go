// Package configs holds gpusched's configuration files, embedded in the
// binary so that a device or an experiment can be named ("h100") rather than
// located on disk.
//
//   - devices/*.yaml: simulator device configs (device/sim.Config), one per
//     GPU, with the source of every figure as a comment and estimates marked.
//   - experiments/*.yaml: experiment files (the experiments package reads
//     them), so that `gpusched run quickstart` needs no checkout.
//   - profiles/*.yaml: kernel profiles (device/sim.Profile), measured block
//     times of kernels on one GPU, which a device config names.
//
// The package imports nothing; device/sim and experiments decode the files
// (strictly).
package configs

import "embed"

// FS holds devices/*.yaml, experiments/*.yaml and profiles/ (kernel profiles).
//
//go:embed devices/*.yaml experiments/*.yaml profiles
var FS embed.FS
