package sim

import "github.com/gpusched/gpusched/device"

// Tile synchronization's own costs (cuSync's counters, device.Launch.Sync).
//
// A synchronized launch is the plain kernel with synchronization arguments
// added; kernel profiles measure the plain launch. When the launch's Sync
// says what the plain arguments are (device.PlainArger), the launch is
// timed from the plain launch's profile point, and the code that posts and
// polls is charged on top, per block, from the config's tile_sync section:
// a block whose Sync posts counters when it ends takes post_fraction of its
// time longer, a block that waits on counters poll_fraction longer
// (whether its waits are met when it polls or not: on the GPU the
// synchronized consumer's code path costs in proportion to its reduction
// loop, not per poll), and a block that spun starts its work release_ns
// after the post that met its last wait (how late a polling block sees the
// post). calibrate fits them from the GPU
// (configs/experiments/tilecost-gpu.yaml; docs/SIMULATOR.md, "Tile
// synchronization").

// TileSyncCosts is the config's optional tile_sync section (all 0: counters
// cost nothing, as before it existed).
type TileSyncCosts struct {
	PostFraction float64 `yaml:"post_fraction"` // of the block's time, per block that posts counters at its end
	PollFraction float64 `yaml:"poll_fraction"` // of the block's time, per block that waits on counters
	ReleaseNs    float64 `yaml:"release_ns"`    // from the last post a spinning block waits for to its start
}

// syncCostState is the tile_sync costs and the buffers their per-block
// checks use.
type syncCostState struct {
	post, poll float64
	release    Time
	waits      []device.CounterWait
	posts      []device.Counter
}

func newSyncCosts(c TileSyncCosts) syncCostState {
	return syncCostState{post: c.PostFraction, poll: c.PollFraction, release: nsTime(c.ReleaseNs)}
}

// syncExtra is what synchronization adds to block b of k, which takes dur
// without it: poll_fraction of dur if it waits on counters, post_fraction
// if it posts any when it ends.
func (d *Device) syncExtra(k *command, b int32, dur Time) Time {
	s := &d.sc
	f := 0.0
	if s.poll > 0 {
		if s.waits = k.l.Sync.Waits(int(b), s.waits[:0]); len(s.waits) > 0 {
			f += s.poll
		}
	}
	if s.post > 0 {
		if s.posts = k.l.Sync.Posts(int(b), s.posts[:0]); len(s.posts) > 0 {
			f += s.post
		}
	}
	if f == 0 {
		return 0
	}
	return psTime(f * float64(dur))
}

// profiledLaunch is the launch a profile point times k by: its plain
// launch when its Sync says what that is, else itself.
func profiledLaunch(k *command) *device.Launch {
	pa, ok := k.l.Sync.(device.PlainArger)
	if !ok {
		return &k.l
	}
	l := k.l
	l.Args = pa.PlainArgs(k.l.Args)
	return &l
}
