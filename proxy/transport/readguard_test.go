package transport

import (
	"encoding/binary"
	"strings"
	"testing"
)

func TestFrameGuardPassesFramesAndRefusesHugeOnes(t *testing.T) {
	stream := make([]byte, greetingLen)
	stream = append(stream, flagMore, 3, 'a', 'b', 'c') // short frame
	long := make([]byte, 9)
	long[0] = flagLong
	binary.BigEndian.PutUint64(long[1:], 300)
	stream = append(stream, long...)
	stream = append(stream, make([]byte, 300)...)
	g := newFrameGuard()
	for i := range stream { // byte by byte: any split of the stream must do
		if err := g.scan(stream[i : i+1]); err != nil {
			t.Fatalf("byte %d: %v", i, err)
		}
	}
	if g.state != inFlags {
		t.Fatalf("state %d after whole frames, want flags", g.state)
	}
	binary.BigEndian.PutUint64(long[1:], 1<<62)
	if err := g.scan(long); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("a 2^62-byte frame passed: %v", err)
	}
}
