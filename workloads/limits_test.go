package workloads

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProductAndPlus(t *testing.T) {
	s := Product(F("layers", 8), F("width", 1e9), F("steps", 4))
	assert.Equal(t, int64(32e9), s.N)
	assert.EqualError(t, s.Check("operations", MaxOps, "workloads.MaxOps"),
		"layers x width x steps = 8 x 1000000000 x 4 = 32000000000 operations, above the limit of 1048576 (workloads.MaxOps)")
	assert.NoError(t, Product(F("a", 1024), F("b", 1024)).Check("operations", MaxOps, "workloads.MaxOps"))
	over := Product(F("a", 1<<40), F("b", 1<<40))
	assert.EqualError(t, over.Check("bytes", MaxDeviceBytes, "workloads.MaxDeviceBytes"),
		"a x b = 1099511627776 x 1099511627776 overflows 64 bits as bytes, above the limit of 137438953472 (workloads.MaxDeviceBytes)")
	sum := Product(F("a", math.MaxInt64)).Plus(Product(F("b", 1)))
	assert.Error(t, sum.Check("bytes", MaxDeviceBytes, "workloads.MaxDeviceBytes"), "a sum that overflows is flagged")
	assert.Equal(t, int64(-6), Product(F("a", -2), F("b", 3)).N)
}

// FuzzProduct: Product and Plus agree with exact arithmetic on sizes: the
// result is the true one whenever it fits int64, and flagged whenever it
// does not.
func FuzzProduct(f *testing.F) {
	f.Add(int64(8), int64(1e9), int64(4), int64(0))
	f.Add(int64(1<<40), int64(1<<40), int64(1), int64(1))
	f.Add(int64(1<<62), int64(4), int64(0), int64(7))
	f.Add(int64(math.MaxInt64), int64(1), int64(1), int64(1))
	f.Fuzz(func(t *testing.T, a, b, c, d int64) {
		if a < 0 || b < 0 || c < 0 || d < 0 {
			t.Skip() // sizes are not negative (see Product)
		}
		got := Product(Factor{"a", a}, Factor{"b", b}, Factor{"c", c}).Plus(Product(Factor{"d", d}))
		want := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
		want.Mul(want, big.NewInt(c))
		overflow := !want.IsInt64()
		want.Add(want, big.NewInt(d))
		overflow = overflow || !want.IsInt64()
		if overflow {
			require.Error(t, got.Check("x", math.MaxInt64, "max"), "%d*%d*%d+%d overflows", a, b, c, d)
			return
		}
		require.Equal(t, want.Int64(), got.N, "%d*%d*%d+%d", a, b, c, d)
		require.NoError(t, got.Check("x", math.MaxInt64, "max"))
	})
}
