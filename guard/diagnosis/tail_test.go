package diagnosis

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestTailKeepsTheLastLines(t *testing.T) {
	tail := NewTail(32, 3)
	io.WriteString(tail, "first line that will be cut\nsecond\nthird\n")
	io.WriteString(tail, "fourth\nfif")
	io.WriteString(tail, "th")
	// 32 bytes keep "…cut\nsecond\nthird\nfourth\nfifth": the cut line goes,
	// and at most 3 lines are returned.
	if got, want := tail.Lines(), []string{"third", "fourth", "fifth"}; !slices.Equal(got, want) {
		t.Errorf("Lines() = %q, want %q", got, want)
	}
}

func TestTailBeforeWrapping(t *testing.T) {
	tail := NewTail(1024, 10)
	if got := tail.Lines(); got != nil {
		t.Errorf("empty tail: %q", got)
	}
	io.WriteString(tail, "a\r\nprogress 10%\rprogress 100%\n\xff\n")
	if got, want := tail.Lines(), []string{"a", "progress 100%", "\uFFFD"}; !slices.Equal(got, want) {
		t.Errorf("Lines() = %q, want %q", got, want)
	}
}

func TestTailWriteLargerThanTheRing(t *testing.T) {
	tail := NewTail(8, 10)
	n, err := io.WriteString(tail, "0123456789\nabcdefgh")
	if n != 19 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	io.WriteString(tail, "\nxy")
	if got, want := tail.Lines(), []string{"xy"}; !slices.Equal(got, want) {
		t.Errorf("Lines() = %q, want %q", got, want)
	}
}

// Several goroutines write whole lines at once, as the proxy's pumps do;
// the race detector checks the locking, and no line may come out torn.
func TestTailConcurrentWriters(t *testing.T) {
	tail := NewTail(4<<10, 1000)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 500 {
				fmt.Fprintf(tail, "writer %d line %d\n", w, i)
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			tail.Lines()
		}
	})
	wg.Wait()
	lines := tail.Lines()
	whole := regexp.MustCompile(`^writer \d line \d+$`)
	for _, l := range lines {
		if !whole.MatchString(l) {
			t.Fatalf("torn line %q", l)
		}
	}
	if len(lines) < 200 { // 4 KiB of lines of about 18 bytes
		t.Errorf("only %d lines kept", len(lines))
	}
	if last := strings.Join(lines, "\n"); !strings.Contains(last, "line 499") {
		t.Errorf("the last lines are missing")
	}
}

func TestTailReset(t *testing.T) {
	tail := NewTail(16, 10)
	tail.Write([]byte("start-up chatter that wraps the ring\n"))
	tail.Reset()
	tail.Write([]byte("last words\n"))
	if got := tail.Lines(); len(got) != 1 || got[0] != "last words" {
		t.Fatalf("after Reset: %q", got)
	}
}

// TestSourcesDoNotTearLines: faulthandler writes its report in pieces
// through a pipe of its own while the kernel's stderr carries the crash's
// last words; read by two goroutines, their pieces interleave. Each line
// must still come out whole, each unfinished one on its own.
func TestSourcesDoNotTearLines(t *testing.T) {
	tail := NewTail(4096, 100)
	fault, stderr := tail.Source(), tail.Source()
	fault.Write([]byte("Fatal Python error: "))
	stderr.Write([]byte("terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: device-side assert triggered\nCUDA kernel errors"))
	fault.Write([]byte("Aborted\n\nCurrent thread 0x1 (most recent call first):\n  File \"cell\""))
	want := []string{
		"terminate called after throwing an instance of 'c10::Error'",
		"  what():  CUDA error: device-side assert triggered",
		"Fatal Python error: Aborted",
		"",
		"Current thread 0x1 (most recent call first):",
		"  File \"cell\"", // the unfinished lines last, by source
		"CUDA kernel errors",
	}
	if got := tail.Lines(); !slices.Equal(got, want) {
		t.Errorf("Lines() =\n%q\nwant\n%q", got, want)
	}
	if s, ok := findTerminate(tail.Lines()); !ok || s.Message != "c10::Error: CUDA error: device-side assert triggered" {
		t.Errorf("findTerminate = %+v, %v", s, ok)
	}
	tail.Reset()
	if got := tail.Lines(); got != nil {
		t.Errorf("after Reset: %q", got)
	}
}

// TestASourceLineLongerThanTheTailIsKeptInPart: a source never holds more
// than the tail could show.
func TestASourceLineLongerThanTheTailIsKeptInPart(t *testing.T) {
	tail := NewTail(16, 10)
	s := tail.Source()
	s.Write([]byte(strings.Repeat("x", 40)))
	if len(s.partial) != 0 {
		t.Errorf("kept %d bytes unfinished in a 16-byte tail", len(s.partial))
	}
	if got := tail.Lines(); len(got) != 1 || len(got[0]) > 16 {
		t.Errorf("Lines() = %q", got)
	}
}
