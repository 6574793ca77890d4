package sim

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// The ranges a config's figures must lie in. They are the simulator's
// limits, not plausibility judgements, except the smallest rates, which
// catch sign typos (1.0e-11 for 1.0e+11): at a kilobyte per second one
// kernel of a few hundred megabytes already passes the horizon.
const (
	// maxCostNs bounds every cost in nanoseconds (*_ns fields): the horizon.
	maxCostNs = float64(Horizon)
	// minBandwidth and maxBandwidth bound bandwidths in bytes per second
	// (the *_gbps fields: the same in GB/s).
	minBandwidth, maxBandwidth = 1e3, 1e18
	// minFlopsPerCycle and maxFlopsPerCycle bound an SM's arithmetic rate.
	minFlopsPerCycle, maxFlopsPerCycle = 1e-3, 1e12
	// maxClockHz is 100 GHz; the least, 1 MHz, is minClockHz.
	minClockHz, maxClockHz = 1e6, 1e11
	// maxCount bounds the integer fields (SMs are bounded by maxSMs), so
	// that products of two of them (blocks times threads) fit an int.
	maxCount = math.MaxInt32
	// maxMemoryBytes bounds memory_bytes and l2_bytes (a pebibyte).
	maxMemoryBytes = 1 << 50
	// maxDQSlots bounds the dependency queue's window and stale list.
	maxDQSlots = 1 << 20
)

// FieldError is a device config value out of its range: the dotted field
// path as in the file ("sm.max_sm_bandwidth") and what is wrong.
// ParseConfig adds the source and the line.
type FieldError struct {
	Device string
	Field  string
	Msg    string
}

func (e *FieldError) Error() string { return fmt.Sprintf("device %q: %s %s", e.Device, e.Field, e.Msg) }

// check reports the first value of c out of range: any number that is NaN
// or infinite, any cost below 0 or beyond the horizon, a rate outside its
// range, an inconsistency of the hardware description (device.Info.Check),
// and what the simulator cannot hold.
func (c *Config) check() error {
	if c.Name == "" {
		return fmt.Errorf("name must not be empty")
	}
	if err := c.checkNumbers(reflect.ValueOf(*c), ""); err != nil {
		return err
	}
	if err := c.Info.Check(); err != nil {
		return err
	}
	if err := c.checkFractions(); err != nil {
		return err
	}
	bad := func(field, format string, args ...any) error {
		return &FieldError{Device: c.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case c.Info.SMs > maxSMs:
		return bad("info.sms", "is %d; the simulator handles at most %d", c.Info.SMs, maxSMs)
	case c.Info.ClockHz < minClockHz:
		return bad("info.clock_hz", "%d is below 1 MHz", c.Info.ClockHz)
	case c.Info.ClockHz > maxClockHz:
		return bad("info.clock_hz", "%d is above 100 GHz", c.Info.ClockHz)
	case c.Host.DriverLockFraction > 1:
		return bad("host.driver_lock_fraction", "must be between 0 and 1, got %g", c.Host.DriverLockFraction)
	case c.Host.GraphLockFraction > 1:
		return bad("host.graph_lock_fraction", "must be between 0 and 1 (0: driver_lock_fraction), got %g", c.Host.GraphLockFraction)
	case c.Copy.DuplexSlowdown != 0 && (c.Copy.DuplexSlowdown < 1 || c.Copy.DuplexSlowdown > 4):
		return bad("copy.duplex_slowdown", "must be between 1 and 4 (0: off), got %g", c.Copy.DuplexSlowdown)
	case c.FrontEnd.CallbackCopyDelay > 0 && c.FrontEnd.CallbackCopyDelayMaxNs == 0:
		return bad("front_end.callback_copy_delay_max_ns", "must be set (the most other streams' copies delay a callback) with front_end.callback_copy_delay")
	case c.FrontEnd.CallbackCopyDelay > 1:
		return bad("front_end.callback_copy_delay", "must be between 0 and 1 (a fraction of the copies' time left; 0: off), got %g", c.FrontEnd.CallbackCopyDelay)
	case c.Copy.DtoDContention > 2:
		return bad("copy.dtod_contention", "must be between 0 and 2, got %g", c.Copy.DtoDContention)
	case c.SM.RetimeThreshold < 0 || c.SM.RetimeThreshold > 0.5:
		return bad("sm.retime_threshold", "must be between 0 and 0.5 (0: off), got %g", c.SM.RetimeThreshold)
	case c.SM.LoadBandwidth < 0 || math.IsInf(c.SM.LoadBandwidth, 0) || math.IsNaN(c.SM.LoadBandwidth):
		return bad("sm.load_bandwidth", "must be a finite number of bytes per second, at least 0 (0: off), got %g", c.SM.LoadBandwidth)
	case c.SM.YoungerKernelWeight < 0 || c.SM.YoungerKernelWeight > 1:
		return bad("sm.younger_kernel_weight", "must be between 0 and 1 (0: left out, every warp counts 1), got %g", c.SM.YoungerKernelWeight)
	case c.SM.OlderPressureExponent < 0 || c.SM.OlderPressureExponent > 4:
		return bad("sm.older_pressure_exponent", "must be between 0 and 4 (0: off, every older warp counts 1), got %g", c.SM.OlderPressureExponent)
	case carveoutErr(c) != "":
		return bad("sm.shared_carveout_kb", "%s", carveoutErr(c))
	}
	for _, r := range []struct {
		v        float64
		field    string
		min, max float64
		unit     string
	}{
		{c.Info.MemBandwidth, "info.mem_bandwidth", minBandwidth, maxBandwidth, "bytes/s"},
		{c.SM.MaxSMBandwidth, "sm.max_sm_bandwidth", minBandwidth, maxBandwidth, "bytes/s"},
		{c.SM.FlopsPerCycle, "sm.flops_per_cycle", minFlopsPerCycle, maxFlopsPerCycle, "flops per cycle"},
		{c.Copy.HtoDGBps, "copy.htod_gbps", minBandwidth / 1e9, maxBandwidth / 1e9, "GB/s"},
		{c.Copy.DtoHGBps, "copy.dtoh_gbps", minBandwidth / 1e9, maxBandwidth / 1e9, "GB/s"},
		{c.Copy.PageableGBps, "copy.pageable_gbps", minBandwidth / 1e9, maxBandwidth / 1e9, "GB/s"},
	} {
		if !(r.v > 0) {
			return bad(r.field, "must be positive, got %g", r.v)
		}
		if r.v < r.min || r.v > r.max {
			return bad(r.field, "is %g %s, outside the simulator's range [%g, %g] (a sign typo in the exponent?)", r.v, r.unit, r.min, r.max)
		}
	}
	for _, p := range []struct {
		v     int
		field string
	}{{c.SM.SaturationWarps, "sm.saturation_warps"}, {c.SM.SMMemSaturationWarps, "sm.sm_mem_saturation_warps"}} {
		if p.v <= 0 {
			return bad(p.field, "must be positive, got %d", p.v)
		}
	}
	return c.checkDQ()
}

func (c *Config) checkDQ() error {
	for _, p := range []struct {
		v     int
		field string
	}{{c.DQ.Slots, "dependency_queue.slots"}, {c.DQ.StaleList, "dependency_queue.stale_list"}} {
		if c.DQ.Enabled && p.v <= 0 {
			return &FieldError{c.Name, p.field, fmt.Sprintf("must be positive when the queue is enabled, got %d", p.v)}
		}
		if p.v > maxDQSlots {
			return &FieldError{c.Name, p.field, fmt.Sprintf("is %d; the simulator handles at most %d", p.v, maxDQSlots)}
		}
	}
	for _, p := range []struct {
		v     int
		field string
	}{{c.DQ.InsertCycles, "dependency_queue.insert_cycles"}, {c.DQ.CompleteCycles, "dependency_queue.complete_cycles"}} {
		if p.v < 0 {
			return &FieldError{c.Name, p.field, fmt.Sprintf("must not be negative, got %d", p.v)}
		}
	}
	return nil
}

// checkNumbers walks every numeric field of v (a Config or a struct in
// it), so that fields added later are covered too: every float must be
// finite, every cost (a field named *_ns) between 0 and the horizon, every
// int at most maxCount, the int64 sizes at most maxMemoryBytes.
func (c *Config) checkNumbers(v reflect.Value, path string) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if key == "" {
			key = strings.ToLower(f.Name)
		}
		if path != "" {
			key = path + "." + key
		}
		if err := c.checkNumber(v.Field(i), key); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) checkNumber(fv reflect.Value, field string) error {
	bad := func(format string, args ...any) error {
		return &FieldError{Device: c.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch fv.Kind() {
	case reflect.Struct:
		return c.checkNumbers(fv, field)
	case reflect.Float64, reflect.Float32:
		x := fv.Float()
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return bad("is %g; it must be a finite number", x)
		case strings.HasSuffix(field, "_ns") && x < 0:
			return bad("must not be negative, got %g", x)
		case strings.HasSuffix(field, "_ns") && x > maxCostNs:
			return bad("is %g ns, beyond the simulator's horizon of %v (sim.Horizon)", x, Horizon)
		case x < 0:
			return bad("must not be negative, got %g", x)
		}
	case reflect.Int:
		if x := fv.Int(); x > maxCount {
			return bad("is %d; the simulator handles at most %d", x, maxCount)
		}
	case reflect.Int64:
		if x := fv.Int(); field != "info.clock_hz" && x > maxMemoryBytes {
			return bad("is %d; the simulator handles at most %d", x, int64(maxMemoryBytes))
		}
	}
	return nil
}

// errorLine is the line of the field a check error names: a FieldError's
// field, else the first field path (or, under info, its key alone, as
// device.Info.Check names them) the message mentions.
func errorLine(err error, lines map[string]int) int {
	var fe *FieldError
	if errors.As(err, &fe) {
		return lines[fe.Field]
	}
	msg := err.Error()
	best, bestAt, bestLen := 0, len(msg), 0
	for path, line := range lines {
		names := []string{path}
		if rest, ok := strings.CutPrefix(path, "info."); ok {
			names = append(names, rest)
		}
		for _, name := range names {
			at := wordIndex(msg, name)
			if at >= 0 && (at < bestAt || (at == bestAt && len(name) > bestLen)) {
				best, bestAt, bestLen = line, at, len(name)
			}
		}
	}
	return best
}

// wordIndex is the index of name in msg where it stands as a whole field
// name (not part of a longer one), or -1.
func wordIndex(msg, name string) int {
	isName := func(b byte) bool {
		return b == '_' || b == '.' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
	}
	for from := 0; ; {
		i := strings.Index(msg[from:], name)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(name)
		if (i == 0 || !isName(msg[i-1])) && (end == len(msg) || !isName(msg[end])) {
			return i
		}
		from = i + 1
	}
}
