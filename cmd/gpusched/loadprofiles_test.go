package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadProfiles keeps the files' order and names a file it cannot load.
func TestLoadProfilesKeepsOrder(t *testing.T) {
	h100, h200 := "../../configs/profiles/h100.yaml", "../../configs/profiles/h200.yaml"
	profs, err := loadProfiles([]string{h200, h100})
	require.NoError(t, err)
	require.Len(t, profs, 2)
	assert.Contains(t, profs[0].Device, "H200")
	assert.Contains(t, profs[1].Device, "H100")
	_, err = loadProfiles([]string{h100, filepath.Join(t.TempDir(), "missing.yaml")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.yaml")
}
