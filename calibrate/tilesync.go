package calibrate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gpusched/gpusched/device"
)

// Tile synchronization's costs (the simulator's tile_sync section) are
// fitted from a run of configs/experiments/tilecost-gpu.yaml on the GPU:
// per workload, stream order, RowSync overlapped, and RowSync's kernels in
// stream order with only the producer's posts (probe post) or only the
// consumer's polls on counters already complete (probe wait), each with
// both kernels' end times (sched/tilesync Options.Phases and Probe).
//
//   - post_fraction: how much later the producer ends with its posts than
//     without, over its time (its end after the run's start), per
//     workload; the fit is their median (0 when that is below 0).
//   - poll_fraction: how much longer the consumer takes (its end less the
//     producer's) with its polls than without, over its time without; the
//     median.
//   - How late an overlapped consumer ends after its producer, against the
//     stream-ordered probe's consumer, is reported per workload (the
//     post-to-poll latency, where the consumer must wait for the
//     producer's last tile, plus what overlap gains or loses); release_ns
//     is not fitted from it.
//
// Each fitted figure is a Measurement whose rounds are the workloads'
// values, so its spread is the fit's.

// tileSyncRow is what the fit reads of a results row.
type tileSyncRow struct {
	Workload   string             `json:"workload"`
	Scheduler  string             `json:"scheduler"`
	Params     map[string]string  `json:"scheduler_params"`
	Stats      map[string]float64 `json:"scheduler_stats"`
	DeviceName string             `json:"device_name"`
	Error      string             `json:"error"`
}

// tileSyncEnds are a row's producer and consumer end times (us after the
// run's start).
type tileSyncEnds struct{ prod, cons float64 }

func (e tileSyncEnds) consumer() float64 { return e.cons - e.prod }

// tileSyncVariant names a row's scheduler by its parameters: stream, row,
// or probe-post/-wait/-all ("" for anything else).
func tileSyncVariant(r *tileSyncRow) string {
	switch {
	case r.Params["probe"] != "":
		return "probe-" + r.Params["probe"]
	case r.Params["policy"] == "stream":
		return "stream"
	case r.Params["policy"] == "row":
		return "row"
	}
	return ""
}

// endsOf reads the two end marks (end_us 00 ..., end_us 01 ...).
func endsOf(r *tileSyncRow) (tileSyncEnds, bool) {
	var keys []string
	for k := range r.Stats {
		if strings.HasPrefix(k, "end_us ") {
			keys = append(keys, k)
		}
	}
	if len(keys) != 2 {
		return tileSyncEnds{}, false
	}
	sort.Strings(keys)
	return tileSyncEnds{r.Stats[keys[0]], r.Stats[keys[1]]}, true
}

// FitTileSync reads a tilecost experiment's results (results.json) and
// returns a report of the tile_sync figures (no config: `calibrate fit
// FULL.json TILESYNC.json` adds them to a full report).
func FitTileSync(data []byte, source string) (*Report, error) {
	var res struct {
		Rows []tileSyncRow `json:"rows"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("tile sync fit: %s: %w", source, err)
	}
	ends := map[string]map[string]tileSyncEnds{}
	var order []string
	devName := ""
	for i := range res.Rows {
		r := &res.Rows[i]
		v := tileSyncVariant(r)
		e, ok := endsOf(r)
		if v == "" || r.Error != "" || !ok {
			continue
		}
		if devName == "" {
			devName = r.DeviceName
		} else if r.DeviceName != devName {
			return nil, fmt.Errorf("tile sync fit: %s: rows of %s and %s; fit one device at a time", source, devName, r.DeviceName)
		}
		if ends[r.Workload] == nil {
			ends[r.Workload] = map[string]tileSyncEnds{}
			order = append(order, r.Workload)
		}
		ends[r.Workload][v] = e
	}
	rep := &Report{Device: devName, Info: device.Info{Name: devName}}
	var post, poll []float64
	for _, w := range order {
		e := ends[w]
		s, ok := e["stream"]
		if !ok || s.prod <= 0 || s.consumer() <= 0 {
			continue
		}
		if p, ok := e["probe-post"]; ok {
			post = append(post, (p.prod-s.prod)/s.prod)
		}
		if p, ok := e["probe-wait"]; ok {
			poll = append(poll, (p.consumer()-s.consumer())/s.consumer())
		}
		if r, ok := e["row"]; ok {
			if a, ok := e["probe-all"]; ok {
				rep.Measurements = append(rep.Measurements, measurement("tile sync: "+w+": overlapped consumer after its producer, less the stream-ordered probe's", "",
					"us", "RowSync's consumer end less its producer's, less the same under probe all (which includes a launch gap and the wait kernel)", []float64{r.consumer() - a.consumer()}))
			}
		}
	}
	if len(post) == 0 || len(poll) == 0 {
		return nil, fmt.Errorf("tile sync fit: %s: no workload has the stream, probe post and probe wait rows with phases (configs/experiments/tilecost-gpu.yaml)", source)
	}
	for _, f := range []struct {
		name, field, method string
		v                   []float64
	}{
		{"tile sync: producer's posts, share of its time", "tile_sync.post_fraction",
			"per workload (rounds: the workloads), the producer's end under probe post less under stream order, over the latter; the median", post},
		{"tile sync: consumer's polls (counters complete), share of its time", "tile_sync.poll_fraction",
			"per workload (rounds: the workloads), the consumer's time (its end less the producer's) under probe wait less under stream order, over the latter; the median", poll},
	} {
		m := measurement(f.name, f.field, "fraction", f.method, f.v)
		if m.Value < 0 {
			m.Value = 0 // under the GPU's spread: no cost
		}
		rep.Measurements = append(rep.Measurements, m)
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("tile sync fit from %s: %d workloads", source, len(poll)))
	return rep, nil
}
