package pipeline

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/sched"
	"github.com/gpusched/gpusched/workloads"
	"github.com/gpusched/gpusched/workloads/jobs"
)

// runChunkGraph runs c on p as the runner does (through a batchTracker)
// and returns the metrics, the races and what the tracker saw.
func runChunkGraph(t *testing.T, p *workloads.Program, c *ChunkGraph) (map[string]float64, []device.Race, *trackState) {
	t.Helper()
	var tr *batchTracker
	m, races := runWrapped(t, p, c, func(h device.Host) device.Host {
		tr = newTracker(h, p)
		return tr
	})
	return m, races, tr.st
}

// chunkCoverage counts, per job, the copy nodes of the one captured graph
// whose host range starts at a job's slot and ends at a job's slot, in and
// out, and returns the host ranges of the copies in, in capture order.
func chunkCoverage(t *testing.T, tr *trackState) (in, out []int, ranges [][2]int64) {
	t.Helper()
	require.Len(t, tr.graphs, 1, "one graph")
	in, out = make([]int, len(tr.in)), make([]int, len(tr.out))
	for _, nodes := range tr.graphs {
		for _, n := range nodes {
			if !n.copy || n.c.Kind == device.DeviceToDevice {
				continue
			}
			kind := int64(n.c.Kind)
			lo, ok1 := tr.first[[2]int64{kind, n.c.HostOff}]
			hi, ok2 := tr.last[[2]int64{kind, n.c.HostOff + n.c.Bytes}]
			require.True(t, ok1 && ok2, "copy %s [%d, %d) starts and ends at job slots", n.c.Kind, n.c.HostOff, n.c.HostOff+n.c.Bytes)
			count := in
			if n.c.Kind == device.DeviceToHost {
				count = out
			} else {
				ranges = append(ranges, [2]int64{n.c.HostOff, n.c.HostOff + n.c.Bytes})
			}
			for j := lo; j <= hi; j++ {
				count[j]++
			}
		}
	}
	return in, out, ranges
}

func newChunkGraph(t *testing.T, j, lanes int) *ChunkGraph {
	t.Helper()
	c, err := NewChunkGraph(j, lanes)
	require.NoError(t, err)
	return c
}

// TestChunkGraphRunsEveryWorkloadWithoutRaces: every job workload, chunks
// with a short tail, fewer lanes than a chunk's jobs and as many: one
// graph launched once, race-free, every job copied in and out by exactly
// one coalesced copy each way, as many nodes as chunks x host copies plus
// jobs x kernels.
func TestChunkGraphRunsEveryWorkloadWithoutRaces(t *testing.T) {
	const n = 29
	for _, w := range testWorkloads(t, n) {
		for _, c := range [][2]int{{4, 2}, {8, 8}} {
			s := newChunkGraph(t, c[0], c[1])
			t.Run(w.Program.Name+"/"+s.Name(), func(t *testing.T) {
				m, races, tr := runChunkGraph(t, w.Program, s)
				assert.Empty(t, races, "jobs have disjoint slots; each job's kernels wait for its chunk's copy-in, each copy-out for its chunk's jobs")
				assert.Equal(t, 1, tr.launches, "the whole program is one graph launch")
				in, out, _ := chunkCoverage(t, tr)
				for j := 0; j < n; j++ {
					assert.Equal(t, 1, in[j], "job %d copied in once", j)
					assert.Equal(t, 1, out[j], "job %d copied out once", j)
				}
				chunks := (n + c[0] - 1) / c[0]
				assert.Equal(t, float64(chunks), m["chunks"])
				assert.Equal(t, float64(chunks*hostCopies(w.Program)+n*tr.kernels), m["graph_nodes"])
			})
		}
	}
}

// TestChunkGraphHandLayout: 10 jobs of the hand program (copy in 256
// bytes, one kernel, copy out), chunks of 4 over 3 lanes. By hand: chunks
// of jobs 0-3, 4-7, 8-9, so 3 x 2 coalesced copies and 10 kernels; the
// copies in cover host bytes [0, 1024), [1024, 2048), [2048, 2560) in that
// order; job i of a chunk goes to lane i mod 3, so the lanes get jobs 0
// and 3 / 1 / 2 of each full chunk and jobs 0 / 1 of the tail: 2+2+1,
// 1+1+1 and 1+1 kernels.
func TestChunkGraphHandLayout(t *testing.T) {
	p := stridedProgram(10, func(j int) int64 { return int64(j) * 256 }, nil)
	s := newChunkGraph(t, 4, 3)
	m, races, tr := runChunkGraph(t, p, s)
	assert.Empty(t, races)
	_, _, ranges := chunkCoverage(t, tr)
	assert.Equal(t, [][2]int64{{0, 1024}, {1024, 2048}, {2048, 2560}}, ranges)
	require.Len(t, tr.captured, 1)
	assert.Equal(t, 6, tr.captured[0].copies)
	assert.Equal(t, 10, tr.captured[0].launches)
	assert.Equal(t, []int{5, 3, 2}, tr.captured[0].perStream)
	assert.Equal(t, 16.0, m["graph_nodes"])
	assert.Equal(t, []int64{256, 256}, s.batch.stride)
}

// TestChunkGraphPipelines: on the simulated H100, chunk-graph overlaps a
// chunk's copies with other chunks' work, so it runs a copy-heavy
// pipeline faster than the same chunks in one chain (one lane is not
// enough to serialize chunks: copies in run ahead on their own lane).
// Measured against the sum of its parts: the same program with one chunk
// (every job in one coalesced copy each way, so no overlap at all) is
// slower.
func TestChunkGraphPipelines(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 32, Size: 256}, 1)
	require.NoError(t, err)
	makespan := func(s *ChunkGraph) int64 {
		var d int64
		_, err := onBound(t, w.Program, func(h device.Host, in *workloads.Instance) error {
			if err := s.Prepare(h, in); err != nil {
				return err
			}
			if err := sched.Warm(h, s, in); err != nil {
				return err
			}
			t0 := h.Now()
			if err := s.Run(h, in); err != nil {
				return err
			}
			d = int64(h.Now() - t0)
			return s.Cleanup(h)
		})
		require.NoError(t, err)
		return d
	}
	pipelined, whole := makespan(newChunkGraph(t, 4, 4)), makespan(newChunkGraph(t, 32, 4))
	assert.Less(t, pipelined, whole, "8 chunks overlap copies in, kernels and copies out; one chunk cannot")
}

// TestRaceCheckerCatchesUnsafeChunkGraphs: kernels that do not wait for
// their chunk's copy-in read their inputs while they are written.
func TestRaceCheckerCatchesUnsafeChunkGraphs(t *testing.T) {
	w, err := jobs.Sobel(jobs.SobelParams{Jobs: 16, Size: 256}, 1)
	require.NoError(t, err)
	_, races := runOn(t, w.Program, newChunkGraph(t, 4, 4))
	require.Empty(t, races)
	s := newChunkGraph(t, 4, 4)
	s.skipInWait = true
	_, races = runOn(t, w.Program, s)
	assert.NotEmpty(t, races, "kernels racing their chunk's copy-in")
}

func TestChunkGraphBadInput(t *testing.T) {
	for _, tt := range []struct {
		j, lanes int
		want     string
	}{
		{1, 4, "chunk-graph: j is 1; a chunk holds from 2 to 32 jobs"},
		{33, 4, "chunk-graph: j is 33"},
		{8, 0, "chunk-graph: lanes is 0; it must be between 1 and 32"},
	} {
		_, err := NewChunkGraph(tt.j, tt.lanes)
		assert.ErrorContains(t, err, tt.want)
	}
	p := stridedProgram(4, func(j int) int64 { return []int64{0, 256, 768, 512}[j] }, nil)
	s := newChunkGraph(t, 2, 2)
	_, err := onBound(t, p, func(h device.Host, in *workloads.Instance) error {
		return errors.Join(s.Prepare(h, in), s.Cleanup(h))
	})
	assert.ErrorContains(t, err, "need every host copy evenly strided over the jobs; hand's operation 0 (in2) is not")
	assert.Equal(t, "chunk-graph(J=8,lanes=16)", newChunkGraph(t, 8, 16).Name())
	assert.Equal(t, []sched.Trait{sched.TraitJobs}, s.Needs())
}
