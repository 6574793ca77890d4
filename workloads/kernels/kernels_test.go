package kernels

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func hexSum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Every .cu in the directory must have an image built from exactly its
// current text: a source edited without `make kernels` fails here, with no
// CUDA toolkit needed.
func TestImagesMatchSources(t *testing.T) {
	sources, err := filepath.Glob("*.cu")
	require.NoError(t, err)
	require.NotEmpty(t, sources)
	var names []string
	for _, m := range Modules() {
		names = append(names, m.Source)
		text, err := os.ReadFile(m.Source)
		require.NoError(t, err, "module %s has no source", m.Name)
		assert.Equal(t, m.SourceSHA256, hexSum(text), "%s changed since its image was built: run `make kernels`", m.Source)
		assert.Equal(t, m.ImageSHA256, hexSum(m.Image), "%s's embedded image is not the one recorded", m.Name)
		onDisk, err := os.ReadFile(m.Name + ".fatbin")
		require.NoError(t, err)
		assert.Equal(t, m.Image, onDisk)
		assert.NotEmpty(t, m.Kernels, "module %s has no kernels", m.Name)
	}
	sort.Strings(sources)
	assert.Equal(t, sources, names, "every .cu file must be a compiled module: run `make kernels`")
}

func TestDescriptors(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Modules() {
		assert.True(t, sort.SliceIsSorted(m.Kernels, func(i, j int) bool { return m.Kernels[i].Name < m.Kernels[j].Name }))
		for _, k := range m.Kernels {
			assert.Equal(t, m.Name, k.Module)
			assert.False(t, strings.HasPrefix(k.Name, "_Z"), "%s is C++-mangled", k.Name)
			assert.Positive(t, k.Regs, "%s: registers per thread", k)
			assert.GreaterOrEqual(t, k.StaticShared, 0)
			assert.False(t, seen[k.String()], "duplicate %s", k)
			seen[k.String()] = true
			got, err := Lookup(m.Name, k.Name)
			require.NoError(t, err)
			assert.Same(t, k, got)
		}
	}
	images := Images()
	assert.Len(t, images, len(Modules()))
	for _, m := range Modules() {
		assert.Equal(t, m.Image, images[m.Name])
	}
}

func TestLookupErrors(t *testing.T) {
	tests := []struct {
		module, name, want string
	}{
		{"nosuch", "k", `no module "nosuch"`},
		{"calibrate", "nosuch", `module "calibrate" has no kernel "nosuch" (it has cal_empty`},
	}
	for _, tc := range tests {
		_, err := Lookup(tc.module, tc.name)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestCalibrationKernels(t *testing.T) {
	for _, name := range []string{"cal_empty", "cal_spin"} {
		k, err := Lookup("calibrate", name)
		require.NoError(t, err)
		assert.Equal(t, "calibrate", k.Module)
	}
}
