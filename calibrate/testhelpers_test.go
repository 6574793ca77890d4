package calibrate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device/sim"
)

// loadConfig is sim.LoadConfig(name) for a test: a fresh copy the test may
// change before it builds a device or a fit on it.
func loadConfig(t *testing.T, name string) *sim.Config {
	t.Helper()
	cfg, err := sim.LoadConfig(name)
	require.NoError(t, err)
	return cfg
}

// lockOnly is the h100 config with its queue calls free
// (host.queue_call_ns and queue_call_per_thread_ns left out), for tests of
// the queue lock alone.
func lockOnly(t *testing.T) *sim.Config {
	cfg := loadConfig(t, "h100")
	cfg.Host.QueueCallNs, cfg.Host.QueueCallPerThreadNs = 0, 0
	return cfg
}

// newFitted is a fit starting from cfg, as Run starts one, for tests that
// call one fit step on a report.
func newFitted(cfg *sim.Config) *Fitted {
	return &Fitted{Config: cfg, Comments: map[string]string{}}
}

// mustSim is a simulated device on cfg.
func mustSim(t *testing.T, cfg *sim.Config) *sim.Device {
	t.Helper()
	d, err := sim.New(cfg)
	require.NoError(t, err)
	return d
}

// measured runs the named sections on a simulated device on cfg and
// returns the report and a reader of its values by name (a name it lacks
// fails the test).
func measured(t *testing.T, cfg *sim.Config, sections ...string) (*Report, func(string) float64) {
	t.Helper()
	rep, err := Measure(mustSim(t, cfg), sections, nil)
	require.NoError(t, err)
	return rep, func(name string) float64 {
		m, ok := rep.byName(name)
		require.True(t, ok, name)
		return m.Value
	}
}

// measuredWakeOnOff runs section on the named config as it is and with
// front_end.callback_wake_ns 0: the config and both runs' figures by name.
func measuredWakeOnOff(t *testing.T, config, section string) (*sim.Config, func(string) float64, func(string) float64) {
	t.Helper()
	with, without := loadConfig(t, config), loadConfig(t, config)
	without.FrontEnd.CallbackWakeNs = 0
	_, v := measured(t, with, section)
	_, v0 := measured(t, without, section)
	return with, v, v0
}
