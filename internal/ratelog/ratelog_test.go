package ratelog

import (
	"fmt"
	"testing"
	"time"
)

func TestEachCauseAtMostOncePerInterval(t *testing.T) {
	var lines []string
	l := New(func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }, time.Hour)
	for i := range 100000 {
		l.Printf("bad signature", "dropped message %d: bad signature", i)
	}
	l.Printf("bad json", "dropped: bad JSON")
	if len(lines) != 2 || lines[0] != "dropped message 0: bad signature" || lines[1] != "dropped: bad JSON" {
		t.Fatalf("lines %q, want the first of each cause", lines)
	}

	// Once the interval has passed, the next line says how many it left out.
	l.causes["bad signature"].last = time.Now().Add(-2 * time.Hour)
	l.Printf("bad signature", "dropped message %d: bad signature", 100000)
	if want := "dropped message 100000: bad signature (and 99999 more like it since the last such line)"; lines[2] != want {
		t.Errorf("line %q, want %q", lines[2], want)
	}
}
