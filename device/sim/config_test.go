package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/configs"
)

func TestEveryEmbeddedConfigDecodes(t *testing.T) {
	names := ConfigNames()
	require.Equal(t, []string{"a100", "h100", "h100-datasheet", "h200", "h200-datasheet", "measured-h200", "rtx3070", "v100"}, names)
	for _, n := range names {
		c, err := LoadConfig(n)
		require.NoError(t, err, n)
		assert.Equal(t, n, c.Name)
		d, err := New(c)
		require.NoError(t, err)
		assert.Equal(t, c.Info, d.Info())
		// Marshal round-trips.
		out, err := c.Marshal()
		require.NoError(t, err)
		back, err := ParseConfig(out, n+" (marshalled)")
		require.NoError(t, err)
		back.Profile = c.Profile // Marshal writes the profile's name; LoadConfig loads it
		assert.Equal(t, c, back)
	}
	h, err := LoadConfig("h100-datasheet")
	require.NoError(t, err)
	assert.Equal(t, 132, h.Info.SMs)
	assert.Equal(t, 8, h.Info.HardwareQueues)
	assert.Equal(t, 128, h.Info.MaxResidentGrids)
}

func TestConfigDecodingIsStrict(t *testing.T) {
	base, err := configs.FS.ReadFile("devices/h100-datasheet.yaml")
	require.NoError(t, err)
	src := string(base)
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"unknown field", strings.Replace(src, "  launch_ns: 3300", "  launch_ns: 3300\n  lunch_ns: 1", 1), "h100.yaml:44: unknown field host.lunch_ns"},
		{"missing field", strings.Replace(src, "  wakeup_ns: 2500", "", 1), "missing field host.wakeup_ns"},
		{"missing nested field", strings.Replace(src, "{x: 1024, y: 1024, z: 64}", "{x: 1024, y: 1024}", 1), "missing field info.max_block_dim.z"},
		{"inconsistent info", strings.Replace(src, "  sms: 132", "  sms: 0", 1), "sms must be positive"},
		{"negative cost", strings.Replace(src, "  record_ns: 1000", "  record_ns: -1", 1), "host.record_ns must not be negative"},
		{"lock fraction over 1", strings.Replace(src, "  driver_lock_fraction: 0.33", "  driver_lock_fraction: 1.5", 1), "host.driver_lock_fraction must be between 0 and 1"},
		{"graph lock fraction over 1", strings.Replace(src, "  driver_lock_fraction: 0.33", "  driver_lock_fraction: 0.33\n  graph_lock_fraction: 2", 1), "host.graph_lock_fraction must be between 0 and 1"},
		{"negative changed-node cost", strings.Replace(src, "  driver_lock_fraction: 0.33", "  driver_lock_fraction: 0.33\n  graph_launch_changed_node_ns: -1200", 1), "host.graph_launch_changed_node_ns must not be negative"},
		{"changed-node cost misspelt", strings.Replace(src, "  driver_lock_fraction: 0.33", "  driver_lock_fraction: 0.33\n  graph_launch_changed_nodes_ns: 1200", 1), "unknown field host.graph_launch_changed_nodes_ns"},
		{"negative lock hand-off", strings.Replace(src, "  driver_lock_fraction: 0.33", "  driver_lock_fraction: 0.33\n  graph_lock_handoff_ns: -5", 1), "host.graph_lock_handoff_ns must not be negative"},
		{"retime threshold over 0.5", strings.Replace(src, "  sm_mem_saturation_warps: 16", "  sm_mem_saturation_warps: 16\n  retime_threshold: 2", 1), "sm.retime_threshold must be between 0 and 0.5"},
		{"younger kernel weight over 1", strings.Replace(src, "  sm_mem_saturation_warps: 16", "  sm_mem_saturation_warps: 16\n  younger_kernel_weight: 1.5", 1), "sm.younger_kernel_weight must be between 0 and 1"},
		{"too many SMs", strings.Replace(src, "  sms: 132", "  sms: 1000000", 1), "the simulator handles at most 65536"},
		{"clock too slow", strings.Replace(src, "  clock_hz: 1980000000", "  clock_hz: 1000", 1), "below 1 MHz"},
		{"wrong type", strings.Replace(src, "  sms: 132", "  sms: many", 1), "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NotEqual(t, src, tc.edit, "the edit must change the file")
			_, err := ParseConfig([]byte(tc.edit), "h100.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "h100.yaml")
		})
	}
}

func TestLoadConfigFromPath(t *testing.T) {
	c, err := LoadConfig("rtx3070")
	require.NoError(t, err)
	c.Name = "mine"
	c.Info.SMs = 10
	out, err := c.Marshal()
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "mine.yaml")
	require.NoError(t, os.WriteFile(p, out, 0o644))
	back, err := LoadConfig(p)
	require.NoError(t, err)
	assert.Equal(t, 10, back.Info.SMs)
	_, err = LoadConfig("h1000")
	assert.ErrorContains(t, err, "have a100, h100, h100-datasheet, h200, h200-datasheet, measured-h200, rtx3070, v100")
}
