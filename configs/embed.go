// Package configs holds gpusched's configuration files, embedded in the
// binary so that a device or an experiment can be named ("h100") rather than
// located on disk.
//
//   - devices/*.yaml: simulator device configs (device/sim.Config), one per
//     GPU, with the source of every figure as a comment and estimates marked.
//
// The package imports nothing; device/sim decodes the files (strictly).
package configs

import "embed"

// FS holds devices/*.yaml.
//
//go:embed devices/*.yaml
var FS embed.FS
