package experiments

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gpusched/gpusched/device"
)

// Trace runs one row of e (workload, scheduler, device; device "" means the
// experiment's first) once, after its warm-up runs, with the device's
// timeline recorded, and writes the timeline to w as Chrome trace event
// JSON. It returns the row as measured.
func Trace(e *Experiment, workload, scheduler, dev string, w io.Writer) (_ *Row, err error) {
	if dev == "" {
		dev = e.Devices[0]
	}
	var j *job
	jobs, _, err := plan(e, nil, Shard{})
	if err != nil {
		return nil, err
	}
	var wl, sc []string
	for _, c := range jobs {
		if !contains(wl, c.workload.Name) {
			wl = append(wl, c.workload.Name)
		}
		if !contains(sc, c.sched.Name) {
			sc = append(sc, c.sched.Name)
		}
		if c.workload.Name == workload && c.sched.Name == scheduler && (c.device == dev) {
			j = c
		}
	}
	switch {
	case !contains(wl, workload):
		return nil, fmt.Errorf("no workload %q in %s (have %s)", workload, e.Name, strings.Join(wl, ", "))
	case !contains(sc, scheduler):
		return nil, fmt.Errorf("no scheduler %q in %s (have %s)", scheduler, e.Name, strings.Join(sc, ", "))
	case j == nil:
		if err := checkDeviceSpec(dev); err != nil {
			return nil, fmt.Errorf("device %q: %w", dev, err)
		}
		// A device the file does not list: trace there all the same.
		base := jobs[0]
		for _, c := range jobs {
			if c.workload.Name == workload && c.sched.Name == scheduler {
				base = c
			}
		}
		cp := *base
		cp.device = dev
		j = &cp
	}
	one := *j.exp
	one.Repetitions = 1
	j.exp = &one

	var d device.Device
	if IsCUDA(dev) {
		d, err = OpenCUDA()
	} else {
		d, err = openSim(dev, false)
	}
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	if _, ok := d.(device.Tracer); !ok {
		return nil, fmt.Errorf("device %s does not record timelines", dev)
	}
	var data []byte
	var ref *reference
	if IsCUDA(dev) {
		ref = serialReference(d, j)
	}
	row := j.execute(d, ref, func(_ *Row, b []byte) error { data = b; return nil })
	if len(row.Errors) > 0 && data == nil {
		return &row, fmt.Errorf("%s", strings.Join(row.Errors, "; "))
	}
	if _, err := w.Write(data); err != nil {
		return &row, err
	}
	return &row, nil
}

// writeTimeline writes the last run's timeline with the device's
// properties and the measured region marked (ProfilerStep#N on the main
// host thread), where the device gives its timeline as a value; else as
// the device writes it.
func writeTimeline(t device.Tracer, info device.Info, measured device.TraceRegion, w io.Writer) error {
	src, ok := t.(device.TimelineSource)
	if !ok {
		return t.WriteTrace(w)
	}
	tl, err := src.LastTimeline()
	if err != nil {
		return err
	}
	tl.Device = &info
	if measured.End > measured.Start {
		tl.Regions = append(tl.Regions, measured)
	}
	return tl.WriteJSON(w)
}
