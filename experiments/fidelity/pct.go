package fidelity

import (
	"encoding/json"
	"fmt"
	"math"
)

// Pct is a percentage. JSON carries it rounded to 0.01 and NaN (nothing
// to measure) as null.
type Pct float64

// MarshalJSON writes the rounded value, or null for NaN and infinities.
func (p Pct) MarshalJSON() ([]byte, error) {
	x := float64(p)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(math.Round(x*100) / 100)
}

// UnmarshalJSON reads a number, or null as NaN.
func (p *Pct) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*p = Pct(math.NaN())
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return fmt.Errorf("percentage: %w", err)
	}
	*p = Pct(x)
	return nil
}

// Valid reports whether there is a value (not NaN).
func (p Pct) Valid() bool { return !math.IsNaN(float64(p)) && !math.IsInf(float64(p), 0) }

// String is the value with one decimal and a percent sign, or "-".
func (p Pct) String() string {
	if !p.Valid() {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", float64(p))
}
