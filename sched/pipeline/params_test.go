package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParams checks how Params become a SET: depth follows ring unless
// given, and bad combinations are refused by name.
func TestParams(t *testing.T) {
	ptr := func(n int) *int { return &n }
	tests := []struct {
		name    string
		set     func(p *Params)
		want    string
		wantErr string
	}{
		{"the paper's SET", func(p *Params) {}, "set(b=4,warm)", ""},
		{"cold", func(p *Params) { p.Warm = false }, "set(b=4)", ""},
		{"depth follows ring", func(p *Params) { p.Ring = 3 }, "set(b=4,depth=3,ring=3,warm)", ""},
		{"depth below ring", func(p *Params) { p.Workers, p.Ring, p.Depth, p.Coalesce = 2, 4, ptr(2), 2 }, "set(b=2,depth=2,ring=4,coalesce=2,warm)", ""},
		{"threaded coalesced", func(p *Params) { p.Workers, p.Ring, p.Threaded, p.Coalesce = 8, 4, true, 4 }, "set(b=8,depth=4,ring=4,threaded,coalesce=4,warm)", ""},
		{"chain", func(p *Params) { p.Ring, p.Threaded, p.JobsPerLaunch = 2, true, 4 }, "set(b=4,depth=2,ring=2,threaded,jobs=4,warm)", ""},
		{"batched", func(p *Params) { p.Workers, p.Ring, p.JobsPerLaunch, p.Copies = 2, 1, 16, CopiesBatched }, "set(b=2,ring=1,jobs=16,copies=batched,warm)", ""},
		{"batched branches warm", func(p *Params) {
			p.Workers, p.Ring, p.JobsPerLaunch, p.Copies, p.Branches, p.Warm = 2, 2, 16, CopiesBatched, 4, true
		}, "set(b=2,depth=2,ring=2,jobs=16,copies=batched,branches=4,warm)", ""},
		{"kgraph", func(p *Params) { p.Depth, p.Threaded, p.Coalesce, p.Copies = ptr(4), true, 2, CopiesStream }, "set(b=4,depth=4,threaded,coalesce=2,copies=stream,warm)", ""},
		{"no workers", func(p *Params) { p.Workers = 0 }, "", "workers (b) must be between 1 and 64, got 0"},
		{"too deep", func(p *Params) { p.Depth = ptr(9) }, "", "depth (jobs in flight per worker) must be between 1 and 8, got 9"},
		{"no depth", func(p *Params) { p.Depth = ptr(0) }, "", "depth (jobs in flight per worker) must be between 1 and 8, got 0"},
		{"negative ring", func(p *Params) { p.Ring = -1 }, "", "ring is -1; it must be between 0 (off) and 8"},
		{"ring too long", func(p *Params) { p.Ring = 9 }, "", "ring is 9; it must be between 0 (off) and 8"},
		{"depth beyond ring", func(p *Params) { p.Ring, p.Depth = 2, ptr(3) }, "", "depth is 3 but ring is 2"},
		{"coalesce beyond depth", func(p *Params) { p.Ring, p.Coalesce = 2, 3 }, "", "coalesce is 3; it must be between 1 and depth (2)"},
		{"coalesce with one dispatcher", func(p *Params) { p.Depth, p.Coalesce = ptr(2), 2 }, "", "above 1 only with threaded: true or a ring"},
		{"coalesce zero", func(p *Params) { p.Coalesce = 0 }, "", "coalesce is 0"},
		{"no jobs per launch", func(p *Params) { p.Ring, p.JobsPerLaunch = 2, 0 }, "", "jobs_per_launch is 0; it must be between 1 and 32"},
		{"too many jobs per launch", func(p *Params) { p.Ring, p.JobsPerLaunch = 2, 33 }, "", "jobs_per_launch is 33; it must be between 1 and 32"},
		{"a chain without a ring", func(p *Params) { p.JobsPerLaunch = 4 }, "", "jobs_per_launch is 4 but ring is 0"},
		{"unknown copies", func(p *Params) { p.Copies = "host" }, "", `copies is "host"; it must be graph`},
		{"stream copies with a ring", func(p *Params) { p.Ring, p.Copies = 2, CopiesStream }, "", "copies is stream but ring is 2"},
		{"batched without a chunk", func(p *Params) { p.Ring, p.Copies = 2, CopiesBatched }, "", "copies is batched but ring is 2 and jobs_per_launch 1"},
		{"batched without a ring", func(p *Params) { p.JobsPerLaunch, p.Copies = 8, CopiesBatched }, "", "jobs_per_launch is 8 but ring is 0"},
		{"branches beyond a chunk", func(p *Params) { p.Ring, p.JobsPerLaunch, p.Copies, p.Branches = 2, 16, CopiesBatched, 17 }, "",
			"branches is 17; it spreads a chunk's jobs (copies: batched) over that many parallel graph branches, from 1 (one chain) to jobs_per_launch (16"},
		{"negative branches", func(p *Params) { p.Ring, p.JobsPerLaunch, p.Copies, p.Branches = 2, 16, CopiesBatched, -1 }, "", "branches is -1"},
		{"branches without batched copies", func(p *Params) { p.Ring, p.JobsPerLaunch, p.Branches = 2, 16, 4 }, "", "branches is 4; it spreads a chunk's jobs (copies: batched)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(with(DefaultParams(), tt.set))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.Name())
			require.NotNil(t, s.Params().Depth, "Depth is resolved")
			assert.Positive(t, *s.Params().Depth)
		})
	}
}
