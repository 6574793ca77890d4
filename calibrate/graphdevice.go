package calibrate

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpusched/gpusched/device"
)

// Sizes of graphDeviceCosts' copy nodes: small, and a chunk of SET-batch
// (16 jobs of 64 KiB, one copy each way).
const gdSmall, gdChunk = 4 << 10, 1 << 20

// gdRepeats are the launches per Elapsed: one alone, and back to back on
// one stream as SET-batch's dispatcher issues them.
var gdRepeats = []int{1, 16}

// gdShape is one graph graphDeviceCosts launches: a head node, branches
// parallel chains of perBranch nodes forked from it and joined into a tail
// node. Heads and tails are copies ("c", pinned host-to-device and
// device-to-host of copy bytes) or empty kernels ("k"), or absent (""); a
// chain's nodes are empty kernels, 4 KiB copies alternating direction
// (copyChain), or kernels and such copies alternating (mixed).
type gdShape struct {
	name                string
	head, tail          string
	branches, perBranch int
	copyChain, mixed    bool
	copyBytes           int64
	// update: both copy nodes are updated (their host offset moved by
	// copyBytes and back) before every launch, as SET-batch updates a
	// chunk's copy nodes.
	update bool
	// hostFunc: a no-op host function follows every launch on the
	// stream, as SET-batch's completion callbacks do.
	hostFunc bool
}

// gdShapes: chains of copies and of kernels and copies at two lengths
// (slopes per node), fork/join of 1-16 one-kernel branches between copies
// and between kernels (slope per branch), and SET-batch's chunk graph
// (1 MiB copies around 16 jobs of 4 kernels as 16, 4 and 1 branches; a
// chain of 16 between them with and without a host function after each
// launch), and 1 MiB copies alone in a graph.
var gdShapes = []gdShape{
	{name: "copy chain 2", branches: 1, perBranch: 2, copyChain: true},
	{name: "copy chain 16", branches: 1, perBranch: 16, copyChain: true},
	{name: "kernel chain 2", branches: 1, perBranch: 2},
	{name: "kernel chain 16", branches: 1, perBranch: 16},
	{name: "kernel-copy chain 2", branches: 1, perBranch: 2, mixed: true},
	{name: "kernel-copy chain 16", branches: 1, perBranch: 16, mixed: true},
	{name: "copy, 1 branch, copy", head: "c", tail: "c", branches: 1, perBranch: 1, copyBytes: gdSmall},
	{name: "copy, 2 branches, copy", head: "c", tail: "c", branches: 2, perBranch: 1, copyBytes: gdSmall},
	{name: "copy, 4 branches, copy", head: "c", tail: "c", branches: 4, perBranch: 1, copyBytes: gdSmall},
	{name: "copy, 8 branches, copy", head: "c", tail: "c", branches: 8, perBranch: 1, copyBytes: gdSmall},
	{name: "copy, 16 branches, copy", head: "c", tail: "c", branches: 16, perBranch: 1, copyBytes: gdSmall},
	{name: "kernel, 1 branch, kernel", head: "k", tail: "k", branches: 1, perBranch: 1},
	{name: "kernel, 2 branches, kernel", head: "k", tail: "k", branches: 2, perBranch: 1},
	{name: "kernel, 4 branches, kernel", head: "k", tail: "k", branches: 4, perBranch: 1},
	{name: "kernel, 8 branches, kernel", head: "k", tail: "k", branches: 8, perBranch: 1},
	{name: "kernel, 16 branches, kernel", head: "k", tail: "k", branches: 16, perBranch: 1},
	{name: "1 MiB copy, 16x4 kernels, 1 MiB copy", head: "c", tail: "c", branches: 16, perBranch: 4, copyBytes: gdChunk},
	{name: "1 MiB copy, 4x16 kernels, 1 MiB copy", head: "c", tail: "c", branches: 4, perBranch: 16, copyBytes: gdChunk},
	{name: "1 MiB copy, 1x64 kernels, 1 MiB copy", head: "c", tail: "c", branches: 1, perBranch: 64, copyBytes: gdChunk},
	{name: "1 MiB HtoD copy", head: "c", copyBytes: gdChunk},
	{name: "1 MiB DtoH copy", tail: "c", copyBytes: gdChunk},
	{name: gdChunkChain, head: "c", tail: "c", branches: 1, perBranch: 16, copyBytes: gdChunk},
	{name: gdChunkChainHost, head: "c", tail: "c", branches: 1, perBranch: 16, copyBytes: gdChunk, hostFunc: true},
	{name: "1 MiB copy, 16x4 kernels, 1 MiB copy, copy nodes updated", head: "c", tail: "c", branches: 16, perBranch: 4, copyBytes: gdChunk, update: true},
	{name: "1 MiB copy, 1x64 kernels, 1 MiB copy, copy nodes updated", head: "c", tail: "c", branches: 1, perBranch: 64, copyBytes: gdChunk, update: true},
}

// gdEnv is what the graph probes use: 16 streams, a device buffer (of
// gdChunk bytes, or SET-batch's chunk) and pinned host memory of twice that.
type gdEnv struct {
	ss  *streamSet
	dev device.Buffer
	pin *device.HostMem
	le  *device.Launch
}

// graphDeviceCosts times, on the device, graphs of copy nodes, of kernel
// and copy nodes alternating, and of 1 to 16 branches forked from and
// joined into copy or kernel nodes, and SET-batch's chunk graphs
// (gdShapes): Elapsed behind a gate kernel of one launch and of 16
// launches back to back, per launch. It records every shape's time and
// the slopes the simulator's optional graph device costs are fitted to:
// per copy node and per kernel node of a chain, what alternating kernel
// and copy nodes add, and per branch of a fork/join between copies and
// between kernels.
func (c *calibrator) graphDeviceCosts(h device.Host) error {
	env, err := c.newGDEnv(h, gdChunk)
	if err != nil {
		return err
	}
	times := map[string][][]float64{} // shape -> per repeat count, per round
	for _, sh := range gdShapes {
		x, err := c.instantiate(h, env.ss.t.s, env.issue(h, sh))
		if err != nil {
			return fmt.Errorf("%s: %w", sh.name, err)
		}
		for _, n := range gdRepeats {
			r, err := c.gdRounds(h, env, x, sh, n)
			if err != nil {
				return fmt.Errorf("%s: %w", sh.name, err)
			}
			c.record(gdTimeName(sh.name, n), "", "ns",
				"Elapsed behind a gate kernel of the launches back to back, per launch", r)
			times[sh.name] = append(times[sh.name], r)
		}
		if err := h.Destroy(x); err != nil {
			return err
		}
	}
	c.recordGDSlopes(times)
	return nil
}

// newGDEnv makes a gdEnv whose device buffer holds bytes and whose pinned
// host memory twice that (copy nodes updated alternate between its halves).
func (c *calibrator) newGDEnv(h device.Host, bytes int64) (*gdEnv, error) {
	env := &gdEnv{le: c.emptyLaunch(1)}
	var err error
	if env.ss, err = newStreamSet(h, 16); err != nil {
		return nil, err
	}
	if env.dev, err = h.Malloc(bytes); err != nil {
		return nil, err
	}
	if env.pin, err = h.AllocHost(2*bytes, true); err != nil {
		return nil, err
	}
	return env, nil
}

// gdRounds is the Elapsed of n launches of x behind a gate, per launch,
// per round.
func (c *calibrator) gdRounds(h device.Host, env *gdEnv, x device.GraphExec, sh gdShape, n int) ([]float64, error) {
	// The gate covers the host's enqueueing of the n launches: a launch
	// costs about a kernel launch per branch and per copy node.
	calls := n * (3 + sh.branches + sh.perBranch/8)
	ys, err := c.gatedRounds(h, env.ss, 1, calls, func() error {
		for i := 0; i < n; i++ {
			if err := env.launchUpdated(h, x, sh, i, env.ss.t.s); err != nil {
				return err
			}
			if sh.hostFunc {
				if err := h.HostFunc(env.ss.t.s, func() {}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pick(ys, func(y float64) float64 { return y / float64(n) }), nil
}

// updateCopies updates, when sh says so, x's head and tail copy nodes
// (its first and last) to host offset copyBytes on odd launches i, 0 on
// even ones.
func (env *gdEnv) updateCopies(h device.Host, x device.GraphExec, sh gdShape, i int) error {
	if !sh.update {
		return nil
	}
	off := int64(i%2) * sh.copyBytes
	in, out := env.copy(device.HostToDevice, sh.copyBytes), env.copy(device.DeviceToHost, sh.copyBytes)
	in.HostOff, out.HostOff = off, off
	if err := h.SetCopyNode(x, 0, in); err != nil {
		return err
	}
	return h.SetCopyNode(x, x.Nodes()-1, out)
}

// launchUpdated launches x on s after updateCopies for launch i.
func (env *gdEnv) launchUpdated(h device.Host, x device.GraphExec, sh gdShape, i int, s device.Stream) error {
	if err := env.updateCopies(h, x, sh, i); err != nil {
		return err
	}
	return h.GraphLaunch(x, s)
}

// issue captures sh on the set's origin stream and its side streams.
func (env *gdEnv) issue(h device.Host, sh gdShape) func() error {
	s := env.ss.t.s
	return func() error {
		if err := env.end(h, s, sh.head, sh.copyBytes, device.HostToDevice); err != nil {
			return err
		}
		if sh.branches > 0 {
			if err := env.ss.chainsOf(h, sh.branches, func(st device.Stream) error { return env.branch(h, st, sh) }); err != nil {
				return err
			}
		}
		return env.end(h, s, sh.tail, sh.copyBytes, device.DeviceToHost)
	}
}

// end issues a head or tail node on s: a copy of bytes of kind ("c"), an
// empty kernel ("k") or nothing.
func (env *gdEnv) end(h device.Host, s device.Stream, what string, bytes int64, kind device.CopyKind) error {
	switch what {
	case "c":
		return h.Copy(s, env.copy(kind, bytes))
	case "k":
		return h.Launch(s, env.le)
	}
	return nil
}

func (env *gdEnv) copy(kind device.CopyKind, bytes int64) *device.Copy {
	if kind == device.HostToDevice {
		return &device.Copy{Kind: kind, Dst: env.dev, Host: env.pin, Bytes: bytes}
	}
	return &device.Copy{Kind: kind, Src: env.dev, Host: env.pin, Bytes: bytes}
}

// branch issues one branch of sh on st: perBranch nodes.
func (env *gdEnv) branch(h device.Host, st device.Stream, sh gdShape) error {
	for i := 0; i < sh.perBranch; i++ {
		var err error
		switch {
		case sh.copyChain || (sh.mixed && i%2 == 1):
			kind := device.HostToDevice
			if i%2 == 1 {
				kind = device.DeviceToHost
			}
			err = h.Copy(st, env.copy(kind, gdSmall))
		default:
			err = h.Launch(st, env.le)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// chainsOf issues one branch on each of the first branches streams of the
// set, forked from the origin's last command and joined back into it.
func (ss *streamSet) chainsOf(h device.Host, branches int, issue func(device.Stream) error) error {
	if err := h.Record(ss.fork, ss.t.s); err != nil {
		return err
	}
	for b := 0; b < branches; b++ {
		st := ss.stream(b)
		if b > 0 {
			if err := h.Wait(st, ss.fork); err != nil {
				return err
			}
		}
		if err := issue(st); err != nil {
			return err
		}
		if b > 0 {
			if err := h.Record(ss.joins[b-1], st); err != nil {
				return err
			}
			if err := h.Wait(ss.t.s, ss.joins[b-1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordGDSlopes records, per repeat count, the slopes between shapes:
// per copy node and per kernel node of a chain, per node of a chain of
// kernel and copy nodes alternating less the mean of the two, and per
// branch between copies and between kernels (1 to 16 branches).
func (c *calibrator) recordGDSlopes(times map[string][][]float64) {
	slope := func(a, b string, ri int, dn float64) []float64 {
		var out []float64
		for i := range times[a][ri] {
			out = append(out, (times[b][ri][i]-times[a][ri][i])/dn)
		}
		return out
	}
	for ri, n := range gdRepeats {
		tag := fmt.Sprintf(", %d launches", n)
		cp := c.record("graph device time per copy node"+tag, "", "ns",
			"chains of 2 and 16 4 KiB pinned copies alternating direction: slope per node", slope("copy chain 2", "copy chain 16", ri, 14))
		k := c.record("graph device time per kernel node"+tag, "", "ns",
			"chains of 2 and 16 empty kernels: slope per node", slope("kernel chain 2", "kernel chain 16", ri, 14))
		mixed := slope("kernel-copy chain 2", "kernel-copy chain 16", ri, 14)
		for i := range mixed {
			mixed[i] -= (cp + k) / 2
		}
		c.record("graph device time per kernel-copy switch"+tag, "", "ns",
			"chains of 2 and 16 nodes, empty kernels and 4 KiB copies alternating: slope per node less the mean of the two chains' slopes", mixed)
		c.record("graph device time per branch between copies"+tag, "", "ns",
			"a 4 KiB copy, 1 and 16 one-kernel branches, a 4 KiB copy: slope per branch", slope("copy, 1 branch, copy", "copy, 16 branches, copy", ri, 15))
		c.record("graph device time per branch between kernels"+tag, "", "ns",
			"an empty kernel, 1 and 16 one-kernel branches, an empty kernel: slope per branch", slope("kernel, 1 branch, kernel", "kernel, 16 branches, kernel", ri, 15))
	}
}

// fitGraphDeviceCosts sets front_end.graph_copy_node_ns and
// front_end.graph_dispatch_ns from graphDeviceCosts' slopes at one
// launch: each field adds exactly its value to its slope (per copy node
// of a chain of copies; per branch of a fork of one-kernel branches
// between kernels, released one after another), so each is the measured
// slope less the slope simulated without it (0 when the simulator is
// already slower). The forks between 4 KiB copies are reported only:
// their rounds spread as the small copies do. The comment gives the chunk
// graphs' error after the fit.
func (f *Fitted) fitGraphDeviceCosts(rep *Report) error {
	const (
		copyNode = "graph device time per copy node, 1 launches"
		branch   = "graph device time per branch between kernels, 1 launches"
	)
	mc, ok1 := rep.byName(copyNode)
	mb, ok2 := rep.byName(branch)
	if !ok1 || !ok2 {
		f.Notes = append(f.Notes, "no graph device costs measured: front_end.graph_copy_node_ns and graph_dispatch_ns kept from the base config")
		return nil
	}
	fe := &f.Config.FrontEnd
	fe.GraphCopyNodeNs, fe.GraphDispatchNs = 0, 0
	got, err := simulate(f.Config, "graph device costs")
	if err != nil {
		return err
	}
	sc, _ := got.byName(copyNode)
	sb, _ := got.byName(branch)
	fe.GraphCopyNodeNs = math.Round(max(0, mc.Value-sc.Value))
	fe.GraphDispatchNs = math.Round(max(0, mb.Value-sb.Value))
	after, err := simulate(f.Config, "graph device costs")
	if err != nil {
		return err
	}
	chunks := chunkErrors(rep, after)
	f.Comments["front_end.graph_copy_node_ns"] = fmt.Sprintf("fitted: graph device costs, a chain of 4 KiB pinned copy nodes %s ns per node "+
		"(median of %d rounds, spread %.0f%%), simulated %s without the field; after the fit %s", num(mc.Value), len(mc.Rounds), 100*mc.Spread(), num(sc.Value), chunks)
	f.Comments["front_end.graph_dispatch_ns"] = fmt.Sprintf("fitted: graph device costs, an empty kernel, 1 to 16 one-kernel branches, an empty kernel: %s ns per branch "+
		"(median of %d rounds, spread %.0f%%), simulated %s without the field; after the fit %s", num(mb.Value), len(mb.Rounds), 100*mb.Spread(), num(sb.Value), chunks)
	return nil
}

// chunkErrors is the simulated SET-batch chunk graphs' error against the
// measured ones, at one launch, as text.
func chunkErrors(rep, sim *Report) string {
	var parts []string
	for _, sh := range gdShapes {
		if sh.copyBytes != gdChunk || sh.branches == 0 {
			continue
		}
		name := gdTimeName(sh.name, 1)
		m, ok := rep.byName(name)
		s, ok2 := sim.byName(name)
		if ok && ok2 && m.Value != 0 {
			parts = append(parts, fmt.Sprintf("%s %+.0f%%", sh.name, 100*(s.Value/m.Value-1)))
		}
	}
	return "chunk graphs' error: " + strings.Join(parts, ", ")
}

// gdTimeName names the measurement of shape's device time per launch over
// launches launches back to back, as graphDeviceCosts records it and the
// fits read it.
func gdTimeName(shape string, launches int) string {
	return fmt.Sprintf("graph device time, %s, %d launches", shape, launches)
}

// The chunk chain graphDeviceCosts times with and without a host function
// after each launch (gdShapes), by name.
const (
	gdChunkChain     = "1 MiB copy, 1x16 kernels, 1 MiB copy"
	gdChunkChainHost = gdChunkChain + ", a host function after each launch"
)

// fitCallbackWake sets front_end.callback_wake_ns, and with it
// front_end.callback_ns and host.callback_handoff_ns, from what a host
// function adds to the chunk chain over 16 launches back to back (D: each
// callback finds the callback thread idle after a graph, so each pays the
// wake W and the run cb) and the callback duration (C, over
// callbacksQueued host functions queued back to back behind a kernel:
// only the first finds the thread idle, C = cb + W/n):
//
//	W = (D - C) n/(n-1), cb = C - W/n
//
// The callback hand-off is what remains of a callback path measured from
// a launch to a woken Get once the wake and the run are paid before the
// Put: from the parked hand-offs' callback sweep where the report has it
// (its shortest idle, the Get still spinning: launch + latency + W + cb +
// hand-off, 20 hand-offs a round), else from the single callback hand-off
// (measured less C, so it held the wake: less D - C). The simulator then
// reproduces the measurement used. Without the shapes or the callback
// duration, or when D is not above C, the base config's fields stay.
func (f *Fitted) fitCallbackWake(rep *Report) {
	d, what, ok1 := hostFuncOnOneStream(rep)
	dur, ok3 := rep.byName("host callback duration")
	if !ok1 || !ok3 || dur.Field != "front_end.callback_ns" {
		f.Notes = append(f.Notes, "no host function after a graph, or no callback duration, measured: front_end.callback_wake_ns kept from the base config")
		return
	}
	c, n := dur.Value, float64(callbacksQueued)
	fe := &f.Config.FrontEnd
	if d <= c {
		f.Notes = append(f.Notes, fmt.Sprintf("a host function after a graph adds %s ns, not more than the callback duration %s ns: "+
			"front_end.callback_wake_ns kept from the base config", num(d), num(c)))
		return
	}
	w := (d - c) * n / (n - 1)
	fe.CallbackWakeNs, fe.CallbackNs = math.Round(w), math.Round(c-w/n)
	f.Comments["front_end.callback_wake_ns"] = fmt.Sprintf("fitted: %s; "+
		"the callback duration %s ns over %d queued host functions holds one wake: wake (D - C) n/(n-1)", what, num(c), callbacksQueued)
	f.Comments["front_end.callback_ns"] = fmt.Sprintf("fitted: the callback duration measured, %s ns (median of %d rounds, spread %.0f%%), "+
		"less its share of the one wake among %d queued host functions (front_end.callback_wake_ns / %d)", num(c), len(dur.Rounds), 100*dur.Spread(), callbacksQueued, callbacksQueued)
	f.fitCallbackHandoff(rep, d-c)
}

// hostFuncOnOneStream is D, what a no-op host function after each launch
// on one stream adds per launch (each finds the callback thread idle), and
// what it was measured on: "set-batch chunks"' host functions after 20
// and 60 us spin kernels (their mean) where the report has them, a host
// function and nothing else between the launches; else "graph device
// costs"' chunk chain over 16 launches.
func hostFuncOnOneStream(rep *Report) (d float64, what string, ok bool) {
	var sum float64
	var parts []string
	for _, spin := range sbSpins {
		with, ok1 := rep.byName(sbHostFuncName(spin, 1, true))
		without, ok2 := rep.byName(sbHostFuncName(spin, 1, false))
		if !ok1 || !ok2 {
			sum, parts = 0, nil
			break
		}
		per := (with.Value - without.Value) / sbLaunches
		sum += per
		parts = append(parts, fmt.Sprintf("%s ns after %v kernels (%s with, %s without, medians of %d rounds, spread %.0f%% and %.0f%%)",
			num(per), spin, num(with.Value), num(without.Value), len(with.Rounds), 100*with.Spread(), 100*without.Spread()))
	}
	if len(parts) > 0 {
		d = sum / float64(len(parts))
		return d, fmt.Sprintf("set-batch chunks, a no-op host function after each of %d one-block spin kernels on one stream adds %s ns a launch (the mean of %s)",
			sbLaunches, num(d), strings.Join(parts, " and ")), true
	}
	with, ok1 := rep.byName(gdTimeName(gdChunkChainHost, 16))
	without, ok2 := rep.byName(gdTimeName(gdChunkChain, 16))
	if !ok1 || !ok2 {
		return 0, "", false
	}
	d = with.Value - without.Value
	alone := ""
	if w1, ok := rep.byName(gdTimeName(gdChunkChainHost, 1)); ok {
		if wo1, ok := rep.byName(gdTimeName(gdChunkChain, 1)); ok {
			alone = fmt.Sprintf(" (at one launch %s ns, spread %.0f%%)", num(w1.Value-wo1.Value), 100*w1.Spread())
		}
	}
	return d, fmt.Sprintf("graph device costs, a host function after each of 16 launches of "+
		"the chunk chain adds %s ns a launch%s, %s ns with and %s without (medians of %d rounds, spread %.0f%% and %.0f%%)",
		num(d), alone, num(with.Value), num(without.Value), len(with.Rounds), 100*with.Spread(), 100*without.Spread()), true
}

// fitCallbackHandoff sets host.callback_handoff_ns to what remains of a
// measured callback path once the wake and the run (wakeRun over the
// callback duration's run, the chunk chain's D - C) are paid before the
// Put (fitCallbackWake). From the sweep it is at least host.handoff_ns
// (a spinning Get's hand-off from another thread): what remains there is
// under the sweep's resolution.
func (f *Fitted) fitCallbackHandoff(rep *Report, wakeRun float64) {
	h := &f.Config.Host
	if sw, ok := rep.byName(fmt.Sprintf("callback hand-off after %d us idle", callbackIdles[0])); ok {
		fe := f.Config.FrontEnd
		paid := h.LaunchNs + fe.LaunchLatencyNs + fe.CallbackWakeNs + fe.CallbackNs
		h.CallbackHandoffNs = math.Round(max(h.HandoffNs, sw.Value-paid))
		f.Comments["host.callback_handoff_ns"] = fmt.Sprintf("fitted: the parked hand-offs' callback sweep, launch to a spinning Get after a %d us kernel, "+
			"less the kernel, %s ns (median of %d rounds of %d hand-offs, spread %.0f%%), less the launch, its latency, the callback's wake and run "+
			"(%s ns), %s ns; at least host.handoff_ns", callbackIdles[0], num(sw.Value), len(sw.Rounds), parkedExchanges, 100*sw.Spread(), num(paid), num(sw.Value-paid))
		return
	}
	hand, ok := rep.byName("callback to host thread hand-off")
	if !ok || hand.Field != "host.callback_handoff_ns" {
		return
	}
	h.CallbackHandoffNs = math.Round(max(0, hand.Value-wakeRun))
	f.Comments["host.callback_handoff_ns"] = fmt.Sprintf("fitted: the callback hand-off measured, %s ns (median of %d rounds, spread %.0f%%), "+
		"less the wake the callback now pays before its Put (%s ns: the host function's cost after a graph less the callback duration)",
		num(hand.Value), len(hand.Rounds), 100*hand.Spread(), num(wakeRun))
}
