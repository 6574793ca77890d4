package sim

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/device"
)

// FuzzParseConfig: a device config file never panics the parser; a rejection
// names the source; an accepted config passes device.Info.Check and runs a
// kernel, a copy and a synchronize on a simulator without error or panic.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("../../configs/devices/*.yaml")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("name: x\n"))
	f.Add([]byte("info: {sms: -1}\n"))
	f.Add([]byte(""))
	// Hostile numbers (issue 23) in every float field of the H100's file.
	if h100, err := os.ReadFile("../../configs/devices/h100.yaml"); err == nil {
		for _, field := range []string{"mem_bandwidth", "launch_ns", "max_sm_bandwidth", "htod_gbps", "min_block_ns", "driver_lock_fraction", "flops_per_cycle"} {
			for _, v := range []string{".nan", ".inf", "-.inf", "1.0e-11", "-1", "1e300", "0"} {
				f.Add(hostileField(h100, field, v))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data, "fuzz.yaml")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name its source: %v", err)
			}
			var fe *FieldError
			if errors.As(err, &fe) && !strings.Contains(err.Error(), "fuzz.yaml:") {
				t.Fatalf("a field's error does not name its line: %v", err)
			}
			return
		}
		if err := cfg.checkNumbers(reflect.ValueOf(*cfg), ""); err != nil {
			t.Fatalf("accepted a config with %v", err)
		}
		if err := cfg.Info.Check(); err != nil {
			t.Fatalf("accepted a config whose Info fails Check: %v", err)
		}
		d, err := New(cfg)
		if err != nil {
			return // an option-level rejection is a clear error too
		}
		k := &device.Kernel{Module: "fuzz", Name: "k", Regs: 16}
		err = d.Run(func(h device.Host) error {
			s, err := h.NewStream(device.StreamOptions{})
			if err != nil {
				return err
			}
			b, err := h.Malloc(256)
			if err != nil {
				return err
			}
			m, err := h.AllocHost(256, true)
			if err != nil {
				return err
			}
			l := &device.Launch{Kernel: k, Grid: device.D1(2), Block: device.D1(32), Args: []device.Arg{device.Out(b)}, Work: device.Work{Cycles: 10, Flops: 10, Bytes: 10}}
			if err := device.ValidateLaunch(&cfg.Info, l); err != nil {
				return nil // the config's limits forbid even this: fine
			}
			if err := h.Launch(s, l); err != nil {
				return err
			}
			if err := h.Copy(s, &device.Copy{Kind: device.DeviceToHost, Src: b, Host: m, Bytes: 256}); err != nil {
				return err
			}
			return h.Synchronize()
		})
		var he *HorizonError
		if err != nil && !errors.As(err, &he) {
			// A config at the edges of every range may pass the horizon
			// in a few calls: that is a clear error, not a wrong number.
			t.Fatalf("accepted config fails a one-kernel run: %v", err)
		}
	})
}

// hostileField sets the first "field: value" line of a config to v.
func hostileField(data []byte, field, v string) []byte {
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if k, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && k == field {
			indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
			lines[i] = indent + field + ": " + v
			break
		}
	}
	return []byte(strings.Join(lines, "\n"))
}
