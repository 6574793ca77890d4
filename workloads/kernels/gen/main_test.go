package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseResources(t *testing.T) {
	report := `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'b_kernel' for 'sm_90'
ptxas info    : Function properties for b_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, 4096 bytes smem, 376 bytes cmem[0]
ptxas info    : Compiling entry function 'a_kernel' for 'sm_90'
ptxas info    : Function properties for a_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 11 registers
`
	ks, err := parseResources("x.cu", []byte(report))
	require.NoError(t, err)
	assert.Equal(t, []kernel{{Name: "a_kernel", Regs: 11}, {Name: "b_kernel", Regs: 32, StaticShared: 4096}}, ks)
}

func TestParseResourcesErrors(t *testing.T) {
	tests := []struct{ name, report, want string }{
		{"mangled", "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'\nptxas info    : Used 8 registers\n", `not extern "C"`},
		{"none", "ptxas info    : 0 bytes gmem\n", "no __global__ functions"},
		{"no registers", "ptxas info    : Compiling entry function 'k' for 'sm_90'\n", "no register count for kernel k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseResources("x.cu", []byte(tc.report))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
