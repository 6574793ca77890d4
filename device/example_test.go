package device_test

import (
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
)

// Two independent kernels of 1 ms each, issued on one stream and then on
// two: on the simulated H100 the second schedule overlaps them (times
// rounded to 0.1 ms, far above the host's launch costs). Every time
// is simulated, so the output is the same on every run.
func Example() {
	dev, err := sim.NewNamed("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := dev.Close(); err != nil {
			fmt.Println(err)
		}
	}()
	info := dev.Info()
	k := &device.Kernel{Module: "example", Name: "spin", Regs: 32}
	oneMillisecond := float64(info.ClockHz) * 1e-3
	launch := func(buf device.Buffer) *device.Launch {
		return &device.Launch{Kernel: k, Grid: device.D1(1), Block: device.D1(64),
			Args: []device.Arg{device.Out(buf)}, Work: device.Work{Cycles: oneMillisecond}}
	}
	for _, streams := range []int{1, 2} {
		err := dev.Run(func(h device.Host) error {
			var ss []device.Stream
			for i := 0; i < streams; i++ {
				s, err := h.NewStream(device.StreamOptions{})
				if err != nil {
					return err
				}
				ss = append(ss, s)
			}
			var bufs []device.Buffer
			for i := 0; i < 2; i++ {
				buf, err := h.Malloc(256)
				if err != nil {
					return err
				}
				bufs = append(bufs, buf)
			}
			start := h.Now()
			for i, buf := range bufs {
				if err := h.Launch(ss[i%streams], launch(buf)); err != nil {
					return err
				}
			}
			if err := h.Synchronize(); err != nil {
				return err
			}
			fmt.Printf("%d stream(s): %v\n", streams, (h.Now() - start).Round(100*time.Microsecond))
			return nil
		})
		if err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// 1 stream(s): 2ms
	// 2 stream(s): 1ms
}
