package device

import (
	"encoding/json"
	"errors"
	"fmt"
)

// CheckTraceJSON checks a timeline file against the trace event format as
// the PyTorch profiler writes it and its tools read it: valid JSON with a
// schemaVersion and a traceEvents array; every event with ph, ts, pid and
// tid (numbers); complete events with a name and a non-negative duration;
// every flow id started once ("s") and finished once ("f", not before its
// start); and the args tools read as numbers (correlation, device, stream,
// bytes) numbers. It returns the first problem found.
func CheckTraceJSON(data []byte) error {
	var doc struct {
		SchemaVersion *int                         `json:"schemaVersion"`
		Events        []map[string]json.RawMessage `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("trace: not JSON: %w", err)
	}
	if doc.SchemaVersion == nil {
		return errors.New("trace: no schemaVersion")
	}
	if doc.Events == nil {
		return errors.New("trace: no traceEvents array")
	}
	starts, ends := map[uint64]float64{}, map[uint64]float64{}
	for i, ev := range doc.Events {
		if err := checkEvent(ev, starts, ends); err != nil {
			return fmt.Errorf("trace: event %d: %w", i, err)
		}
	}
	for id, s := range starts {
		f, ok := ends[id]
		if !ok {
			return fmt.Errorf("trace: flow %d starts and never finishes", id)
		}
		if f < s {
			return fmt.Errorf("trace: flow %d finishes (%.3f us) before it starts (%.3f us)", id, f, s)
		}
	}
	for id := range ends {
		if _, ok := starts[id]; !ok {
			return fmt.Errorf("trace: flow %d finishes and never starts", id)
		}
	}
	return nil
}

func checkEvent(ev map[string]json.RawMessage, starts, ends map[uint64]float64) error {
	var ph string
	if err := json.Unmarshal(ev["ph"], &ph); err != nil || ph == "" {
		return errors.New(`no "ph"`)
	}
	var ts, pid, tid float64
	for key, dst := range map[string]*float64{"ts": &ts, "pid": &pid, "tid": &tid} {
		if err := json.Unmarshal(ev[key], dst); err != nil {
			return fmt.Errorf("%q is missing or not a number", key)
		}
	}
	switch ph {
	case "X":
		var name string
		var dur float64
		if err := json.Unmarshal(ev["name"], &name); err != nil || name == "" {
			return errors.New("a complete event without a name")
		}
		if err := json.Unmarshal(ev["dur"], &dur); err != nil || dur < 0 {
			return fmt.Errorf("%s: duration missing or negative", name)
		}
	case "s", "f":
		var id uint64
		if err := json.Unmarshal(ev["id"], &id); err != nil {
			return errors.New("a flow event without a numeric id")
		}
		m := starts
		if ph == "f" {
			m = ends
		}
		if _, dup := m[id]; dup {
			return fmt.Errorf("flow %d has two %q events", id, ph)
		}
		m[id] = ts
	}
	var args map[string]json.RawMessage
	if raw, ok := ev["args"]; ok {
		if err := json.Unmarshal(raw, &args); err != nil {
			return errors.New("args is not an object")
		}
	}
	for _, key := range []string{"correlation", "device", "stream", "bytes"} {
		if raw, ok := args[key]; ok {
			var n float64
			if err := json.Unmarshal(raw, &n); err != nil {
				return fmt.Errorf("arg %q is not a number: %s", key, raw)
			}
		}
	}
	return nil
}
