package diagnosis

import (
	"strings"
	"unicode/utf8"
)

// lineWidth keeps lines readable in a terminal and in a notebook cell.
const lineWidth = 78

// wrap breaks text at spaces into lines of at most lineWidth, the first
// starting with first and the others with rest. A word longer than a line
// stays whole.
func wrap(text, first, rest string) []string {
	var lines []string
	line := first
	empty := true
	for _, w := range strings.Fields(text) {
		if !empty && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > lineWidth {
			lines = append(lines, line)
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	return append(lines, line)
}

// quote shows a line of the kernel's output as it was, indented, and
// wraps it only if it is too long.
func quote(line string) []string {
	const indent = "    "
	if utf8.RuneCountInString(indent+line) <= lineWidth {
		return []string{indent + line}
	}
	return wrap(line, indent, indent+"  ")
}

// clip shortens a quoted line of code to fit on a line with other text.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-3])) + "..."
}
