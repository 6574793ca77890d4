package experiments

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// TestEveryConfigDecodesStrictly decodes every YAML file under configs/
// with the decoder its directory calls for: experiments with
// LoadExperiment (which also builds every workload and scheduler, and
// loads every device), devices with sim.LoadConfig. A file in a directory
// with no decoder fails the test, so nothing under configs/ goes unchecked.
func TestEveryConfigDecodesStrictly(t *testing.T) {
	root := filepath.Join("..", "configs")
	seen := map[string]int{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		kind := strings.Split(filepath.ToSlash(rel), "/")[0]
		seen[kind]++
		t.Run(rel, func(t *testing.T) {
			t.Parallel() // loading builds every workload; some generators take seconds
			switch kind {
			case "experiments":
				e, err := LoadExperiment(p)
				require.NoError(t, err)
				assert.NotEmpty(t, e.Name)
			case "devices":
				cfg, err := sim.LoadConfig(p)
				require.NoError(t, err)
				assert.Equal(t, strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)), cfg.Name, "a device config's name is its file name, so it loads by name")
			case "profiles":
				prof, err := sim.LoadProfile(p, "")
				require.NoError(t, err)
				assert.NotEmpty(t, prof.Kernels)
			default:
				t.Fatalf("no decoder for %s: configs/%s/ is not a known kind of config", rel, kind)
			}
		})
		return nil
	})
	require.NoError(t, err)
	assert.Positive(t, seen["experiments"], "configs/experiments has files")
	assert.Positive(t, seen["devices"], "configs/devices has files")
}

// TestQuickstartIsAsDocumented keeps the quickstart what the README says:
// serial against round-robin over 2, 4 and 8 streams on the simulated
// H100, three repetitions.
func TestQuickstartIsAsDocumented(t *testing.T) {
	e, err := LoadExperiment(filepath.Join("..", "configs", "experiments", "quickstart.yaml"))
	require.NoError(t, err)
	assert.Equal(t, []string{"serial", "round-robin(k=2)", "round-robin(k=4)", "round-robin(k=8)"}, e.schedulerNames())
	assert.Equal(t, "serial", e.Baseline)
	assert.Equal(t, []string{"h100"}, e.Devices)
	assert.Equal(t, 3, e.Repetitions)
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(readme), "# gpusched\n\n```sh\ngo run ./cmd/gpusched run configs/experiments/quickstart.yaml\nmake test\n```"),
		"the README opens with the two commands")
}
