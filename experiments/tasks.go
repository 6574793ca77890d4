package experiments

import (
	"runtime"
	"sync"

	"github.com/gpusched/gpusched/device"
)

// RunTasks runs n tasks, task i on the device spec deviceOf(i) (a
// simulator config or "cuda"). Simulator tasks run first, in parallel on up
// to workers goroutines (0: GOMAXPROCS), each on a simulator of its own, so
// their results do not depend on the order they finish in. GPU tasks then
// run one at a time on one device, opened once. do(i, dev, err) does task i;
// err is set, and dev nil, when its device could not be opened. do must be
// safe to call from several goroutines for different i.
func RunTasks(n, workers int, deviceOf func(i int) string, do func(i int, dev device.Device, err error)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var sim, gpu []int
	for i := 0; i < n; i++ {
		if IsCUDA(deviceOf(i)) {
			gpu = append(gpu, i)
		} else {
			sim = append(sim, i)
		}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers && w < len(sim); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				dev, err := OpenDevice(deviceOf(i))
				do(i, dev, err)
				if err == nil {
					dev.Close()
				}
			}
		}()
	}
	for _, i := range sim {
		next <- i
	}
	close(next)
	wg.Wait()
	if len(gpu) == 0 {
		return
	}
	dev, err := OpenDevice("cuda")
	for _, i := range gpu {
		do(i, dev, err)
	}
	if err == nil {
		dev.Close()
	}
}
