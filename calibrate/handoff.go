package calibrate

import (
	"errors"
	"time"

	"github.com/gpusched/gpusched/device"
)

const handoffExchanges = 50

// handoff measures how long a host thread blocked in a Queue Get takes to
// resume when another host thread Puts (ping-pong between two threads:
// two hand-offs per exchange), and when a host callback Puts behind a
// kernel (ACS-SW's and SET's threaded variants wait this way).
func (c *calibrator) handoff(h device.Host) error {
	ping, pong := startPong(h, "")
	var hand []float64
	if err := c.warmRounds(func(measured bool) error {
		t0 := h.Now()
		for i := 0; i < handoffExchanges; i++ {
			ping.Put(i)
			if _, ok := h.Get(pong); !ok {
				return errors.New("pong queue closed")
			}
		}
		if measured {
			hand = append(hand, ns(h.Now()-t0)/(2*handoffExchanges))
		}
		return nil
	}); err != nil {
		return err
	}
	ping.Close()
	c.record("queue hand-off between host threads", "host.handoff_ns", "ns",
		"Host.Now around 50 ping-pong exchanges of two host threads over two queues, per hand-off (half an exchange)", hand)
	return c.callbackWake(h)
}

// startPong starts a host thread that Puts every value of ping to pong
// until ping is closed (named by what, for traces).
func startPong(h device.Host, what string) (ping, pong device.Queue) {
	ping, pong = h.NewQueue(what+"ping"), h.NewQueue(what+"pong")
	h.Go("calibrate "+what+"pong", func(h device.Host) error {
		for {
			v, ok := h.Get(ping)
			if !ok {
				return nil
			}
			pong.Put(v)
		}
	})
	return ping, pong
}

// callbackWake: a kernel of known duration, then a host function that
// Puts to a queue the host thread waits on in Get. The host time from
// the launch to the Get's return, less the launch and host-function
// calls, the launch latency, the kernel and the callback's own duration,
// is the hand-off from the driver's callback thread.
func (c *calibrator) callbackWake(h device.Host) error {
	t, err := newTimedStream(h)
	if err != nil {
		return err
	}
	q := h.NewQueue("callback")
	put := func() { q.Put(struct{}{}) }
	spin := c.spinLaunch(wakeD, t.done)
	var wake []float64
	if err := c.warmRounds(func(measured bool) error {
		d, err := kernelThenCallback(h, t.s, spin, q, put)
		if err != nil {
			return err
		}
		if measured {
			wake = append(wake, ns(d)-c.launchNs-c.latencyNs-ns(wakeD)-c.callbackNs)
		}
		return nil
	}); err != nil {
		return err
	}
	c.record("callback to host thread hand-off", "host.callback_handoff_ns", "ns",
		"Host.Now from launching a 50 us spin kernel and a host function that Puts to a queue to the Get's return, "+
			"less launch cost, latency, 50 us and the callback duration", wake)
	return h.StreamSynchronize(t.s)
}

// kernelThenCallback launches l on s, then a host function that runs put
// (a Put to q), and waits for it in Get: the host time from before the
// launch to the Get's return.
func kernelThenCallback(h device.Host, s device.Stream, l *device.Launch, q device.Queue, put func()) (time.Duration, error) {
	return hostFuncHandoff(h, s, q, put, func() error { return h.Launch(s, l) }, nil)
}

// hostFuncHandoff issues head on s (nil: nothing), then a host function
// that runs put (a Put to q), then behind (nil: nothing), and waits for the
// Put in Get: the host time from before head to the Get's return.
func hostFuncHandoff(h device.Host, s device.Stream, q device.Queue, put func(), head, behind func() error) (time.Duration, error) {
	t0 := h.Now()
	if head != nil {
		if err := head(); err != nil {
			return 0, err
		}
	}
	if err := h.HostFunc(s, put); err != nil {
		return 0, err
	}
	if behind != nil {
		if err := behind(); err != nil {
			return 0, err
		}
	}
	if _, ok := h.Get(q); !ok {
		return 0, errors.New("callback queue closed")
	}
	return h.Now() - t0, nil
}
