package diagnosis

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrapKeepsLinesShort(t *testing.T) {
	text := strings.Repeat("word ", 60) + "a-very-long-path/" + strings.Repeat("x", 90)
	lines := wrap(text, "  - ", "    ")
	for i, l := range lines[:len(lines)-1] {
		if utf8.RuneCountInString(l) > lineWidth {
			t.Errorf("line %d is %d long: %q", i, len(l), l)
		}
	}
	if !strings.HasPrefix(lines[0], "  - word") || !strings.HasPrefix(lines[1], "    word") {
		t.Errorf("indents: %q", lines[:2])
	}
	if strings.Join(strings.Fields(strings.Join(lines, " ")), " ") != strings.Join(strings.Fields("- "+text), " ") {
		t.Error("wrap lost or changed words")
	}
}
