package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// host.host_func_after_graph_ns: cuLaunchHostFunc costs it instead of
// host_func_ns when its stream's last command is a graph launch still
// pending; behind a kernel launch, behind a graph launch that completed,
// or on an idle stream it costs host_func_ns. Left out, always
// host_func_ns.
func TestHostFuncAfterGraph(t *testing.T) {
	const after = 5000
	for _, on := range []bool{true, false} {
		cfg := streamHostConfig(t, func(c *Config) {
			if on {
				c.Host.HostFuncAfterGraphNs = after
			}
		})
		d, err := New(cfg)
		require.NoError(t, err)
		took, timed := callTimer(t)
		noop := func() {}
		require.NoError(t, d.Run(func(h device.Host) error {
			s, _ := h.NewStream(device.StreamOptions{})
			l := spinLaunch(1, 32, 50*time.Microsecond)
			require.NoError(t, h.BeginCapture(s))
			require.NoError(t, h.Launch(s, l))
			g, err := h.EndCapture(s)
			require.NoError(t, err)
			x, err := h.Instantiate(g)
			require.NoError(t, err)
			timed(h, "idle stream", func() error { return h.HostFunc(s, noop) })
			require.NoError(t, h.Synchronize())
			require.NoError(t, h.GraphLaunch(x, s))
			timed(h, "behind a pending graph", func() error { return h.HostFunc(s, noop) })
			timed(h, "behind a host function", func() error { return h.HostFunc(s, noop) })
			require.NoError(t, h.Synchronize())
			require.NoError(t, h.Launch(s, l))
			timed(h, "behind a pending kernel", func() error { return h.HostFunc(s, noop) })
			require.NoError(t, h.Synchronize())
			require.NoError(t, h.GraphLaunch(x, s))
			require.NoError(t, h.StreamSynchronize(s))
			timed(h, "behind a completed graph", func() error { return h.HostFunc(s, noop) })
			return h.Synchronize()
		}))
		base := time.Duration(cfg.Host.HostFuncNs)
		behind := base
		if on {
			behind = after
		}
		assert.Equal(t, base, took["idle stream"])
		assert.Equal(t, behind, took["behind a pending graph"], "on=%v", on)
		assert.Equal(t, base, took["behind a host function"])
		assert.Equal(t, base, took["behind a pending kernel"])
		assert.Equal(t, base, took["behind a completed graph"])
	}
}
