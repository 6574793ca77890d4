//go:build cuda

package calibrate

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/cuda"
	"github.com/gpusched/gpusched/device/cuda/cudatest"
	"github.com/gpusched/gpusched/device/sim"
)

var gpuOut = flag.String("calibrate.out", "", "calibrate GPU 0 and write its config here (and the report beside it, .md)")

// TestCalibrateGPU calibrates a real GPU. It runs only with
// -calibrate.out=FILE (the command's wiring, `gpusched calibrate`, calls the
// same Run).
func TestCalibrateGPU(t *testing.T) {
	if *gpuOut == "" {
		t.Skip("measurement; run with -calibrate.out=FILE on a GPU")
	}
	dev := cudatest.Open(t)
	list, err := cuda.Devices()
	require.NoError(t, err)
	baseName := "h100"
	if strings.Contains(dev.Info().Name, "H200") {
		baseName = "h200"
	}
	base, err := sim.LoadConfig(baseName)
	require.NoError(t, err)
	cfg, rep, err := Run(dev, base, os.Stdout)
	require.NoError(t, err)
	cfg.Name = "measured-" + baseName
	data, err := cfg.Marshal()
	require.NoError(t, err)
	header := fmt.Sprintf("# Measured by package calibrate (go test -tags cuda ./calibrate -run TestCalibrateGPU)\n"+
		"# on %s (compute capability %s, CUDA driver %s), %s.\n"+
		"# Fields not measured are kept from configs/devices/%s.yaml; see docs/results/cuda-calibration.md.\n",
		list[0].Name, list[0].ComputeCapability, list[0].DriverVersion, time.Now().UTC().Format("2006-01-02 15:04 MST"), baseName)
	require.NoError(t, os.WriteFile(*gpuOut, append([]byte(header), data...), 0o644))
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	require.NoError(t, os.WriteFile(strings.TrimSuffix(*gpuOut, ".yaml")+".md", md.Bytes(), 0o644))
	// What was written loads back as a simulator config.
	_, err = sim.ParseConfig(append([]byte(header), data...), *gpuOut)
	require.NoError(t, err)
	fmt.Print(md.String())
}
