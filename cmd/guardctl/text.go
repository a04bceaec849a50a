package main

import (
	"fmt"
	"strings"
	"unicode"
)

// shown is s as guardctl prints it in a table: control characters escaped
// (\x1b, \x9b), so a cell's code or a notebook's name cannot move the
// cursor, recolour or clear the user's terminal, nor break the columns,
// and the invisible bidirectional controls named (\u202e); then clipped to
// width runes with "…". A tab is a space: it is indentation.
func shown(s string, width int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	if r := []rune(b.String()); len(r) > width {
		return string(r[:width-1]) + "…"
	}
	return b.String()
}
