package tournament

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSignedPctWritesTiesAsPlusZero(t *testing.T) {
	assert.Equal(t, "+0.0%", signedPct(-0.0003), "a loss that rounds to zero is a tie")
	assert.Equal(t, "+0.0%", signedPct(0))
	assert.Equal(t, "-1.2%", signedPct(-0.012))
	assert.Equal(t, "+58.0%", signedPct(0.58))
}
