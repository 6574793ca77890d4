package sim

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
)

// TestRandomProgramsKeepStreamAndEventOrder issues random mixes of kernels,
// copies, records, waits, callbacks and synchronizations over several
// streams and host threads, and checks what the stream model guarantees:
// commands of one stream never overlap and run in issue order, and a
// kernel issued after a wait on an event starts after the kernel the event
// was recorded behind. It also checks that every run is repeatable.
func TestRandomProgramsKeepStreamAndEventOrder(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			type dep struct{ before, after string }
			var deps []dep
			var order [][]string // per stream, kernel labels in issue order
			prog := func(h device.Host) error {
				rng := rand.New(rand.NewSource(seed))
				deps, order = nil, nil
				nStreams := 2 + rng.Intn(10)
				var ss []device.Stream
				last := map[int]string{} // last kernel issued per stream
				for i := 0; i < nStreams; i++ {
					s, err := h.NewStream(device.StreamOptions{Priority: -rng.Intn(3)})
					require.NoError(t, err)
					ss = append(ss, s)
					order = append(order, nil)
				}
				type rec struct {
					ev     device.Event
					behind string
				}
				var recs []rec
				pendingDep := map[int]string{}
				buf, _ := h.Malloc(1 << 20)
				hm, _ := h.AllocHost(1<<20, true)
				q := h.NewQueue("cb")
				callbacks := 0
				for op := 0; op < 300; op++ {
					si := rng.Intn(nStreams)
					s := ss[si]
					switch r := rng.Intn(100); {
					case r < 55:
						label := fmt.Sprintf("k%d", op)
						l := spinLaunch(1+rng.Intn(600), 32*(1+rng.Intn(32)), time.Duration(1+rng.Intn(30))*time.Microsecond)
						l.Label = label
						if err := h.Launch(s, l); err != nil {
							return err
						}
						if b, ok := pendingDep[si]; ok && b != "" {
							deps = append(deps, dep{b, label})
						}
						delete(pendingDep, si)
						last[si] = label
						order[si] = append(order[si], label)
					case r < 65:
						e, _ := h.NewEvent(device.EventOptions{})
						if err := h.Record(e, s); err != nil {
							return err
						}
						recs = append(recs, rec{e, last[si]})
					case r < 78 && len(recs) > 0:
						rc := recs[rng.Intn(len(recs))]
						if err := h.Wait(s, rc.ev); err != nil {
							return err
						}
						if _, ok := pendingDep[si]; !ok {
							pendingDep[si] = rc.behind
						}
					case r < 85:
						kind := device.HostToDevice
						c := &device.Copy{Kind: kind, Dst: buf, Host: hm, Bytes: int64(1 + rng.Intn(1<<20))}
						if rng.Intn(2) == 0 {
							c = &device.Copy{Kind: device.DeviceToHost, Src: buf, Host: hm, Bytes: c.Bytes}
						}
						if err := h.Copy(s, c); err != nil {
							return err
						}
					case r < 90:
						callbacks++
						if err := h.HostFunc(s, func() { q.Put(1) }); err != nil {
							return err
						}
					case r < 95:
						if err := h.StreamSynchronize(s); err != nil {
							return err
						}
					default:
						if _, err := h.StreamQuery(s); err != nil {
							return err
						}
					}
				}
				for i := 0; i < callbacks; i++ {
					if _, ok := h.Get(q); !ok {
						return fmt.Errorf("queue closed")
					}
				}
				return h.Synchronize()
			}
			var first string
			for rep := 0; rep < 2; rep++ {
				d := newH100(t, WithTrace(true), WithHardwareQueues(1+int(seed)%8))
				require.NoError(t, d.Run(prog))
				spans := map[string][2]Time{}
				for _, s := range d.lastTrace.spans {
					if s.kind == trackStream {
						spans[s.name] = [2]Time{s.start, s.end}
					}
				}
				for si, labels := range order {
					for i := 1; i < len(labels); i++ {
						a, b := spans[labels[i-1]], spans[labels[i]]
						assert.LessOrEqual(t, a[1], b[0], "stream %d: %s then %s", si, labels[i-1], labels[i])
					}
				}
				for _, dp := range deps {
					assert.LessOrEqual(t, spans[dp.before][1], spans[dp.after][0], "%s waits on an event behind %s", dp.after, dp.before)
				}
				tr := traceOf(t, d)
				if rep == 0 {
					first = tr
				} else {
					assert.Equal(t, first, tr, "repeatable")
				}
			}
		})
	}
}
