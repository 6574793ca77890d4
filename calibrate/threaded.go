package calibrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpusched/gpusched/device"
)

// Host threads at once (issue #18, session 10): ACS-SW's threaded rows run
// K scheduler threads, each on its own stream, that launch, synchronize,
// capture and instantiate at the same time. "launch throughput" measures
// plain launches over 1 to 8 threads; this measures what each of ACS-SW's
// scheduler-thread loops does, per iteration, when N threads run it at
// once: whether the driver serializes it (the aggregate time per iteration
// stays at one thread's) or not (it falls as 1/N).

// threadedCounts are the host thread counts (ACS-SW runs 1, 4 and 8).
var threadedCounts = []int{1, 2, 4, 8}

// threadedBatch is the nodes of the graphs built or updated per
// iteration: ACS-SW's batch 4.
const threadedBatch = 4

// threadedLoop is one scheduler-thread loop: prepare runs on the thread
// outside the timed region and returns the iteration and a cleanup.
type threadedLoop struct {
	name, method string
	iterations   int
	prepare      func(c *calibrator, h device.Host, s device.Stream) (iter func() error, cleanup func() error, err error)
}

var threadedLoops = []threadedLoop{
	{
		name:       "launch + synchronize",
		method:     "an empty-kernel launch and StreamSynchronize (ACS-SW's sync loop)",
		iterations: 200,
		prepare: func(c *calibrator, h device.Host, s device.Stream) (func() error, func() error, error) {
			l := c.emptyLaunch(1)
			return func() error {
				if err := h.Launch(s, l); err != nil {
					return err
				}
				return h.StreamSynchronize(s)
			}, nil, nil
		},
	},
	{
		name: "graph build of 4",
		method: fmt.Sprintf("capture of %d empty-kernel launches, instantiate, graph destroy, graph launch, StreamSynchronize, exec destroy (ACS-SW batch 4)",
			threadedBatch),
		iterations: 50,
		prepare: func(c *calibrator, h device.Host, s device.Stream) (func() error, func() error, error) {
			l := c.emptyLaunch(1)
			return func() error {
				x, err := c.instantiateBatch(h, s, l)
				if err != nil {
					return err
				}
				if err := h.GraphLaunch(x, s); err != nil {
					return errors.Join(err, h.Destroy(x))
				}
				return errors.Join(h.StreamSynchronize(s), h.Destroy(x))
			}, nil, nil
		},
	},
	{
		name: "graph update of 4",
		method: fmt.Sprintf("%d kernel-node updates of an instantiated %d-node graph, graph launch, StreamSynchronize (ACS-SW batch 4 cached)",
			threadedBatch, threadedBatch),
		iterations: 100,
		prepare: func(c *calibrator, h device.Host, s device.Stream) (func() error, func() error, error) {
			l := c.emptyLaunch(1)
			x, err := c.instantiateBatch(h, s, l)
			if err != nil {
				return nil, nil, err
			}
			return func() error {
					for i := 0; i < threadedBatch; i++ {
						if err := h.SetKernelNode(x, i, l); err != nil {
							return err
						}
					}
					if err := h.GraphLaunch(x, s); err != nil {
						return err
					}
					return h.StreamSynchronize(s)
				}, func() error {
					return h.Destroy(x)
				}, nil
		},
	},
	{
		name:       "token + launch + synchronize",
		method:     "Get of a token all the threads share (one Queue holding one value), an empty-kernel launch, Put of the token, StreamSynchronize (ACS-SW dispatch shared's window lock, held over the launch)",
		iterations: 200,
		prepare: func(c *calibrator, h device.Host, s device.Stream) (func() error, func() error, error) {
			l := c.emptyLaunch(1)
			token := c.threadedToken
			return func() error {
				if _, ok := h.Get(token); !ok {
					return errors.New("token queue closed")
				}
				err := h.Launch(s, l)
				token.Put(struct{}{})
				if err != nil {
					return err
				}
				return h.StreamSynchronize(s)
			}, nil, nil
		},
	},
}

// instantiateBatch captures threadedBatch launches of l on s, instantiates
// them and destroys the graph: ACS-SW's batch, built (graph build, every
// iteration) or built once and updated (graph update).
func (c *calibrator) instantiateBatch(h device.Host, s device.Stream, l *device.Launch) (device.GraphExec, error) {
	return c.instantiate(h, s, func() error {
		for i := 0; i < threadedBatch; i++ {
			if err := h.Launch(s, l); err != nil {
				return err
			}
		}
		return nil
	})
}

// threadedHostCalls measures each threadedLoop over threadedCounts host
// threads: per round, the time from releasing the threads to the last
// one's end over every thread's iterations (the aggregate cost of one
// iteration), and the mean over threads of each one's own time per
// iteration (what one of N threads pays).
func (c *calibrator) threadedHostCalls(h device.Host) error {
	for _, loop := range threadedLoops {
		if c.threadedOnly != "" && loop.name != c.threadedOnly {
			continue
		}
		for _, n := range threadedCounts {
			var agg, own []float64
			if err := c.warmRounds(func(measured bool) error {
				a, o, err := c.threadedRound(h, loop, n)
				if err != nil {
					return fmt.Errorf("%s, %d thread(s): %w", loop.name, n, err)
				}
				if measured {
					agg, own = append(agg, a), append(own, o)
				}
				return nil
			}); err != nil {
				return err
			}
			c.record(fmt.Sprintf("%s, %d host thread(s) at once", loop.name, n), "", "ns",
				fmt.Sprintf("%d iterations per thread of %s, each thread on its own stream, all released at once: last end less release over every thread's iterations", loop.iterations, loop.method), agg)
			c.record(fmt.Sprintf("%s, %d host thread(s) at once, per thread", loop.name, n), "", "ns",
				"the same: each thread's own time per iteration, mean over threads", own)
		}
	}
	return nil
}

// threadedSpan is one thread's timed region.
type threadedSpan struct {
	start, end time.Duration
	err        error
}

// threadedRound runs one round of loop on n threads and returns the
// aggregate and the per-thread time per iteration in ns.
func (c *calibrator) threadedRound(h device.Host, loop threadedLoop, n int) (agg, own float64, err error) {
	done := h.NewQueue("threaded done")
	c.threadedToken = h.NewQueue("threaded token")
	c.threadedToken.Put(struct{}{})
	rel := newThreadRelease(h, "threaded", n, func(h device.Host, w int, rel *threadRelease) error {
		s, err := h.NewStream(device.StreamOptions{})
		if err != nil {
			rel.Ready(err)
			return err
		}
		iter, cleanup, err := loop.prepare(c, h, s)
		if err == nil {
			err = iter() // loads the function and warms the thread's path
		}
		rel.Ready(err)
		if err != nil {
			return errors.Join(err, h.Destroy(s))
		}
		if !rel.Wait(h, w) {
			return errors.New("start queue closed")
		}
		sp := threadedSpan{start: h.Now()}
		for i := 0; i < loop.iterations && sp.err == nil; i++ {
			sp.err = iter()
		}
		sp.end = h.Now()
		if cleanup != nil {
			sp.err = errors.Join(sp.err, cleanup())
		}
		sp.err = errors.Join(sp.err, h.Destroy(s))
		done.Put(sp)
		return nil
	})
	t0, err := rel.Release(h)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	var last time.Duration
	var sum float64
	for range n {
		v, ok := h.Get(done)
		if !ok {
			return 0, 0, errors.New("done queue closed")
		}
		sp := v.(threadedSpan)
		errs = append(errs, sp.err)
		last = max(last, sp.end)
		sum += ns(sp.end-sp.start) / float64(loop.iterations)
	}
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	return ns(last-t0) / float64(n*loop.iterations), sum / float64(n), nil
}
