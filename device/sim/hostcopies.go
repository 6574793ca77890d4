package sim

// What a host copy waits before its bytes move.
//
// A lone pinned copy costs copy.latency_ns before its bytes move (the
// intercept of one copy's Elapsed over two sizes), but copies that follow
// one another on a busy host engine cost less: on an H200, behind a gate
// kernel, each copy past the first issued back to back on one stream adds
// 2.8 us (host to device) and 1.8 us (device to host) besides its bytes,
// and each issued at once on its own stream 4.7 and 3.7 us, where a lone
// copy's latency is about 5.8 (calibrate "copies one way on many streams";
// calibration-h100.md "Session 26: copies that follow copies"): as if the
// engine fetched the next command of the stream it serves while the copy
// before finishes, and another stream's only after.
//
// With copy.back_to_back_latency_ns set, a stream's copy that starts on
// its engine the moment the engine's previous copy, of the same stream,
// ended and that was issued before then pays that instead of
// copy.latency_ns; with copy.queued_latency_ns set, a copy that waited on
// its engine behind another stream's copy pays that. Device-to-device
// copies pay copy.latency_ns.
//
// With copy.stream_runs an engine whose copy ends serves first a copy
// the same stream issues at that instant, before copies queued from other
// streams: 32 copies of 64 KiB dealt round-robin over 2, 4 and 8 streams
// take an H200 126, 134 and 139 us against 123 on one stream (calibrate
// "copy jobs over streams", session 31), which fits an engine that runs
// each stream's queued copies back to back and pays a whole latency only
// when it changes streams, and not one that serves the copies in issue
// order at a latency each (225 us simulated).
//
// A graph's copy that follows a copy of the same launch on its engine,
// and was ready (its predecessors done) by the time that copy ended, pays
// copy.graph_latency_ns where it is set: on an H200, behind a gate
// kernel, each copy past the first of a graph's, chained or on parallel
// branches, adds 2.5-3.3 us (host to device) and 1.1-1.9 (device to host)
// besides its bytes (calibrate "copies in a graph", session 27): about
// what stream copies back to back add, and no overlap of copies the same
// way, as if the launch had handed the engine its copy nodes at once. The
// launch's first copy on an engine pays copy.latency_ns: charging it the
// graph latency too made SET's job graphs, each with one copy a way,
// faster still than their already fast GPU rows. So does a copy that
// became ready after the engine's last copy of the launch ended (the
// engine had gone idle): a whole program captured on one stream, each
// job's copy in behind the last job's kernel and copy out, runs on the
// GPU no faster than the same calls issued to the stream (the
// tournament's serial+graph against serial on SET's sobel and bp jobs,
// four H100 and one H200 lease: 4,660-5,364 against 3,551-5,090 us),
// where with the graph latency on every copy it was simulated 33-53%
// faster.

// copyPrev is the last copy a host engine ended: its stream and when.
type copyPrev struct {
	st  *stream
	gr  *graphRun
	end Time
}

// noteHostCopy records k, ending at end, as its host engine's last copy:
// when the engines are re-timed (pcie.go) as k ends, before the next
// queued copy starts; otherwise as k is timed, at issue (frontend.go), so
// that the next one issued follows it, done or not.
func (d *Device) noteHostCopy(k *command, end Time) {
	if k.engine == engHtoD || k.engine == engDtoH {
		d.copyPrev[k.engine] = copyPrev{st: k.st, gr: k.gr, end: end}
	}
}

// hostCopyLatency is what copy k waits before its bytes move when it
// starts at start on host engine eng; queued says it waited on the engine
// behind another copy.
func (d *Device) hostCopyLatency(eng int, k *command, start Time, queued bool) Time {
	p := d.copyPrev[eng]
	if k.gr != nil {
		if p.gr == k.gr && k.gr.ready[k.node] <= p.end {
			return d.cost.copyGraphLatency
		}
		return d.cost.copyLatency
	}
	if b := d.cost.copyBackToBackLatency; b > 0 && (!queued || d.cfg.Copy.StreamRuns) && k.st != nil && p.st == k.st && start == p.end && k.arrive <= p.end {
		return b
	}
	if q := d.cost.copyQueuedLatency; q > 0 && queued {
		return q
	}
	if i := d.cost.copyIdleLatency; i > 0 && !queued && (start == k.arrive || k.polled) {
		return i
	}
	return d.cost.copyLatency
}
