package sim

import (
	"syscall"
	"testing"
	"time"

	"github.com/gpusched/gpusched/device"
)

// BenchmarkTinyKernels: 100,000 one-block kernels issued round-robin over 8
// streams by one host thread, then a device synchronize. Reports simulated
// kernels per wall-clock second.
func BenchmarkTinyKernels(b *testing.B) {
	const kernels, nStreams = 100_000, 8
	d, err := NewNamed("h100")
	if err != nil {
		b.Fatal(err)
	}
	l := &device.Launch{Kernel: spinK, Grid: device.D1(1), Block: device.D1(64), Work: device.Work{Cycles: 2000}}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		if err := launchRoundRobin(d, l, kernels, nStreams); err != nil {
			b.Fatal(err)
		}
		if got := d.Stats().Kernels; got != kernels {
			b.Fatalf("%d kernels ran, want %d", got, kernels)
		}
	}
	b.ReportMetric(float64(kernels*b.N)/time.Since(start).Seconds(), "kernels/s")
	b.ReportMetric(float64(kernels*b.N)/(cpuTime()-cpu0).Seconds(), "kernels/cpu-s")
}

// BenchmarkBlockPlacement: 1,000 kernels of 10,000 256-thread blocks over
// 4 streams. Reports simulated block placements per wall-clock second.
func BenchmarkBlockPlacement(b *testing.B) {
	const kernels, blocks, nStreams = 1000, 10_000, 4
	d, err := NewNamed("h100")
	if err != nil {
		b.Fatal(err)
	}
	l := &device.Launch{Kernel: spinK, Grid: device.D1(blocks), Block: device.D1(256), Work: device.Work{Cycles: 20000}}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		if err := launchRoundRobin(d, l, kernels, nStreams); err != nil {
			b.Fatal(err)
		}
		if got := d.Stats().Blocks; got != kernels*blocks {
			b.Fatalf("%d blocks ran, want %d", got, kernels*blocks)
		}
	}
	b.ReportMetric(float64(kernels*blocks*b.N)/time.Since(start).Seconds(), "blocks/s")
	b.ReportMetric(float64(kernels*blocks*b.N)/(cpuTime()-cpu0).Seconds(), "blocks/cpu-s")
}

// launchRoundRobin runs on d kernels launches of l issued round-robin
// over streams streams by one host thread, then a device synchronize.
func launchRoundRobin(d *Device, l *device.Launch, kernels, streams int) error {
	return d.Run(func(h device.Host) error {
		ss := make([]device.Stream, streams)
		for j := range ss {
			ss[j], _ = h.NewStream(device.StreamOptions{})
		}
		for j := 0; j < kernels; j++ {
			if err := h.Launch(ss[j%streams], l); err != nil {
				return err
			}
		}
		return h.Synchronize()
	})
}

// cpuTime is the process's user plus system CPU time: on a shared machine
// the rate per CPU-second is the rate of one core, whatever else runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHostThreads: 8 host threads, each issuing 2,000 kernels on its
// own stream and synchronizing it every 10: the multi-threaded path where
// threads hand control to each other in simulated-time order.
func BenchmarkHostThreads(b *testing.B) {
	const threads, kernels = 8, 2000
	d, err := NewNamed("h100")
	if err != nil {
		b.Fatal(err)
	}
	l := &device.Launch{Kernel: spinK, Grid: device.D1(4), Block: device.D1(128), Work: device.Work{Cycles: 5000}}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		err := d.Run(func(h device.Host) error {
			for t := 0; t < threads; t++ {
				h.Go("worker", func(w device.Host) error {
					s, err := w.NewStream(device.StreamOptions{})
					if err != nil {
						return err
					}
					for j := 0; j < kernels; j++ {
						if err := w.Launch(s, l); err != nil {
							return err
						}
						if j%10 == 9 {
							if err := w.StreamSynchronize(s); err != nil {
								return err
							}
						}
					}
					return nil
				})
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(threads*kernels*b.N)/time.Since(start).Seconds(), "kernels/s")
	b.ReportMetric(float64(threads*kernels*b.N)/(cpuTime()-cpu0).Seconds(), "kernels/cpu-s")
}
