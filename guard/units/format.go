package units

import (
	"strconv"
	"strings"
)

// names are the binary units FormatBytes picks from, one per power of 1024.
var names = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// FormatBytes writes n in the largest unit that keeps it at 1 or more, to
// three significant digits ("1.95 GiB", "11.3 GiB", "1.5 KiB"), none from 100 up ("512 MiB",
// "900 KiB"), and none when the decimal is zero ("4 GiB").
func FormatBytes(n uint64) string {
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	value := float64(n)
	unit := 0
	for value >= 1024 && unit < len(names)-1 {
		value /= 1024
		unit++
	}
	text := round(value)
	// 1023.96 MiB rounds to "1024": say "1 GiB" instead.
	if text == "1024" && unit < len(names)-1 {
		text, unit = "1", unit+1
	}
	return text + " " + names[unit]
}

// round keeps three significant digits (two decimals below 10, one below
// 100) and drops trailing zeros: near a 2 GiB limit, lines at 1.9 and
// 1.95 GiB must not both read "2 GiB".
func round(v float64) string {
	decimals := 0
	switch {
	case v < 9.995:
		decimals = 2
	case v < 99.95:
		decimals = 1
	}
	text := strconv.FormatFloat(v, 'f', decimals, 64)
	if decimals > 0 {
		text = strings.TrimRight(strings.TrimRight(text, "0"), ".")
	}
	return text
}
