package mutate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/internal/mutate"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
)

var kern = &device.Kernel{Module: "test", Name: "k", Regs: 32}

// chain is a program of long kernels where op i+1 reads what op i wrote:
// round-robin over two streams must order each by an event wait.
func chain(n int) *workloads.Program {
	p := &workloads.Program{Name: "chain"}
	for i := 0; i <= n; i++ {
		p.Buffers = append(p.Buffers, workloads.BufferSpec{Name: "b", Bytes: 4096})
	}
	var ops []workloads.Op
	for i := 0; i < n; i++ {
		ops = append(ops, workloads.Op{Name: "k", Kernel: kern, Grid: device.D1(4), Block: device.D1(128),
			Args: []workloads.ArgSpec{workloads.BufArg(i, device.Read), workloads.BufArg(i+1, device.Write)},
			Work: device.Work{Cycles: 1e6}})
	}
	p.Steps = []workloads.Step{{Ops: ops}}
	return p
}

func run(t *testing.T, d *sim.Device, s sched.Scheduler) int {
	t.Helper()
	err := d.Run(func(h device.Host) error {
		in, err := workloads.Bind(h, chain(6))
		if err != nil {
			return err
		}
		defer func() { assert.NoError(t, in.Release(h)) }()
		return s.Run(h, in)
	})
	require.NoError(t, err)
	return len(d.Races())
}

func TestDropWaitOnChain(t *testing.T) {
	d, err := sim.NewNamed("h100")
	require.NoError(t, err)
	rr, _ := sched.NewRoundRobin(2)
	probe, err := mutate.New(rr, mutate.DropWait, -1)
	require.NoError(t, err)
	require.Zero(t, run(t, d, probe), "the probe must not change the schedule")
	sites := probe.Sites()
	require.Len(t, sites, 5, "every one of the 5 cross-stream waits of a chain matters")
	for _, site := range sites {
		rr, _ := sched.NewRoundRobin(2)
		m, _ := mutate.New(rr, mutate.DropWait, site)
		assert.Positive(t, run(t, d, m), "dropping wait %d must race", site)
		assert.Equal(t, 1, m.Applied())
		assert.Contains(t, m.Detail(), "no longer waits")
	}
}

func TestKindsAndErrors(t *testing.T) {
	for _, k := range mutate.Kinds {
		got, err := mutate.ParseKind(string(k))
		require.NoError(t, err)
		assert.Equal(t, k, got)
		assert.NotEqual(t, string(k), k.Describe())
	}
	_, err := mutate.ParseKind("drop-everything")
	assert.ErrorContains(t, err, `unknown mutation "drop-everything"`)
	_, err = mutate.New(nil, mutate.DropWait, 0)
	assert.Error(t, err)
}

func TestSharedStreamOnChain(t *testing.T) {
	d, err := sim.NewNamed("h100")
	require.NoError(t, err)
	probe, _ := mutate.New(sched.NewSerial(), mutate.SharedStream, -1)
	require.Zero(t, run(t, d, probe))
	sites := probe.Sites()
	require.NotEmpty(t, sites, "serial relies on stream order for every dependency of a chain")
	m, _ := mutate.New(sched.NewSerial(), mutate.SharedStream, sites[0])
	assert.Positive(t, run(t, d, m))
}
