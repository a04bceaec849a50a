package units

import "strconv"

// names are the binary units FormatBytes picks from, one per power of 1024.
var names = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// FormatBytes writes n in the largest unit that keeps it at 1 or more: one
// decimal below 100 ("11.3 GiB", "1.5 KiB"), none from 100 up ("512 MiB",
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

// round keeps one decimal below 100 and drops it when it is zero.
func round(v float64) string {
	if v >= 99.95 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	text := strconv.FormatFloat(v, 'f', 1, 64)
	if text[len(text)-2:] == ".0" {
		text = text[:len(text)-2]
	}
	return text
}
