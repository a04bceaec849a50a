package config

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// Spec is an amount of memory given either as a size or as a share of a
// size known later: the detected limit for the budget, the budget for the
// warn and pause thresholds.
type Spec struct {
	Percent float64 // in (0, 100]; 0 means the spec is Bytes
	Bytes   uint64
}

// ParseSpec reads "80%", "12.5 %" or a size units.ParseSize accepts. Shares
// above 100% and amounts of zero are refused: neither can be a budget or a
// threshold inside one.
func ParseSpec(s string) (Spec, error) {
	if number, ok := strings.CutSuffix(strings.TrimSpace(s), "%"); ok {
		p, err := strconv.ParseFloat(strings.TrimSpace(number), 64)
		switch {
		case err != nil || math.IsNaN(p) || math.IsInf(p, 0):
			return Spec{}, errors.New("not a percentage; use a share such as 80%")
		case p <= 0:
			return Spec{}, errors.New("a share must be above 0%")
		case p > 100:
			return Spec{}, errors.New("above 100%; a share must be at most 100%")
		}
		return Spec{Percent: p}, nil
	}
	n, err := units.ParseSize(s)
	if err != nil {
		return Spec{}, errors.New("not a size or a percentage; use a share (80%) or " + units.SizeHelp)
	}
	if n == 0 {
		return Spec{}, errors.New("a size of 0 leaves no memory; use a share (80%) or a size such as 4GiB")
	}
	return Spec{Bytes: n}, nil
}

// Of is the spec in bytes, given the size a share is taken of.
func (s Spec) Of(whole uint64) uint64 {
	if s.Percent == 0 {
		return s.Bytes
	}
	return uint64(math.Round(float64(whole) * s.Percent / 100))
}

// String writes the spec as a user would: "80%" or "4 GiB".
func (s Spec) String() string {
	if s.Percent == 0 {
		return units.FormatBytes(s.Bytes)
	}
	return strconv.FormatFloat(s.Percent, 'f', -1, 64) + "%"
}
