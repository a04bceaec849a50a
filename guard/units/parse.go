package units

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// multipliers maps each accepted suffix, lower-cased, to its size.
var multipliers = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// SizeHelp says what ParseSize accepts, for error messages and flag help.
const SizeHelp = "bytes (4294967296) or a number with K, M, G or T (4GiB, 512MiB, 1.5G, 2048M; every suffix is a power of 1024)"

var errNotASize = errors.New("not a size; use " + SizeHelp)

// ParseSize reads a size such as "4GiB", "1.5G", "512 mb" or "4294967296".
// Suffixes are case-insensitive powers of 1024 (see the package comment);
// fractions are rounded to the nearest byte.
func ParseSize(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	end := strings.LastIndexAny(s, "0123456789.") + 1
	number, suffix := s[:end], strings.ToLower(strings.TrimSpace(s[end:]))
	unit, ok := multipliers[suffix]
	if !ok || !isDecimal(number) {
		return 0, errNotASize
	}
	if n, err := strconv.ParseUint(number, 10, 64); err == nil {
		if n > math.MaxUint64/unit {
			return 0, errors.New("too large a size")
		}
		return n * unit, nil
	}
	f, err := strconv.ParseFloat(number, 64)
	if err != nil {
		return 0, errNotASize
	}
	bytes := math.Round(f * float64(unit))
	if bytes >= math.MaxUint64 {
		return 0, errors.New("too large a size")
	}
	return uint64(bytes), nil
}

// isDecimal accepts digits with at most one point, and nothing ParseFloat
// would also take: signs, exponents, "Inf", "NaN".
func isDecimal(s string) bool {
	return s != "" && s != "." && strings.Trim(s, "0123456789.") == "" && strings.Count(s, ".") <= 1
}
